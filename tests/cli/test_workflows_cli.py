"""``helix workflows``, run as a real process: import, list, show, edit, history, run;
bad files and stale versions are a message and an exit code, never a trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_cli import helix


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _flow(tmp_path: Path) -> Path:
    script = tmp_path / "script.yaml"
    script.write_text("steps: [{text: done}]\n")
    flow = tmp_path / "release.yaml"
    flow.write_text(
        f"name: release\nmodel: scripted:{script}\n"
        "steps:\n  - {id: build, objective: Build it}\n  - {id: test, objective: Test it}\n"
        "edges: [{from: build, to: test}]\n"
    )
    return flow


def test_import_show_edit_history_and_run(home: Path, tmp_path: Path) -> None:
    flow = _flow(tmp_path)
    imported = helix(home, "workflows", "import", str(flow))
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "release version 1: created with 2 steps"
    again = helix(home, "workflows", "import", str(flow))
    assert again.returncode == 1
    assert "exists already" in again.stderr
    assert "Traceback" not in again.stderr

    shown = helix(home, "workflows", "show", "release")
    assert shown.returncode == 0
    text = shown.stdout.split("\n", 1)[1]
    changed = tmp_path / "changed.yaml"
    changed.write_text(text.replace("objective: Test it", "objective: Test it twice"))
    edited = helix(home, "workflows", "edit", "release", str(changed), "--base-version", "1")
    assert edited.returncode == 0, edited.stderr
    assert edited.stdout.strip() == "release is now version 2: changed test.objective"
    stale = helix(home, "workflows", "edit", "release", str(changed), "--base-version", "1")
    assert stale.returncode == 1
    assert "version 2 is the latest" in stale.stderr

    listed = helix(home, "workflows", "list", "--json")
    assert [json.loads(line)["version"] for line in listed.stdout.splitlines()] == [2]
    history = helix(home, "workflows", "history", "release")
    assert [line.split()[0] for line in history.stdout.splitlines()] == ["v1", "v2"]
    assert "file" in history.stdout
    first = helix(home, "workflows", "show", "release", "--version", "1")
    assert "objective: Test it}" in first.stdout

    world = tmp_path / "world"
    world.mkdir()
    ran = helix(home, "workflows", "run", "release", "--world", str(world), "--json")
    assert ran.returncode == 0, ran.stderr
    types = [json.loads(line)["type"] for line in ran.stdout.splitlines()]
    assert types.count("task.completed") == 2
    assert types[-1] == "run.completed"


@pytest.mark.parametrize(
    ("content", "code", "says"),
    [
        ("name: [", 2, "does not parse"),
        ("name: x\nsteps: [{id: a, objective: A}]\nedges: [{from: a, to: b}]\n", 2, "unknown step"),
        (
            "name: x\nsteps: [{id: a, objective: A}, {id: b, objective: B}]\n"
            "edges: [{from: a, to: b}, {from: b, to: a}]\n",
            2,
            "cycle",
        ),
    ],
)
def test_bad_files_are_usage_errors(
    home: Path, tmp_path: Path, content: str, code: int, says: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(content)
    result = helix(home, "workflows", "import", str(bad))
    assert result.returncode == code
    assert says in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_workflows_are_not_found(home: Path, tmp_path: Path) -> None:
    for args in (("show", "ghost"), ("history", "ghost"), ("run", "ghost")):
        result = helix(home, "workflows", *args)
        assert result.returncode == 3, result.stderr
        assert "no workflow 'ghost'" in result.stderr
    edited = helix(home, "workflows", "edit", "release", str(_flow(tmp_path)))
    assert edited.returncode == 3
    missing = helix(home, "workflows", "import", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2
    assert "cannot read" in missing.stderr
