"""Models by role: each kind of call goes to its role's model (the mock server keeps them).

One mock server answers every model; the name each request asked for (``body.model``)
says which role's model served it, and the log says the same (``model.requested.role``,
``context.compacted``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from helix.errors import BlueprintError
from helix.kernel.events import Event
from helix.kernel.log import MemoryEventStore
from helix.kernel.session import SpendQuery, TraceSpan, replay_run, spend, trace
from helix.providers import Scenario
from helix.runtime import Blueprint
from helix.testing import MockModelServer
from helix.tools import builtin_registry

from .conftest import mock_engine as _engine

MAIN = "openai:main-model"
CHEAP = "openai:cheap-model"
LISTING = {"name": "list_files", "args": {}}


def _models(server: MockModelServer) -> list[str]:
    return [r.body["model"] for r in server.requests if r.api == "openai"]


def _of(log: list[Event], kind: str) -> list[Event]:
    return [e for e in log if e.type == kind]


def _walk(span: TraceSpan) -> list[TraceSpan]:
    return [span, *(s for child in span.children for s in _walk(child))]


def _said(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


def _compacting(**roles: object) -> Blueprint:
    return Blueprint.parse(
        {
            "model": MAIN,
            "roles": roles,
            "tools": ["list_files"],
            "context": {"compact_at_tokens": 1, "keep_turns": 1},
        },
        source="compact.yaml",
    )


TWO_TURNS_THEN_DONE = (
    {"text": "Turn one looks around.", "tool_calls": [LISTING]},
    {"text": "Turn two looks again.", "tool_calls": [LISTING]},
)


async def test_a_blueprints_summary_role_is_served_by_its_own_model(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(
        Scenario.of(*TWO_TURNS_THEN_DONE, {"text": "SUMMARY: listed twice."}, {"text": "Done."})
    )
    engine = _engine(helix_home, server)
    run = await engine.create("look around", blueprint=_compacting(summary=CHEAP), world=tmp_path)
    state = await engine.drive(run.id)

    assert state.status == "completed"
    # the mock server's log: main turns to the main model, the summary to the cheap one
    assert _models(server) == ["main-model", "main-model", "cheap-model", "main-model"]
    summary_request = server.requests[2].body
    assert "Turn one looks around." in _said(summary_request)
    assert "Turn two looks again." not in _said(summary_request)  # the kept turn
    assert [t["function"]["name"] for t in summary_request.get("tools") or []] == []
    last = server.requests[3].body
    assert "SUMMARY: listed twice." in _said(last)
    assert "Turn one looks around." not in _said(last)  # sent as its summary only
    assert "Turn two looks again." in _said(last)
    assert "look around" in _said(last)  # the objective stays

    log = await engine.store.read(run.id)
    assert [e.data["role"] for e in _of(log, "model.requested")] == ["main"] * 3
    assert [e.data["role"] for e in _of(log, "model.responded")] == ["main"] * 3
    assert [e.data["model"] for e in _of(log, "model.responded")] == ["main-model"] * 3
    (compacted,) = _of(log, "context.compacted")
    assert compacted.data["role"] == "summary"
    assert (compacted.data["provider"], compacted.data["model"]) == ("openai", "cheap-model")
    assert compacted.data["upto_turn"] == 1
    assert compacted.data["summary"] == "SUMMARY: listed twice."
    assert compacted.data["usage"]["output_tokens"] > 0
    assert state.context_summary == "SUMMARY: listed twice."
    assert state.usage_by_model[CHEAP].output_tokens == compacted.data["usage"]["output_tokens"]

    report = await spend(engine.store, query=SpendQuery(by="role"))
    assert set(report.by_role) == {"main", "summary"}
    assert report.by_role["summary"].output_tokens == compacted.data["usage"]["output_tokens"]
    assert report.by_model[CHEAP].output_tokens == report.by_role["summary"].output_tokens

    spans = await trace(engine.store, run.id)
    models = [s for s in _walk(spans) if s.kind == "model"]
    assert [s.name for s in models] == [MAIN, MAIN, CHEAP, MAIN]
    assert models[2].detail == "summary: turns 1-1 summarised"
    assert models[0].detail == "main: 1 tool call(s)"
    assert spans.output_tokens == state.own_usage.output_tokens


async def test_a_compacted_run_resumes_from_its_log_without_calling_the_summary_again(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of(*TWO_TURNS_THEN_DONE, {"text": "SUMMARY."}, {"text": "Done."}))
    store = MemoryEventStore()
    first = _engine(helix_home, server, store)
    run = await first.create("look around", blueprint=_compacting(summary=CHEAP), world=tmp_path)
    stopped = await first.drive(run.id, until=lambda s: s.compacted_upto_turn >= 1)
    assert stopped.status == "running"
    assert _models(server) == ["main-model", "main-model", "cheap-model"]

    replayed = await replay_run(store, run.id)  # the fold reads the summary back
    assert replayed.context_summary == "SUMMARY."
    assert replayed.compacted_messages == replayed.turn_message_ends[1]

    again = _engine(helix_home, server, store)  # another process takes the run on
    state = await again.drive(run.id)
    assert state.status == "completed"
    assert _models(server) == ["main-model", "main-model", "cheap-model", "main-model"]
    assert "SUMMARY." in _said(server.requests[3].body)
    assert len(_of(await store.read(run.id), "context.compacted")) == 1


async def test_compaction_is_off_by_default_and_a_role_less_summary_uses_the_main_model(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of(*TWO_TURNS_THEN_DONE, {"text": "Done."}))
    engine = _engine(helix_home, server)
    plain = Blueprint.parse({"model": MAIN, "tools": ["list_files"]}, source="plain.yaml")
    run = await engine.create("look around", blueprint=plain, world=tmp_path)
    assert (await engine.drive(run.id)).status == "completed"
    assert _models(server) == ["main-model"] * 3
    assert _of(await engine.store.read(run.id), "context.compacted") == []

    server.play(Scenario.of(*TWO_TURNS_THEN_DONE, {"text": "SUMMARY."}, {"text": "Done."}))
    server.requests.clear()
    run = await engine.create("look around", blueprint=_compacting(), world=tmp_path)
    assert (await engine.drive(run.id)).status == "completed"
    assert _models(server) == ["main-model"] * 4
    (compacted,) = _of(await engine.store.read(run.id), "context.compacted")
    assert (compacted.data["role"], compacted.data["model"]) == ("summary", "main-model")


async def test_a_roles_fallback_chain_answers_with_its_next_model(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    refused = {"error": {"status": 400, "message": "no such model"}}
    server.play(Scenario.of(*TWO_TURNS_THEN_DONE, refused, {"text": "SUMMARY."}, {"text": "Done."}))
    engine = _engine(helix_home, server)
    chain = ["openai:broken-model", CHEAP]
    run = await engine.create("look around", blueprint=_compacting(summary=chain), world=tmp_path)
    assert (await engine.drive(run.id)).status == "completed"
    assert _models(server) == [
        "main-model", "main-model", "broken-model", "cheap-model", "main-model"
    ]  # fmt: skip
    log = await engine.store.read(run.id)
    (compacted,) = _of(log, "context.compacted")
    assert compacted.data["model"] == "cheap-model"  # the model that answered
    assert len(_of(log, "model.failed")) == 1


async def test_the_main_roles_fallback_chain_logs_the_model_that_answered(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    refused = {"error": {"status": 400, "message": "no such model"}}
    server.play(Scenario.of(refused, {"text": "Done."}))
    engine = _engine(helix_home, server)
    blueprint = Blueprint.parse(
        {"roles": {"main": ["openai:broken-model", CHEAP]}}, source="chain.yaml"
    )
    run = await engine.create("answer", blueprint=blueprint, world=tmp_path)
    assert (await engine.drive(run.id)).status == "completed"
    log = await engine.store.read(run.id)
    (requested,) = _of(log, "model.requested")
    assert (requested.data["role"], requested.data["model"]) == ("main", "broken-model")
    (responded,) = _of(log, "model.responded")
    assert (responded.data["provider"], responded.data["model"]) == ("openai", "cheap-model")
    report = await spend(engine.store)
    assert set(report.by_model) == {CHEAP}


async def test_the_planning_turn_goes_to_the_planner_role(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of({"text": "1. list\n2. stop"}, {"text": "Done."}))
    engine = _engine(helix_home, server)
    blueprint = Blueprint.parse(
        {
            "model": MAIN,
            "roles": {"planner": "openai:planner-model"},
            "strategy": {"kind": "plan_then_act"},
        },
        source="plan.yaml",
    )
    run = await engine.create("plan it", blueprint=blueprint, world=tmp_path)
    assert (await engine.drive(run.id)).status == "completed"
    assert _models(server) == ["planner-model", "main-model"]
    log = await engine.store.read(run.id)
    assert [e.data["role"] for e in _of(log, "model.requested")] == ["planner", "main"]
    report = await spend(engine.store, query=SpendQuery(by="role"))
    assert set(report.by_role) == {"planner", "main"}


async def test_a_delegated_child_runs_on_the_worker_role_unless_it_names_a_model(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    delegate = {"id": "d1", "name": "delegate", "args": {"objective": "sub-task"}}
    server.play(
        Scenario.of({"text": "handing over", "tool_calls": [delegate]}, {"text": "sub done"},
                    {"text": "Done."})
    )  # fmt: skip
    engine = _engine(helix_home, server)
    blueprint = Blueprint.parse(
        {"model": MAIN, "roles": {"worker": "openai:worker-model"}}, source="boss.yaml"
    )
    run = await engine.create("delegate it", blueprint=blueprint, world=tmp_path)
    state = await engine.drive(run.id)
    assert state.status == "completed"
    assert _models(server) == ["main-model", "worker-model", "main-model"]
    (child,) = state.children
    log = await engine.store.read(child)
    assert [e.data["role"] for e in _of(log, "model.requested")] == ["worker"]
    report = await spend(engine.store, query=SpendQuery(by="role"))
    assert set(report.by_role) == {"main", "worker"}

    # a delegation whose blueprint names its model runs on that one
    (tmp_path / "own.yaml").write_text("model: openai:own-model\n")
    server.requests.clear()
    named = {**delegate, "args": {"objective": "sub-task", "blueprint": "own.yaml"}}
    server.play(
        Scenario.of({"text": "handing over", "tool_calls": [named]}, {"text": "sub done"},
                    {"text": "Done."})
    )  # fmt: skip
    run = await engine.create("delegate it", blueprint=blueprint, world=tmp_path)
    assert (await engine.drive(run.id)).status == "completed"
    assert _models(server) == ["main-model", "own-model", "main-model"]


async def test_a_graphs_tasks_run_on_the_worker_role_unless_they_name_a_model(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of({"text": "a done"}, {"text": "b done"}))
    engine = _engine(helix_home, server)
    plan = Blueprint.parse(
        {
            "roles": {"worker": "openai:worker-model"},
            "tasks": [
                {"id": "a", "objective": "do a"},
                {"id": "b", "objective": "do b", "depends_on": ["a"], "model": "openai:b-model"},
            ],
        },
        source="plan.yaml",
    )
    run = await engine.create("two tasks", blueprint=plan, world=tmp_path)
    state = await engine.drive(run.id)
    assert state.status == "completed"
    assert _models(server) == ["worker-model", "b-model"]
    for task in state.tasks.values():
        assert task.run_id is not None
        log = await engine.store.read(task.run_id)
        assert [e.data["role"] for e in _of(log, "model.requested")] == ["worker"]


async def test_a_tree_of_thoughts_judge_run_uses_the_judge_role(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of({"text": "Looks done: 0.8"}, repeat=True))
    engine = _engine(helix_home, server)
    blueprint = Blueprint.parse(
        {
            "model": MAIN,
            "roles": {"judge": "openai:judge-model"},
            "tools": ["read_file"],
            "strategy": {
                "kind": "tree_of_thoughts",
                "branches": 2,
                "judge": {"objective": "Rate the work from 0 to 1"},
            },
        },
        source="tot.yaml",
    )
    run = await engine.create("answer", blueprint=blueprint, world=tmp_path)
    state = await engine.drive(run.id)
    assert state.status == "completed"
    assert sorted(_models(server)) == ["judge-model", "judge-model", "main-model", "main-model"]
    assert state.strategy is not None
    for branch in state.strategy.branches:
        assert branch.judge_run_id is not None
        log = await engine.store.read(branch.judge_run_id)
        assert [e.data["role"] for e in _of(log, "model.requested")] == ["judge"]


def test_roles_names_old_names_and_bad_names() -> None:
    registry = builtin_registry()
    old = Blueprint.parse(
        {"roles": {"default": MAIN, "summarizer": CHEAP}}, source="old.yaml"
    ).check(registry)
    assert old.roles == {"main": MAIN, "summary": CHEAP}
    assert old.role_model("main") == MAIN
    with pytest.raises(BlueprintError, match=r"roles\.boss: unknown role; choose from main"):
        Blueprint.parse({"roles": {"boss": MAIN}}, source="b.yaml").check(registry)
    with pytest.raises(BlueprintError, match=r"roles\.summary: .*provider:model"):
        Blueprint.parse({"roles": {"summary": "cheap"}}, source="b.yaml").check(registry)
    with pytest.raises(BlueprintError, match=r"roles\.worker: no model"):
        Blueprint.parse({"roles": {"worker": []}}, source="b.yaml").check(registry)
    with pytest.raises(BlueprintError, match=r"b\.yaml: roles.*default is the older name of main"):
        Blueprint.parse({"roles": {"main": MAIN, "default": CHEAP}}, source="b.yaml")
    with pytest.raises(BlueprintError, match=r"context\.compact_at_tokens"):
        Blueprint.parse({"context": {"compact_at_tokens": 0}}, source="b.yaml")


async def test_a_run_refuses_a_role_model_it_cannot_open(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    engine = _engine(helix_home, server)
    blueprint = Blueprint.parse(
        {"model": MAIN, "roles": {"summary": "anthropic:claude-haiku-4-5"}}, source="r.yaml"
    )
    with pytest.raises(Exception, match="ANTHROPIC_API_KEY"):
        await engine.create("x", blueprint=blueprint, world=tmp_path)


async def test_a_runs_own_model_overrides_the_main_role(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of({"text": "Done."}))
    engine = _engine(helix_home, server)
    blueprint = Blueprint.parse({"roles": {"main": MAIN}}, source="r.yaml")
    run = await engine.create("x", blueprint=blueprint, model=CHEAP, world=tmp_path)
    assert run.model == CHEAP
    assert (await engine.drive(run.id)).status == "completed"
    assert _models(server) == ["cheap-model"]


async def test_a_summary_call_cut_off_before_its_record_is_made_once_more(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    """The process stops after the summary was asked for, before it was logged."""
    slow = {"text": "never logged", "delay_s": 3.0}
    server.play(Scenario.of(*TWO_TURNS_THEN_DONE, slow, {"text": "SUMMARY."}, {"text": "Done."}))
    store = MemoryEventStore()
    engine = _engine(helix_home, server, store)
    run = await engine.create("look around", blueprint=_compacting(summary=CHEAP), world=tmp_path)
    driving = asyncio.create_task(engine.drive(run.id))
    while len(server.requests) < 3:  # noqa: ASYNC110 - the server thread records it; no event
        await asyncio.sleep(0.01)
    driving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await driving
    assert _of(await store.read(run.id), "context.compacted") == []

    state = await _engine(helix_home, server, store).drive(run.id)
    assert state.status == "completed"
    assert _models(server) == [
        "main-model",
        "main-model",
        "cheap-model",
        "cheap-model",
        "main-model",
    ]
    (compacted,) = _of(await store.read(run.id), "context.compacted")
    assert compacted.data["summary"] == "SUMMARY."
