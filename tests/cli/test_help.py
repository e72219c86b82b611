"""Every command's help: it renders, it shows real examples, and nothing in it is noise.

Walks the whole command tree (sub-apps included) through Click, so a command added
later is checked without being listed here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from helix.cli._app import COMMANDS, app


def _tree(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name in getattr(command, "list_commands", lambda _ctx: [])(None):
        found += _tree(command.get_command(None, name), (*path, name))
    return found


PATHS = _tree(typer.main.get_command(app))


def test_the_tree_holds_every_command_and_sub_command() -> None:
    assert {("run",), ("bench",), ("users", "add"), ("models", "recommend")} <= set(PATHS)
    assert len(PATHS) > len(COMMANDS)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "helix")
def test_help_renders_with_examples_and_no_noise(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], prog_name="helix")
    assert result.exit_code == 0, result.output
    text = result.output
    assert f"Usage: helix {' '.join(path)}".rstrip() in text
    _, examples_title, examples = text.partition("Examples:")
    assert examples_title, f"helix {' '.join(path)} --help shows no examples"
    shown = [line.strip() for line in examples.splitlines() if line.strip()]
    assert shown
    assert all("helix " in line for line in shown), shown
    invoked = " ".join(("helix", *path))
    assert any(invoked in line for line in shown) or not path, shown
    assert "<bool>" not in text
    assert "--no-no-" not in text
    assert "[default: no-" not in text, "a flag that is off by default has no --no- twin"


def test_the_root_lists_each_command_by_the_first_line_of_its_own_help() -> None:
    """``helix --help`` reads summaries from ``COMMANDS``; they must not drift."""
    group = typer.main.get_command(app)
    for row in COMMANDS:
        command = group.get_command(None, row.name)  # type: ignore[attr-defined]
        assert command is not None, row.name
        own = (command.help or "").strip().splitlines()[0]
        assert own == row.summary, row.name


def test_an_unknown_command_suggests_the_nearest() -> None:
    result = CliRunner().invoke(app, ["rnus"], prog_name="helix")
    assert result.exit_code == 2
    assert "No such command 'rnus'. Did you mean 'runs'?" in result.output


def test_the_version_is_printed() -> None:
    from helix import __version__

    result = CliRunner().invoke(app, ["--version"], prog_name="helix")
    assert (result.exit_code, result.output) == (0, f"helix {__version__}\n")


HELP_MUST_NOT_LOAD = (
    "pydantic",
    "helix.kernel.events",
    "helix.kernel.log",
    "helix.runtime",
    "helix.providers",
    "helix.server",
    "helix.api",
    "textual",
)
"""What a command's ``--help`` has no use for: pydantic alone is ~60 ms, the kernel's
event models ~250 ms, the engine more (``helix bench cli`` measures the whole start)."""


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "helix")
def test_help_loads_no_models_kernel_or_engine(path: tuple[str, ...], tmp_path: Path) -> None:
    """``helix --help`` and every ``helix COMMAND --help`` import none of the heavy parts.

    Commands are imported only when used (``cli/_lazy.py``) and their modules import
    the kernel, engine and models inside the command's function.
    """
    code = (
        f"import sys; sys.argv = ['helix', *{list(path)!r}, '--help']\n"
        "from helix.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HELP_MUST_NOT_LOAD!r} if m in sys.modules))"
    )
    env = {**os.environ, "HELIX_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "[]"
