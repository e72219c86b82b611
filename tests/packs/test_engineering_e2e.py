"""Done when: the engineering pack fixes a failing test in a sample repository end to end
with a scripted model: worktree, test run, triage, edit, green run, branch with a summary.

Real git, a real bare repository as the remote, the real sandbox (process and bubblewrap).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helix.kernel.log import MemoryEventStore
from helix.plugins import Plugins
from helix.providers import Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.sandbox import BwrapSandbox, ProcessSandbox, Sandbox
from helix.ui import render_text

from ._repo import CALC, pack_folder, sample_repository, sh_git

PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest"  # fast: no plugins


def _scenario() -> Scenario:
    def call(name: str, args: dict[str, object], n: int) -> dict[str, object]:
        return {"text": "", "tool_calls": [{"name": name, "args": args, "id": f"c{n}"}]}

    return Scenario.of(
        call("run_tests", {"command": PYTEST}, 1),
        call("triage_failures", {}, 2),
        call("edit_file", {"path": "calc.py", "old": "return a - b", "new": "return a + b"}, 3),
        call("run_tests", {"command": PYTEST}, 4),
        call(
            "deliver",
            {"message": "Fix add: it subtracted", "summary": "add returned a - b; it adds now."},
            5,
        ),
        {"text": "Fixed add; branch delivered."},
    )


@pytest.fixture(params=["process", "bwrap"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    if request.param == "bwrap":
        request.getfixturevalue("bwrap_available")
        # the tests' own Python (and its pytest), read-only, beside the system's folders
        return BwrapSandbox(read_only=[Path(p) for p in sorted({sys.prefix, sys.base_prefix})])
    return ProcessSandbox()


async def test_the_pack_fixes_a_failing_test_end_to_end(
    tmp_path: Path, helix_home: Path, sandbox: Sandbox
) -> None:
    repo, remote = sample_repository(tmp_path)
    scenario = _scenario()

    def model(_setup: RunSetup) -> ScriptedModel:
        return ScriptedModel(scenario, label="fixer")

    plugins = Plugins(home=helix_home, env={"HELIX_PLUGINS": str(pack_folder(tmp_path))})
    store = MemoryEventStore()
    engine = Engine(
        store, home=helix_home, sandbox=sandbox, model_factory=model, env={}, plugins=plugins
    )
    kind = "bwrap" if isinstance(sandbox, BwrapSandbox) else "process"
    blueprint = Blueprint.model_validate(
        {
            "model": "scripted:fixer",
            "tools": ["read_file", "edit_file"],
            "plugins": ["engineering"],
            "sandbox": {"kind": kind},
            "approvals": {
                "rules": [
                    {"tool": "run_tests", "action": "allow"},
                    {"tool": "deliver", "action": "allow"},
                ]
            },
        }
    )
    record = await engine.create("make the tests pass", blueprint=blueprint, world=repo)
    world = Path(record.world)
    branch = "helix/" + record.id.removeprefix("run_")[:12]
    assert world == helix_home.resolve() / "worktrees" / record.id / "world"  # noqa: ASYNC240
    assert sh_git("rev-parse", "--abbrev-ref", "HEAD", cwd=world).strip() == branch

    state = await engine.drive(record.id)
    log = await store.read(record.id)
    assert state.status == "completed", [e.data for e in log if e.type == "run.failed"]

    completed = {e.data["call_id"]: e.data for e in log if e.type == "tool.completed"}
    assert [completed[f"c{n}"]["ok"] for n in range(1, 6)] == [True] * 5, completed
    assert "NOT GREEN: 1 passed, 1 failed" in str(completed["c1"]["output"])
    assert "test_calc.py::test_add" in str(completed["c2"]["output"])
    assert "GREEN: 2 passed, 0 failed" in str(completed["c4"]["output"])

    shown = [e.data for e in log if e.type == "ui.component"]
    results = [d["props"] for d in shown if d["component"] == "engineering.test_results"]
    assert [(p["passed"], p["failed"], p["green"]) for p in results] == [
        (1, 1, False),
        (1, 1, False),
        (2, 0, True),
    ]
    (failure,) = results[0]["failures"]
    assert failure["test_id"] == "test_calc.py::test_add"
    assert (failure["file"], failure["line"]) == ("test_calc.py", 5)
    assert "assert -1 == 5" in failure["message"]
    (diff,) = [d["props"] for d in shown if d["component"] == "engineering.diff"]
    assert diff["branch"] == branch
    assert diff["files"] == [{"path": "calc.py", "added": 1, "removed": 1}]
    assert "+    return a + b" in diff["diff"]
    # A terminal shows them as text (the pack's kinds are registered while it is active).
    assert render_text("engineering.test_results", results[0]).splitlines() == [
        "FAIL 1 passed, 1 failed, 0 errors, 0 skipped",
        "  ✗ test_calc.py::test_add (test_calc.py:5) assert -1 == 5",
    ]
    assert render_text("engineering.diff", diff).splitlines()[1:] == ["  calc.py  +1 -1"]

    # The remote has the branch, at the delivered commit, with the review summary.
    commit = diff["commit"]
    assert sh_git("rev-parse", branch, cwd=remote).strip() == commit
    message = sh_git("log", "-1", "--format=%B", branch, cwd=remote)
    assert message.startswith("Fix add: it subtracted\n")
    assert "add returned a - b; it adds now." in message
    assert "Tests before: failing (1 passed, 1 failed, 0 errors, 0 skipped)" in message
    assert "Tests after: green (2 passed, 0 failed, 0 errors, 0 skipped)" in message
    assert "calc.py +1 -1" in message
    assert sh_git("show", f"{branch}:calc.py", cwd=remote) == CALC.replace("a - b", "a + b")
    tree = sh_git("ls-tree", "--name-only", branch, cwd=remote).split()
    assert tree == ["calc.py", "test_calc.py"]  # no JUnit report, no cache committed
    assert (world.parent / "review.md").read_text().startswith("Review summary")

    # The person's checkout is as it was: its branch, its files, nothing staged.
    assert sh_git("rev-parse", "--abbrev-ref", "HEAD", cwd=repo).strip() == "main"
    assert (repo / "calc.py").read_text() == CALC
    assert sh_git("status", "--porcelain", cwd=repo) == ""
    assert sh_git("rev-parse", "main", cwd=remote) == sh_git("rev-parse", "main", cwd=repo)
