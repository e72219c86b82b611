"""A damaged SQLite store, read by the real ``helix`` command: exit 4 and one line, no trace.

The store is a real file written by ``helix demo``; the damage is done to the file the
way a disk or a careless hand does it: pages overwritten in the middle of the file, or
one event row's JSON cut short (with the append-only trigger dropped to let the raw
``UPDATE`` through).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from .test_cli import helix

PAGE = 4096


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _demo(home: Path) -> str:
    assert helix(home, "demo").returncode == 0
    listed = helix(home, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    runs = [json.loads(line) for line in listed.stdout.splitlines()]
    (run_id,) = [r["id"] for r in runs if r["parent"] is None]  # the demo's own, not its fork
    assert isinstance(run_id, str)
    db = home / "helix.db"
    assert not (home / "helix.db-wal").exists() or (home / "helix.db-wal").stat().st_size == 0
    assert db.stat().st_size > 6 * PAGE
    return run_id


def _one_line_error(result: object, code: int = 4) -> str:
    assert isinstance(result, __import__("subprocess").CompletedProcess)
    assert result.returncode == code, (result.args, result.stderr)
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ")
    return str(line)


def test_pages_overwritten_in_the_middle_of_the_file(home: Path) -> None:
    run_id = _demo(home)
    db = home / "helix.db"
    size = db.stat().st_size
    with open(db, "r+b") as data:  # the header and schema page survive; the rest is noise
        data.seek(2 * PAGE)
        data.write(b"\xa5" * (size - 4 * PAGE))
    for args in (
        ["runs"],
        ["show", run_id],
        ["logs", run_id],
        ["replay", run_id],
        ["export", run_id],
    ):
        line = _one_line_error(helix(home, *args))
        assert "is damaged: database disk image is malformed" in line, args


def test_an_event_row_whose_json_is_cut_short(home: Path) -> None:
    run_id = _demo(home)
    with sqlite3.connect(home / "helix.db") as db:
        db.execute("DROP TRIGGER events_are_append_only_update")
        db.execute(
            "UPDATE events SET data = substr(data, 1, 7) WHERE run_id = ? AND seq = 3", (run_id,)
        )
    for args in (["logs", run_id], ["replay", run_id], ["export", run_id]):
        line = _one_line_error(helix(home, *args))
        assert f"the store is damaged: event 3 of run {run_id!r} cannot be read back" in line
    # What does not read that row still works.
    assert helix(home, "runs").returncode == 0
    assert helix(home, "show", run_id).returncode == 0
    assert helix(home, "logs", run_id, "--after", "3").returncode == 0
