"""``chain_of_thought`` and ``plan_then_act``: what the model is sent (the mock server keeps it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helix.providers import Scenario
from helix.runtime import Blueprint
from helix.testing import MockModelServer

from .conftest import mock_engine as _engine

MODEL = "openai:gpt-4.1"
SYSTEM = "You are careful."


def _system(body: dict[str, Any]) -> str:
    (system,) = [m["content"] for m in body["messages"] if m["role"] == "system"]
    return str(system)


def _tools(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


async def test_chain_of_thought_asks_for_reasoning_in_every_system_prompt(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    listing = {"name": "list_files", "args": {}}
    server.play(Scenario.of({"text": "First I look.", "tool_calls": [listing]}, {"text": "Done."}))
    blueprint = Blueprint.parse(
        {"system": SYSTEM, "strategy": {"kind": "chain_of_thought"}}, source="cot.yaml"
    )
    engine = _engine(helix_home, server)
    run = await engine.create("tidy up", blueprint=blueprint, model=MODEL, world=tmp_path)
    state = await engine.drive(run.id)
    assert state.status == "completed"
    bodies = [r.body for r in server.requests if r.api == "openai"]
    assert len(bodies) == 2
    for body in bodies:
        assert _system(body).startswith(SYSTEM + "\n\n")
        assert "think the problem through step by step" in _system(body)
        assert "list_files" in _tools(body)


async def test_a_chain_of_thought_instruction_of_the_blueprints_own(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of({"text": "Done."}))
    strategy = {"kind": "chain_of_thought", "instruction": "Reason aloud first."}
    blueprint = Blueprint.parse({"system": SYSTEM, "strategy": strategy}, source="cot.yaml")
    engine = _engine(helix_home, server)
    run = await engine.create("x", blueprint=blueprint, model=MODEL, world=tmp_path)
    await engine.drive(run.id)
    (request,) = server.requests
    assert _system(request.body) == f"{SYSTEM}\n\nReason aloud first."


async def test_plan_then_act_plans_with_no_tools_then_acts(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    write = {"name": "write_file", "args": {"path": "out.txt", "content": "done\n"}}
    server.play(
        Scenario.of(
            {"text": "1. write out.txt\n2. stop"},
            {"text": "Writing.", "tool_calls": [write]},
            {"text": "Wrote out.txt."},
        )
    )
    blueprint = Blueprint.parse(
        {"system": SYSTEM, "strategy": {"kind": "plan_then_act"}}, source="plan.yaml"
    )
    engine = _engine(helix_home, server)
    run = await engine.create("write out.txt", blueprint=blueprint, model=MODEL, world=tmp_path)
    state = await engine.drive(run.id)

    assert state.status == "completed"
    assert state.summary == "Wrote out.txt."
    assert (tmp_path / "out.txt").read_text() == "done\n"
    plan, act, last = [r.body for r in server.requests if r.api == "openai"]
    assert _tools(plan) == []  # the planning call is offered no tool
    assert "planning only" in _system(plan)
    assert "write_file" in _tools(act)
    assert "write_file" in _tools(last)
    assert "planning only" not in _system(act)
    said = [m for m in act["messages"] if m["role"] in ("user", "assistant")]
    assert [m["role"] for m in said] == ["user", "assistant", "user"]
    assert said[1]["content"] == "1. write out.txt\n2. stop"
    assert said[2]["content"].startswith("Now carry out your plan")
    log = await engine.store.read(run.id)
    (told,) = [e for e in log if e.type == "steer.received"]
    assert told.actor == "system"
    assert told.turn == 1
    assert [e.data["turn"] for e in log if e.type == "turn.started"] == [1, 2, 3]


async def test_a_plan_then_act_reply_that_calls_tools_at_once_just_acts(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    listing = {"name": "list_files", "args": {}}
    server.play(Scenario.of({"text": "Acting.", "tool_calls": [listing]}, {"text": "Done."}))
    blueprint = Blueprint.parse({"strategy": {"kind": "plan_then_act"}}, source="plan.yaml")
    engine = _engine(helix_home, server)
    run = await engine.create("x", blueprint=blueprint, model=MODEL, world=tmp_path)
    state = await engine.drive(run.id)
    assert state.status == "completed"
    assert not [e for e in await engine.store.read(run.id) if e.type == "steer.received"]
    second = server.requests[1].body
    assert "list_files" in _tools(second)


def test_unknown_strategies_are_refused() -> None:
    from helix.errors import BlueprintError

    with pytest.raises(BlueprintError, match=r"plan\.yaml: strategy: Input tag 'plan_first'"):
        Blueprint.parse({"strategy": {"kind": "plan_first"}}, source="plan.yaml")
    with pytest.raises(BlueprintError, match=r"strategy\.chain_of_thought\.steps"):
        Blueprint.parse({"strategy": {"kind": "chain_of_thought", "steps": 3}}, source="x")
