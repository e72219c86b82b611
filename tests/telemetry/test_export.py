"""Runs exported as OpenTelemetry traces to a real OTLP/HTTP collector in the test.

A real engine drives runs on a real SQLite store with a scripted model; the exporter
follows the store as ``helix serve`` does (``TraceExport`` + ``OtlpSink``) or as the
CLI's local door does (``export_while``), and the collector decodes what arrives.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from helix.kernel.events import Event
from helix.kernel.log import EventStore, open_store
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, ModelPrice, RunSetup, decide
from helix.telemetry import (
    OtlpSink,
    SpanFold,
    TraceExport,
    export_while,
    read_otel_settings,
    span_id_of,
    trace_id_of,
)
from helix.telemetry._span import ts_ns
from tests.server.conftest import free_port

from ._collector import Span, collector

CLIENT, INTERNAL, ERROR, OK = 3, 1, 2, 1  # OTLP's SpanKind and StatusCode numbers
PRICE = ModelPrice(input=2.0, output=8.0)  # USD per million tokens

THREE_TURNS = Scenario.of(
    {"text": "writing the greeting", "usage": {"input_tokens": 1000, "output_tokens": 100},
     "tool_calls": [
        {"id": "c1", "name": "write_file", "args": {"path": "a.txt", "content": "SECRET-A\n"}},
        {"id": "c2", "name": "run_command", "args": {"command": "echo hi > b.txt"}}]},
    {"text": "one more", "usage": {"input_tokens": 2000, "output_tokens": 200},
     "tool_calls": [{"id": "c3", "name": "run_command", "args": {"command": "echo no > c.txt"}}]},
    {"text": "all done", "usage": {"input_tokens": 3000, "output_tokens": 300}},
)  # fmt: skip


@pytest.fixture
async def store(helix_home: Path) -> AsyncIterator[EventStore]:
    opened = await open_store(f"sqlite:///{helix_home / 'helix.db'}")
    try:
        yield opened
    finally:
        await opened.close()


def _engine(
    store: EventStore, home: Path, parent: Scenario, child: Scenario | None = None
) -> Engine:
    def model(setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(parent if setup.depth == 0 or child is None else child, label="m1")

    return Engine(store, home=home / "engine", model_factory=model, env={})


async def _answer(store: EventStore, run_id: str, decisions: list[str]) -> None:
    """Decide each approval the run asks, in order, as a person would."""
    async for event in store.subscribe(run_id):
        if event.type == "approval.requested":
            decision = decisions.pop(0)
            await decide(store, run_id, str(event.data["request_id"]), decision, by="user:ann")
            if not decisions:
                return


async def _three_turns(store: EventStore, home: Path, world: Path) -> str:
    """The run: a file written, a command a person allows, one a person denies."""
    engine = _engine(store, home, THREE_TURNS)
    blueprint = Blueprint(model="scripted:m1", prices={"scripted:m1": PRICE})
    record = await engine.create("greet", blueprint=blueprint, world=world)
    async with asyncio.TaskGroup() as group:
        group.create_task(_answer(store, record.id, ["allow", "deny"]))
        driving = group.create_task(engine.drive(record.id))
    assert driving.result().status == "completed"
    return record.id


def _by_name(spans: list[Span]) -> dict[str, list[Span]]:
    found: dict[str, list[Span]] = {}
    for span in spans:
        found.setdefault(span.name, []).append(span)
    return found


def _opened_by(log: list[Event], kind: str, **data: Any) -> Event:
    (event,) = [e for e in log if e.type == kind and all(e.data[k] == v for k, v in data.items())]
    return event


def _texts(spans: list[Span]) -> str:
    """Every string the spans carry (names, attributes, events), to look for content in."""
    parts: list[str] = []
    for span in spans:
        parts += [span.name, span.description, *map(str, span.attributes.values())]
        for name, _, attributes in span.events:
            parts += [name, *map(str, attributes.values())]
    return "\n".join(parts)


async def test_a_run_is_exported_with_the_genai_conventions(
    store: EventStore, helix_home: Path, tmp_path: Path
) -> None:
    with collector() as received:
        env = {"HELIX_OTEL_ENDPOINT": received.url, "HELIX_OTEL_HEADERS": "x-api-key=abc%20def"}
        settings = read_otel_settings(env)
        assert settings is not None
        sink = OtlpSink(settings, delay_ms=50)
        export = TraceExport(sink)
        async with asyncio.TaskGroup() as group:
            following = group.create_task(export.follow(store))
            await export.listening.wait()
            run_id = await _three_turns(store, helix_home, tmp_path)
            head = (await store.get_run(run_id)).head
            assert await export.reached(run_id, head, timeout_s=30)
            following.cancel()
        await asyncio.to_thread(sink.close)
        spans = await asyncio.to_thread(received.wait_for, 10)
    assert len(spans) == 10  # the run, 3 turns, 3 model calls, 3 tool calls
    assert set(received.paths) == {"/v1/traces"}
    assert all(h["x-api-key"] == "abc def" for h in received.headers)
    assert all(h["content-type"] == "application/x-protobuf" for h in received.headers)
    log = await store.read(run_id)
    assert {s.trace_id for s in spans} == {trace_id_of(run_id)}
    assert spans[0].resource["service.name"] == "helix"
    named = _by_name(spans)

    (run,) = named["invoke_agent default"]
    assert run.span_id == span_id_of(run_id)
    assert run.parent_id is None
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.conversation.id"] == run_id
    assert run.attributes["helix.run.status"] == "completed"
    assert run.status == OK
    assert run.attributes["gen_ai.usage.input_tokens"] == 6000
    assert run.attributes["gen_ai.usage.output_tokens"] == 600
    assert run.attributes["helix.cost_usd"] == pytest.approx((6000 * 2 + 600 * 8) / 1e6)
    assert (run.start_ns, run.end_ns) == (ts_ns(log[0].ts), ts_ns(log[-1].ts))

    turns = sorted((s for s in spans if s.name.startswith("turn ")), key=lambda s: s.start_ns)
    assert [t.attributes["helix.turn"] for t in turns] == [1, 2, 3]
    for number, turn in enumerate(turns, 1):
        started = _opened_by(log, "turn.started", turn=number)
        ended = _opened_by(log, "turn.ended", turn=number)
        assert turn.parent_id == run.span_id
        assert turn.span_id == span_id_of(run_id, started.seq)
        assert (turn.start_ns, turn.end_ns) == (ts_ns(started.ts), ts_ns(ended.ts))

    chats = sorted(named["chat m1"], key=lambda s: s.start_ns)
    assert [c.parent_id for c in chats] == [t.span_id for t in turns]
    for chat, tokens, reason in zip(
        chats, (1000, 2000, 3000), ("tool_calls", "tool_calls", "stop"), strict=False
    ):
        assert chat.kind == CLIENT
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.provider.name"] == "scripted"
        assert chat.attributes["gen_ai.request.model"] == "m1"
        assert chat.attributes["gen_ai.response.model"] == "m1"
        assert chat.attributes["gen_ai.usage.input_tokens"] == tokens
        assert chat.attributes["gen_ai.usage.output_tokens"] == tokens // 10
        assert chat.attributes["helix.cost_usd"] == pytest.approx(tokens * 2.8 / 1e6)
        assert chat.attributes["gen_ai.response.finish_reasons"] == (reason,)

    tools = {s.attributes["gen_ai.tool.call.id"]: s for s in named["execute_tool write_file"]}
    tools |= {s.attributes["gen_ai.tool.call.id"]: s for s in named["execute_tool run_command"]}
    for call_id, turn in (("c1", turns[0]), ("c2", turns[0]), ("c3", turns[1])):
        tool = tools[call_id]
        requested = _opened_by(log, "tool.requested", call_id=call_id)
        completed = _opened_by(log, "tool.completed", call_id=call_id)
        assert tool.parent_id == turn.span_id
        assert tool.kind == INTERNAL
        assert tool.span_id == span_id_of(run_id, requested.seq)
        assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
        assert (tool.start_ns, tool.end_ns) == (ts_ns(requested.ts), ts_ns(completed.ts))
    assert tools["c1"].attributes["gen_ai.tool.name"] == "write_file"
    assert [tools[c].attributes["helix.tool.outcome"] for c in ("c1", "c2", "c3")] == [
        "ok",
        "ok",
        "denied",
    ]
    asked = tools["c2"].events
    gates = [
        (a["helix.gate.name"], a["helix.gate.verdict"]) for n, _, a in asked if n == "gate.decided"
    ]
    assert ("approval", "ask") in gates
    assert ("ceiling", "allow") in gates
    assert not any("helix.gate.reason" in a for _, _, a in asked)  # off unless asked for
    names = [name for name, _, _ in asked]
    assert (
        names.index("approval.requested")
        < names.index("approval.decided")
        < names.index("tool.started")
    )
    (decided,) = [a for n, _, a in asked if n == "approval.decided"]
    assert decided["helix.approval.decision"] == "allow"
    assert decided["helix.approval.by"] == "user:ann"
    (refused,) = [a for n, _, a in tools["c3"].events if n == "approval.decided"]
    assert refused["helix.approval.decision"] == "deny"
    assert "tool.started" not in [n for n, _, _ in tools["c3"].events]
    assert tools["c2"].attributes["helix.tool.sandbox"]
    # Nothing the model or a tool said is exported: no reply, argument or content.
    texts = _texts(spans)
    for said in ("writing the greeting", "SECRET-A", "echo hi", "b.txt", "all done"):
        assert said not in texts


DELEGATING = Scenario.of(
    {"text": "handing over", "tool_calls": [
        {"id": "d1", "name": "delegate", "args": {"objective": "write hello.txt"}}]},
    {"text": "done"},
)  # fmt: skip
CHILD = Scenario.of(
    {"text": "writing", "tool_calls": [
        {"id": "w1", "name": "write_file", "args": {"path": "hello.txt", "content": "hi\n"}}]},
    {"text": "wrote it"},
)  # fmt: skip


async def test_a_child_run_is_a_span_under_the_call_that_delegated(
    store: EventStore, helix_home: Path, tmp_path: Path
) -> None:
    """The local door's way: ``export_while`` follows the run it drives and its children."""
    engine = _engine(store, helix_home, DELEGATING, CHILD)
    other = await engine.create(
        "not driven here", blueprint=Blueprint(model="scripted:m1"), world=tmp_path
    )
    record = await engine.create("plan", blueprint=Blueprint(model="scripted:m1"), world=tmp_path)
    with collector() as received:
        env = {"HELIX_OTEL_ENDPOINT": received.url + "/", "HELIX_OTEL_GATE_REASONS": "on"}
        settings = read_otel_settings(env)
        assert settings is not None
        state = await export_while(store, settings, record.id, engine.drive(record.id))
        assert state.status == "completed"
        await engine.drive(other.id)  # after the export: not sent
        spans = received.wait_for(12)
    assert len(spans) == 12  # 2 runs, each: (run, 2 turns, 2 model calls, 1 tool call)
    (child_id,) = state.children
    assert {s.trace_id for s in spans} == {trace_id_of(record.id)}
    named = _by_name(spans)
    (delegate,) = named["execute_tool delegate"]
    (child,) = [s for s in named["invoke_agent default"] if s.span_id == span_id_of(child_id)]
    assert child.parent_id == delegate.span_id
    assert child.attributes["helix.run.parent_id"] == record.id
    assert child.attributes["helix.run.depth"] == 1
    assert delegate.attributes["helix.child_run_id"] == child_id
    assert child.start_ns >= delegate.start_ns
    assert child.end_ns <= delegate.end_ns
    (write,) = named["execute_tool write_file"]
    child_turns = {
        s.span_id for s in spans if s.name.startswith("turn ") and s.parent_id == child.span_id
    }
    assert write.parent_id in child_turns
    reasons = [a.get("helix.gate.reason") for n, _, a in write.events if n == "gate.decided"]
    assert "'hello.txt' is inside the world" in reasons  # HELIX_OTEL_GATE_REASONS=on
    assert not [s for s in spans if s.attributes.get("helix.run.id") == other.id]


