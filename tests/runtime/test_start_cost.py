"""What starting a run costs: no sandbox probe before a command, no walk of the cwd.

The sandbox tiers are probed when a command is about to run, not when a run starts.
Probing runs ``bwrap`` and ``docker version``; here both are stand-ins on ``PATH``
that leave a mark when run (and fail, so the process tier is chosen), and each run is
its own Python process, since probes are remembered per process.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helix.kernel.log import MemoryEventStore
from helix.runtime import Blueprint, Engine

SCRIPT = """
import asyncio, json, sys
from pathlib import Path
from helix.kernel.log import MemoryEventStore
from helix.providers import Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine

async def main(home, world, steps, kind):
    scenario = Scenario.of(*steps)
    engine = Engine(
        MemoryEventStore(),
        home=Path(home),
        model_factory=lambda _setup: ScriptedModel(scenario, label="t"),
        env={},
    )
    blueprint = Blueprint.model_validate({"model": "scripted:t", "sandbox": {"kind": kind}})
    record = await engine.create("o", blueprint=blueprint, world=Path(world), auto_approve=True)
    state = await engine.drive(record.id)
    print(state.status)

asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]))
"""


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    return tmp_path / "marks"


def _run(tmp_path: Path, marks: Path, steps: list[dict[str, Any]], kind: str = "process") -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    marks.mkdir(exist_ok=True)
    for name in ("bwrap", "docker"):
        stand_in = bin_dir / name
        stand_in.write_text(f"#!/bin/sh\ntouch {marks / name}\nexit 1\n")
        stand_in.chmod(0o755)
    world = tmp_path / "world"
    world.mkdir(exist_ok=True)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "home"), str(world), json.dumps(steps), kind],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


WRITE: dict[str, Any] = {"name": "write_file", "args": {"path": "a.txt", "content": "a"}}
COMMAND: dict[str, Any] = {"name": "run_command", "args": {"command": "echo hi > b.txt"}}


def test_a_run_that_runs_no_command_probes_no_tier(tmp_path: Path, marks: Path) -> None:
    steps: list[dict[str, Any]] = [{"text": "writing", "tool_calls": [WRITE]}, {"text": "done"}]
    assert _run(tmp_path, marks, steps) == "completed"
    assert (tmp_path / "world" / "a.txt").read_text() == "a"
    assert sorted(p.name for p in marks.iterdir()) == []


def test_a_command_probes_the_tiers_once_and_runs(tmp_path: Path, marks: Path) -> None:
    steps: list[dict[str, Any]] = [
        {"text": "running", "tool_calls": [COMMAND, COMMAND]},
        {"text": "done"},
    ]
    assert _run(tmp_path, marks, steps) == "completed"
    assert (tmp_path / "world" / "b.txt").read_text() == "hi\n"
    assert sorted(p.name for p in marks.iterdir()) == ["bwrap", "docker"]


def test_a_stronger_minimum_is_still_checked_before_the_run_is_created(
    tmp_path: Path, marks: Path
) -> None:
    bin_dir = tmp_path / "bin"
    with pytest.raises(AssertionError, match="at least 'bwrap'"):
        _run(tmp_path, marks, [{"text": "done"}], kind="bwrap")
    assert bin_dir.exists()
    assert sorted(p.name for p in marks.iterdir()) == ["bwrap", "docker"]


async def test_a_run_created_without_a_world_gets_a_new_folder_not_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    (here / "private.txt").write_text("not the run's")
    monkeypatch.chdir(here)
    engine = Engine(MemoryEventStore(), home=tmp_path / "home", env={})
    record = await engine.create("o", blueprint=Blueprint(model="scripted:t"))
    assert Path(record.world) == (tmp_path / "home" / "worlds" / record.id).resolve()
    assert await asyncio.to_thread(os.listdir, record.world) == []
    other = await engine.create("o", blueprint=Blueprint(model="scripted:t"), run_id="run_mine")
    assert other.id == "run_mine"
    assert Path(other.world).parent == Path(record.world).parent != Path(other.world)
