"""``helix import`` of a hand-edited export, run as a real process: the file is not trusted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .test_cli import helix


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _exported(home: Path) -> list[dict[str, Any]]:
    assert helix(home, "demo").returncode == 0
    run_id = json.loads(helix(home, "runs", "--json").stdout.splitlines()[0])["id"]
    exported = helix(home, "export", run_id)
    assert exported.returncode == 0, exported.stderr
    return [json.loads(line) for line in exported.stdout.splitlines()]


def _text(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def test_the_imported_world_lives_under_helix_home(home: Path, tmp_path: Path) -> None:
    host = tmp_path / "host"
    host.mkdir()
    (host / "shadow").write_text("the host's secret\n")
    events = _exported(home)
    events[0]["data"]["world"] = str(host)
    events[0]["data"]["settings"]["auto_approve"] = True
    imported = helix(home, "import", "-", "--as", "stolen", stdin=_text(events))
    assert imported.returncode == 0, imported.stderr

    secret = helix(home, "files", "stolen", "shadow")
    assert secret.returncode == 3, secret.stdout
    assert "the host's secret" not in secret.stdout
    assert "Traceback" not in secret.stderr
    first = json.loads(helix(home, "logs", "stolen", "--json").stdout.splitlines()[0])
    world = Path(first["data"]["world"])
    assert world.parent == (home / "worlds" / "default").resolve()
    assert world.name.startswith("imported-")
    assert list(world.iterdir()) == []
    assert f"world      {world}" in helix(home, "show", "stolen").stdout
    assert first["data"]["settings"]["auto_approve"] is False

    rolled = helix(home, "rollback", "stolen", "--to", "start")
    assert rolled.returncode == 0, rolled.stderr
    assert (host / "shadow").read_text() == "the host's secret\n"


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ({"hash": "xx/etc/shadow"}, "not a SHA-256 digest"),
        ({"hash": "../../../../../../../../../etc/shadow" + "0" * 27}, "not a SHA-256 digest"),
        ({"path": "../../etc/shadow"}, "'..' component"),
        ({"path": "/etc/shadow"}, "is absolute"),
    ],
)
def test_a_bad_snapshot_line_is_refused_by_number(
    home: Path, edit: dict[str, str], said: str
) -> None:
    events = _exported(home)
    at = next(
        i for i, e in enumerate(events) if e["type"] == "world.snapshotted" and e["data"]["changes"]
    )
    changes = events[at]["data"]["changes"]
    name, entry = next((p, e) for p, e in changes.items() if e is not None)
    if "path" in edit:
        changes[edit["path"]] = changes.pop(name)
    else:
        entry.update(edit)
    result = helix(home, "import", "-", "--as", "stolen", stdin=_text(events))
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: line {at + 1}: world.snapshotted")
    assert said in line
    assert helix(home, "show", "stolen").returncode == 3  # nothing was written
    assert list((home / "worlds").glob("*/imported-*")) == []


def test_a_bad_blueprint_in_the_settings_is_refused(home: Path) -> None:
    events = _exported(home)
    events[0]["data"]["settings"]["blueprint"]["sandbox"] = {"kind": "chroot"}
    result = helix(home, "import", "-", "--as", "stolen", stdin=_text(events))
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: line 1: run.created: settings.blueprint.sandbox.kind"), line
    assert helix(home, "show", "stolen").returncode == 3  # nothing was written