async def test_a_restarted_exporter_sends_only_what_closes_after_it_with_the_same_ids(
    store: EventStore, helix_home: Path, tmp_path: Path
) -> None:
    run_id = await _three_turns(store, helix_home, tmp_path)
    log = await store.read(run_id)
    fold = SpanFold()
    closed_at = {e.seq: fold.apply(e) for e in log}
    everything = {s.span_id: s for spans in closed_at.values() for s in spans}
    assert len(everything) == 10

    class Kept:
        spans: list[Any] = []

        def export(self, spans: list[Any]) -> None:
            self.spans.extend(spans)

    middle = _opened_by(log, "turn.ended", turn=1).seq + 1  # the exporter started here
    late = TraceExport(Kept())
    for event in log[middle:]:
        await late.handle(store, event)
    sent = {s.span_id: s for s in Kept.spans}
    closed_late = {s.span_id for seq, spans in closed_at.items() if seq >= middle for s in spans}
    assert len(closed_late) == 6  # turn 2, its model and tool call; turn 3 and its model; the run
    assert set(sent) == closed_late  # turns 2 and 3, their calls, the run: nothing twice
    assert not set(sent) & {span_id_of(run_id, _opened_by(log, "turn.started", turn=1).seq)}
    for span_id, span in sent.items():
        assert span == everything[span_id]  # the same ids, times and attributes


