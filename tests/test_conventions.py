"""Review rules that are cheaper as tests than as comments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "helix"
MAX_LINES = 500
"""Modules are meant to be read in one sitting; split before this."""


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_modules_stay_small(path: Path) -> None:
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines: split it"


def test_implementation_modules_are_private() -> None:
    """Packages expose their surface through ``__init__``; files behind it are ``_name.py``."""
    public_files = {"__init__.py", "__main__.py", "_version.py", "errors.py", "py.typed"}
    for path in PACKAGE.rglob("*.py"):
        if path.parent == PACKAGE:
            continue
        assert path.name in public_files or path.name.startswith("_"), path


HEAVY = [
    "asyncpg",
    "ray",
    "anthropic",
    "openai",
    "google.genai",
    "mcp",
    "textual",
    "apprise",
    "fastapi",
    "uvicorn",
    "argon2",
    "jwt",
    "prometheus_client",
]


@pytest.mark.parametrize(
    "code",
    [
        "import helix",
        "import helix.kernel.log, helix.kernel.session",
        "import helix.providers, helix.testing",
        "import sys; sys.argv = ['helix', '--help']\n"
        "from helix.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass",
    ],
)
def test_no_heavy_imports(code: str) -> None:
    probe = f"{code}\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("argv", [["--help"], ["runs"]])
def test_commands_that_drive_nothing_load_no_engine(argv: list[str], tmp_path: Path) -> None:
    """``helix --help`` and ``helix runs`` start without the runtime, providers, test kit.

    They are what a person types most; loading the engine (gates, tools, sandbox,
    providers) cost them about a third of their start-up time. Every command's
    ``--help`` is checked the same way, stricter, in ``tests/cli/test_help.py``.
    """
    code = (
        f"import sys; sys.argv = ['helix', *{argv!r}]\n"
        "from helix.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('helix.runtime', 'helix.providers', 'helix.testing')"
        " if m in sys.modules))"
    )
    env = {**os.environ, "HELIX_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


# Tasks outside a supervisor or a task group are orphans waiting to happen. These few
# are owned by an object that cancels and awaits them, below the layer supervisors
# live in (the kernel cannot depend on the runtime).
TASK_OWNERS = {
    "kernel/log/_sqlite.py": "the store's watcher, cancelled and awaited in close()",
    "kernel/log/_postgres.py": "the store's listener tasks, cancelled and awaited in close()",
    "sandbox/_supervise.py": "the spawn and the output reader, awaited in the same call",
    "mcp/client/_connection.py": "a server's session task, stopped and awaited in stop(); a"
    " call raced against the server's end, both settled in the same call",
    "_util/_closing.py": "a close shielded from a cancel and awaited to its end in the same call",
    "runtime/_lease.py": "a lease's take, shielded from a cancel and awaited in the same"
    " call (a lease taken as the caller was cancelled is given back)",
    "mcp/client/_source.py": "list_changed refreshes: awaited by the call that set them off,"
    " cancelled at close",
    "sandbox/_microvm.py": "QEMU's console reader, cancelled and awaited when its box closes"
    " or fails to start",
    "sandbox/_microvm_agent.py": "the guest agent's port reader and its proxied connections,"
    " cancelled and awaited in close()",
    "sandbox/_microvm_shares.py": "each 9p share's server, cancelled and awaited in close()",
    "sandbox/_microvm_template.py": "the /usr share's server while a template is built,"
    " cancelled and awaited when the build ends",
}


def test_no_bare_tasks_outside_their_owners() -> None:
    import ast

    offenders = []
    for path in PACKAGE.rglob("*.py"):
        relative = str(path.relative_to(PACKAGE))
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("create_task", "ensure_future")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("asyncio", "loop")
                and relative not in TASK_OWNERS
            ):
                offenders.append(f"{relative}:{node.lineno}")
    assert offenders == [], "use a supervisor or an asyncio.TaskGroup"


# Runs read time through their engine's clock (runtime/_clock.py), so deadlines and
# budgets can be tested by moving a manual clock and hold across machines later.
CLOCKED = ("runtime", "gates")
WALL_CLOCK = {
    "time": {"time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns"},
    "datetime": {"now", "utcnow", "today"},
    "date": {"today"},
    "asyncio": {"sleep", "timeout", "timeout_at", "wait_for"},
    "loop": {"time"},
}


def test_runtime_and_gates_read_no_wall_clock_directly() -> None:
    import ast

    offenders = []
    for folder in CLOCKED:
        for path in (PACKAGE / folder).rglob("*.py"):
            relative = str(path.relative_to(PACKAGE))
            if relative == "runtime/_clock.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module in ("time", "datetime"):
                    names = {alias.name for alias in node.names}
                    if node.module == "time" or names & {"datetime", "date"}:
                        offenders.append(f"{relative}:{node.lineno}: from {node.module} import")
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.attr in WALL_CLOCK.get(node.func.value.id, ())
                ):
                    offenders.append(
                        f"{relative}:{node.lineno}: {node.func.value.id}.{node.func.attr}"
                    )
    assert offenders == [], "read time through the run's Clock (RunSetup.clock)"
