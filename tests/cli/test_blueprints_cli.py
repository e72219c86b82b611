"""``helix blueprints``, run as a real process, embedded: save, list, show, history, diff,
rollback; bad files, stale versions and unknown names are a message and an exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_cli import helix


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_save_list_show_history_diff_and_rollback(home: Path, tmp_path: Path) -> None:
    one = _file(tmp_path, "one.yaml", "model: openai:gpt-4.1\nsystem: Review.\n")
    two = _file(tmp_path, "two.yaml", "model: openai:gpt-4.1\nsystem: Review hard.\n")
    saved = helix(home, "blueprints", "save", "reviewer", one, "--note", "first")
    assert saved.returncode == 0, saved.stderr
    assert saved.stdout.strip() == "reviewer is now version 1"
    again = helix(home, "blueprints", "save", "reviewer", two, "--expected-version", "1")
    assert again.stdout.strip() == "reviewer is now version 2", again.stderr
    stale = helix(home, "blueprints", "save", "reviewer", one, "--expected-version", "1")
    assert stale.returncode == 1
    assert "version 2 is the latest" in stale.stderr
    assert "Traceback" not in stale.stderr

    listed = helix(home, "blueprints", "list", "--json")
    assert [
        (json.loads(x)["name"], json.loads(x)["version"]) for x in listed.stdout.splitlines()
    ] == [("reviewer", 2)]
    shown = helix(home, "blueprints", "show", "reviewer", "--version", "1")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("# reviewer version 1, saved by user:")
    assert "system: Review.\n" in shown.stdout
    history = helix(home, "blueprints", "history", "reviewer")
    assert [line.split()[0] for line in history.stdout.splitlines()] == ["v1", "v2"]
    assert history.stdout.splitlines()[0].endswith("first")

    diff = helix(home, "blueprints", "diff", "reviewer", "1", "2")
    assert diff.returncode == 0, diff.stderr
    assert "-system: Review.\n+system: Review hard.\n" in diff.stdout
    assert diff.stdout.strip().endswith("changed: system (changed)")
    as_json = json.loads(helix(home, "blueprints", "diff", "reviewer", "1", "2", "--json").stdout)
    assert as_json["changed"] == [{"path": "system", "change": "changed"}]

    rolled = helix(home, "blueprints", "rollback", "reviewer", "1")
    assert rolled.stdout.strip() == "reviewer is now version 3 (rollback to v1)", rolled.stderr
    latest = json.loads(helix(home, "blueprints", "show", "reviewer", "--json").stdout)
    assert (latest["version"], latest["blueprint"]["system"]) == (3, "Review.")

    other = helix(home, "blueprints", "save", "mine", one, "--workspace", "team")
    assert other.returncode == 0, other.stderr  # embedded: a workspace named for the first time
    assert helix(home, "blueprints", "list", "--workspace", "team").stdout.startswith("mine  v1")


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (("show", "nope"), 3, "no blueprint 'nope'"),
        (("show", "reviewer", "--version", "9"), 3, "version 9"),
        (("history", "nope"), 3, "no blueprint"),
        (("diff", "reviewer", "1", "4"), 3, "version 4"),
        (("diff", "reviewer", "0", "1"), 2, ""),
        (("diff", "reviewer", "one", "1"), 2, ""),
        (("rollback", "reviewer", "5"), 3, "version 5"),
        (("save", "bad name", "FILE"), 2, "invalid blueprint name"),
        (("save", "reviewer", "MISSING"), 2, "cannot read"),
        (("save", "reviewer", "BAD"), 2, "budget"),
    ],
)
def test_bad_input_is_a_message_and_an_exit_code(
    home: Path, tmp_path: Path, args: tuple[str, ...], code: int, says: str
) -> None:
    good = _file(tmp_path, "good.yaml", "system: Review.\n")
    bad = _file(tmp_path, "bad.yaml", "budget: {usd: lots}\n")
    assert helix(home, "blueprints", "save", "reviewer", good).returncode == 0
    paths = {"FILE": good, "MISSING": str(tmp_path / "missing.yaml"), "BAD": bad}
    result = helix(home, "blueprints", *[paths.get(a, a) for a in args])
    assert result.returncode == code, result.stderr
    assert says in result.stderr
    assert "Traceback" not in result.stderr


def test_run_a_stored_blueprint_by_name_and_version(home: Path, tmp_path: Path) -> None:
    script = _file(tmp_path, "script.yaml", "steps: [{text: done}]\n")
    one = _file(tmp_path, "one.yaml", f"model: scripted:{script}\nsystem: One.\n")
    two = _file(tmp_path, "two.yaml", f"model: scripted:{script}\nsystem: Two.\n")
    assert helix(home, "blueprints", "save", "scripted", one).returncode == 0
    assert helix(home, "blueprints", "save", "scripted", two).returncode == 0
    world = tmp_path / "world"
    world.mkdir()
    for spec, version in (("scripted", 2), ("scripted@1", 1)):
        ran = helix(home, "run", "x", "--blueprint", spec, "--dir", str(world), "--json")
        assert ran.returncode == 0, ran.stderr
        created = json.loads(ran.stdout.splitlines()[0])
        assert created["data"]["blueprint_version"] == version
        shown = helix(home, "show", "last")
        assert f"blueprint  scripted v{version}" in shown.stdout
    from_file = helix(home, "run", "x", "--blueprint", one, "--dir", str(world), "--json")
    assert from_file.returncode == 0, from_file.stderr  # a path is still a file here
    assert "blueprint  one\n" in helix(home, "show", "last").stdout
    missing = helix(home, "run", "x", "--blueprint", "nothing", "--dir", str(world))
    assert missing.returncode == 3
    assert "no blueprint 'nothing'" in missing.stderr