async def test_a_collector_that_is_down_does_not_hold_or_fail_the_run(
    store: EventStore, helix_home: Path, tmp_path: Path
) -> None:
    port = free_port()  # nobody listens on it
    env = {"HELIX_OTEL_ENDPOINT": f"http://127.0.0.1:{port}", "OTEL_EXPORTER_OTLP_TIMEOUT": "500"}
    settings = read_otel_settings(env)
    assert settings is not None
    assert settings.timeout_s == 0.5
    engine = _engine(store, helix_home, Scenario.of({"text": "fine"}))
    record = await engine.create("x", blueprint=Blueprint(model="scripted:m1"), world=tmp_path)
    state = await asyncio.wait_for(
        export_while(store, settings, record.id, engine.drive(record.id)), 60
    )
    assert state.status == "completed"


async def test_an_error_of_the_work_is_raised_as_it_is(
    store: EventStore, helix_home: Path, tmp_path: Path
) -> None:
    with collector() as received:
        settings = read_otel_settings({"HELIX_OTEL_ENDPOINT": received.url})
        assert settings is not None

        async def broken() -> None:
            raise RuntimeError("the drive broke")

        with pytest.raises(RuntimeError, match="the drive broke"):
            await export_while(store, settings, "run_none", broken())


async def test_a_follower_that_falls_behind_reads_the_log_and_sends_each_span_once(
    store: EventStore, helix_home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Kept:
        def __init__(self) -> None:
            self.spans: list[Any] = []

        def export(self, spans: list[Any]) -> None:
            self.spans.extend(spans)

    kept = Kept()
    export = TraceExport(kept, max_queue=2)  # every append of the run overflows it
    async with asyncio.TaskGroup() as group:
        following = group.create_task(export.follow(store))
        await export.listening.wait()
        run_id = await _three_turns(store, helix_home, tmp_path)
        assert await export.reached(run_id, (await store.get_run(run_id)).head, timeout_s=30)
        following.cancel()
    fold = SpanFold()
    everything = [s for e in await store.read(run_id) for s in fold.apply(e)]
    assert "trace export fell behind" in caplog.text  # it did overflow
    assert sorted(kept.spans, key=lambda s: s.span_id) == sorted(
        everything, key=lambda s: s.span_id
    )


async def test_a_fork_is_a_trace_of_its_own_that_says_where_it_branched(
    store: EventStore, helix_home: Path, tmp_path: Path
) -> None:
    from helix.kernel.session import turn_boundary

    steps = Scenario.of(
        {"text": "one", "tool_calls": [{"id": "r1", "name": "read_file", "args": {"path": "x"}}]},
        {"text": "two"},
        repeat=True,
    )
    engine = _engine(store, helix_home, steps)
    record = await engine.create("x", blueprint=Blueprint(model="scripted:m1"), world=tmp_path)
    await engine.drive(record.id)
    at = await turn_boundary(store, record.id, 1)
    fork = await store.fork(record.id, at_seq=at, message="again", actor="user:ann")

    class Kept:
        def __init__(self) -> None:
            self.spans: list[Any] = []

        def export(self, spans: list[Any]) -> None:
            self.spans.extend(spans)

    kept = Kept()
    state = await _drive_following(store, fork.id, engine, kept)
    assert state == "completed"
    runs = [s for s in kept.spans if s.attributes.get("gen_ai.operation.name") == "invoke_agent"]
    (run,) = runs
    assert run.trace_id == trace_id_of(fork.id)
    assert run.parent_id is None
    assert run.span_id == span_id_of(fork.id)
    assert run.attributes["helix.fork.parent_id"] == record.id
    assert (run.attributes["helix.fork.seq"], run.attributes["helix.fork.turn"]) == (at, 1)
    turns = [s.attributes["helix.turn"] for s in kept.spans if s.name.startswith("turn ")]
    assert turns == [2]  # the fork's own turns only: turn 1 is its parent's
    assert all(s.trace_id == run.trace_id for s in kept.spans)


async def _drive_following(store: EventStore, run_id: str, engine: Engine, sink: Any) -> str:
    """Drive the run while a follower (only that run) hands its spans to ``sink``."""
    export = TraceExport(sink, only={run_id})
    async with asyncio.TaskGroup() as group:
        following = group.create_task(export.follow(store))
        await export.listening.wait()
        state = await engine.drive(run_id)
        assert await export.reached(run_id, (await store.get_run(run_id)).head, timeout_s=30)
        following.cancel()
    return state.status


async def test_a_retried_model_call_and_a_failed_tool_are_marked(
    store: EventStore, helix_home: Path, tmp_path: Path
) -> None:
    """A real provider adapter (OpenAI's dialect) against the mock model server over HTTP."""
    from helix.testing import MockModelServer

    steps = Scenario.of(
        {"error": {"status": 503, "headers": {"Retry-After": "0"}}},
        {"text": "reading", "tool_calls": [
            {"id": "r1", "name": "read_file", "args": {"path": "missing.txt"}}]},
        {"text": "it is not there"},
    )  # fmt: skip
    with MockModelServer(steps) as server:
        env = {"OPENAI_API_KEY": "test-no-key", "OPENAI_BASE_URL": server.openai_base_url}
        engine = Engine(store, home=helix_home / "engine", env=env)
        record = await engine.create("read", model="openai:gpt-4.1", world=tmp_path)

        class Kept:
            def __init__(self) -> None:
                self.spans: list[Any] = []

            def export(self, spans: list[Any]) -> None:
                self.spans.extend(spans)

        kept = Kept()
        assert await _drive_following(store, record.id, engine, kept) == "completed"
    first = min((s for s in kept.spans if s.name == "chat gpt-4.1"), key=lambda s: s.start_ns)
    (failed,) = [e for e in first.events if e.name == "model.failed"]
    assert failed.attributes["helix.attempt"] == 1
    assert failed.attributes["helix.retry_in_s"] is not None
    assert first.status == "unset"  # the retry answered
    assert first.attributes["gen_ai.provider.name"] == "openai"
    (tool,) = [s for s in kept.spans if s.name == "execute_tool read_file"]
    assert tool.attributes["helix.tool.outcome"] == "failed"
    assert (tool.status, tool.attributes["error.type"]) == ("error", "tool_failed")
    assert "missing.txt" not in (tool.description or "")
