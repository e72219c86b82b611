"""A run's resource caps, end to end in one process: real bwrap commands, real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.sandbox import BwrapSandbox

pytestmark = pytest.mark.usefixtures("bwrap_available")


def _command(command: str) -> dict[str, Any]:
    return {
        "text": "running",
        "tool_calls": [{"name": "run_command", "args": {"command": command}}],
    }


def _write(path: str, content: str) -> dict[str, Any]:
    return {
        "text": "writing",
        "tool_calls": [{"name": "write_file", "args": {"path": path, "content": content}}],
    }


async def _outputs(tmp_path: Path, sandbox: dict[str, Any], *steps: dict[str, Any]) -> list[str]:
    """Drive a run of ``steps`` under bwrap; each call's recorded output, in order."""
    scenario = Scenario.of(*steps, {"text": "done"})

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    world = tmp_path / "world"
    world.mkdir()
    box = BwrapSandbox(max_processes=64)
    engine = Engine(MemoryEventStore(), home=tmp_path, sandbox=box, model_factory=model, env={})
    blueprint = Blueprint(model="scripted:t", sandbox={"kind": "bwrap", **sandbox})
    try:
        record = await engine.create("fill", blueprint=blueprint, world=world, auto_approve=True)
        state = await engine.drive(record.id)
    finally:
        box.close()
    assert state.status == "completed"
    log = await engine.store.read(record.id)
    return [e.data["output"] for e in log if e.type == "tool.completed"]


async def test_a_run_past_its_world_quota_is_told_and_held_until_back_under(
    tmp_path: Path,
) -> None:
    outputs = await _outputs(
        tmp_path,
        {"world_mb": 1},
        _command("head -c 3000000 /dev/zero > big.bin"),  # passes the quota
        _write("notes.txt", "more"),  # grows the world: refused
        _command("rm big.bin"),  # may write anything: refused too
        _write("big.bin", ""),  # shrinks it: allowed, and the world is back under
        _command("echo fine > fine.txt"),
    )
    filled, note, removal, emptied, fine = outputs
    assert filled.startswith("[exit code 0]\n[the world is over its quota: it takes 2.9 MiB")
    assert "more than the 1.0 MiB allowed (sandbox.world_mb)" in filled
    assert "its largest files: big.bin (2.9 MiB)" in filled
    assert note.startswith("refused: writing 4 bytes to notes.txt would take the world to")
    assert removal.startswith("refused: the world is over its quota")
    assert (tmp_path / "world" / "big.bin").exists()  # the refused command never ran
    assert emptied.startswith("overwrote big.bin (0 bytes)")
    assert fine == "[exit code 0]"


async def test_a_command_past_the_tmp_cap_of_its_blueprint_is_told(tmp_path: Path) -> None:
    (output,) = await _outputs(
        tmp_path, {"tmp_mb": 4}, _command("head -c 6000000 /dev/zero > /tmp/fill")
    )
    assert "No space left on device" in output
    assert "[the sandbox's /tmp cap was hit: /tmp holds at most 4 MiB (sandbox.tmp_mb)" in output
