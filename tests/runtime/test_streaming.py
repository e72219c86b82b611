"""Streaming in runs: a live view gets the reply's pieces as they arrive; the log is unchanged.

A real engine and store; the model is the mock model server, spoken to through the
OpenAI SDK (plain and streamed requests), so the pieces are the adapter's own.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from helix.kernel.events import Event
from helix.providers import Scenario, TextDelta, ToolCallDelta
from helix.runtime import Blueprint, DeltaSink, Engine, ModelDelta, ReplyRestart, cancel
from helix.testing import MockModelServer

from .conftest import mock_engine

MODEL = "openai:mock-model"
WORDS = "The notes are written, and every word of this reply arrives in pieces."
WRITE = {"name": "write_file", "args": {"path": "notes.txt", "content": "hello\n"}}


class Sink:
    """Keeps every piece it is handed (of every run, or of the runs it is told to watch)."""

    def __init__(self, runs: set[str] | None = None) -> None:
        self.deltas: list[ModelDelta] = []
        self.runs = runs

    def watching(self, run_id: str) -> bool:
        return self.runs is None or run_id in self.runs

    async def __call__(self, delta: ModelDelta) -> None:
        self.deltas.append(delta)

    def text(self, turn: int) -> str:
        return "".join(
            d.delta.text for d in self.deltas if d.turn == turn and isinstance(d.delta, TextDelta)
        )


def _engine(home: Path, server: MockModelServer, deltas: DeltaSink | None) -> Engine:
    return mock_engine(home, server, deltas=deltas)


def _blueprint() -> Blueprint:
    return Blueprint.parse({"model": MODEL, "tools": ["write_file"]}, source="stream.yaml")


def _responded(log: list[Event]) -> list[dict[str, Any]]:
    return [e.data for e in log if e.type == "model.responded"]


async def test_a_sink_gets_the_pieces_in_order_and_the_log_records_the_whole_reply(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of({"text": "Writing.", "tool_calls": [WRITE]}, {"text": WORDS}))
    sink = Sink()
    engine = _engine(helix_home, server, sink)
    run = await engine.create("write notes", blueprint=_blueprint(), world=tmp_path)

    state = await engine.drive(run.id)

    assert state.status == "completed"
    assert (tmp_path / "notes.txt").read_text() == "hello\n"
    first, second = _responded(await engine.store.read(run.id))
    assert {d.run_id for d in sink.deltas} == {run.id}
    assert sink.text(1) == first["text"] == "Writing."
    assert sink.text(2) == second["text"] == WORDS
    assert len([d for d in sink.deltas if d.turn == 2]) > 1  # pieces, not the reply at once
    calls = [d.delta for d in sink.deltas if isinstance(d.delta, ToolCallDelta)]
    assert calls[0].name == "write_file"
    assert calls[0].id == first["tool_calls"][0]["id"]
    assert json.loads("".join(c.args_json for c in calls)) == WRITE["args"]
    assert all(d.turn == 1 for d in sink.deltas if isinstance(d.delta, ToolCallDelta))
    assert [r.stream for r in server.requests] == [True, True]
    # the server reported usage: it is logged as reported, not estimated
    assert first["usage"]["estimated"] is False
    assert first["usage"]["input_tokens"] > 0


async def test_without_a_sink_the_engine_sends_plain_requests(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of({"text": WORDS}))
    engine = _engine(helix_home, server, None)
    run = await engine.create("say it", blueprint=_blueprint(), world=tmp_path)

    assert (await engine.drive(run.id)).status == "completed"

    assert [(r.stream, "stream" in r.body) for r in server.requests] == [(False, False)]
    (said,) = _responded(await engine.store.read(run.id))
    assert said["text"] == WORDS
    assert said["usage"]["estimated"] is False


async def test_a_stream_without_usage_is_estimated_and_marked_so(
    tmp_path: Path, helix_home: Path
) -> None:
    with MockModelServer(Scenario.of({"text": WORDS}), stream_usage=False) as server:
        engine = _engine(helix_home, server, Sink())
        run = await engine.create("say it", blueprint=_blueprint(), world=tmp_path)
        assert (await engine.drive(run.id)).status == "completed"
        assert server.requests[0].body["stream_options"] == {"include_usage": True}

    (said,) = _responded(await engine.store.read(run.id))
    usage = said["usage"]
    assert usage["estimated"] is True
    assert usage["output_tokens"] == len(WORDS) // 4
    assert usage["input_tokens"] > len("say it") // 4  # the system prompt and tools count too
    record = await engine.store.get_run(run.id)
    assert record.input_tokens == usage["input_tokens"]  # what the run counts, never zero


async def test_a_sink_that_raises_leaves_the_run_alone(
    tmp_path: Path, helix_home: Path, server: MockModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.play(Scenario.of({"text": WORDS}))

    class Broken(Sink):
        async def __call__(self, delta: ModelDelta) -> None:
            self.deltas.append(delta)
            raise RuntimeError("the view fell over")

    broken = Broken()
    calls = broken.deltas
    engine = _engine(helix_home, server, broken)
    run = await engine.create("say it", blueprint=_blueprint(), world=tmp_path)

    assert (await engine.drive(run.id)).status == "completed"

    assert len(calls) == 1  # not called again for the rest of the reply
    (said,) = _responded(await engine.store.read(run.id))
    assert said["text"] == WORDS
    assert "a delta sink failed" in caplog.text


async def test_a_failure_before_the_first_piece_is_retried(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    busy = {"status": 503, "message": "busy", "headers": {"Retry-After": "0"}}
    server.play(Scenario.of({"error": busy}, {"text": WORDS}))
    sink = Sink()
    engine = _engine(helix_home, server, sink)
    run = await engine.create("say it", blueprint=_blueprint(), world=tmp_path)

    assert (await engine.drive(run.id)).status == "completed"

    log = await engine.store.read(run.id)
    assert [e.type for e in log if e.type.startswith("model.")] == [
        "model.requested",
        "model.failed",
        "model.responded",
    ]
    assert sink.text(1) == WORDS  # the second attempt's pieces, once
    assert [r.stream for r in server.requests] == [True, True]


async def test_a_cancel_while_the_reply_streams_ends_the_run_as_during_a_request(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of({"text": WORDS}))
    arrived = asyncio.Event()

    class Stuck(Sink):
        async def __call__(self, delta: ModelDelta) -> None:  # the first piece, then nothing
            arrived.set()
            await asyncio.Event().wait()

    engine = _engine(helix_home, server, Stuck())
    run = await engine.create("say it", blueprint=_blueprint(), world=tmp_path)
    drive = asyncio.create_task(engine.drive(run.id))
    await asyncio.wait_for(arrived.wait(), 30)

    await cancel(engine.store, run.id, by="user:ann")
    state = await asyncio.wait_for(drive, 30)

    assert state.status == "cancelled"
    types = [e.type for e in await engine.store.read(run.id)]
    assert "model.responded" not in types
    assert types[-1] == "run.cancelled"


async def test_a_fallback_chain_streams_from_the_model_that_answers(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(
        Scenario.of({"error": {"status": 400, "message": "no such model"}}, {"text": WORDS})
    )
    sink = Sink()
    engine = _engine(helix_home, server, sink)
    chain = Blueprint.parse({"model": [MODEL, "openai:other-model"]}, source="chain.yaml")
    run = await engine.create("say it", blueprint=chain, world=tmp_path)

    assert (await engine.drive(run.id)).status == "completed"

    (said,) = _responded(await engine.store.read(run.id))
    assert said["model"] == "other-model"
    assert said["text"] == sink.text(1) == WORDS
    assert [r.body["model"] for r in server.requests] == ["mock-model", "other-model"]
    assert all(r.stream for r in server.requests)


async def test_a_run_nobody_watches_sends_plain_requests(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of({"text": WORDS}))
    sink = Sink(runs={"run_someone_else"})
    engine = _engine(helix_home, server, sink)
    run = await engine.create("say it", blueprint=_blueprint(), world=tmp_path)

    assert (await engine.drive(run.id)).status == "completed"

    assert [r.stream for r in server.requests] == [False]
    assert sink.deltas == []
    (said,) = _responded(await engine.store.read(run.id))
    assert said["text"] == WORDS


async def test_a_stream_that_breaks_after_a_piece_is_asked_again_whole(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    broken = {"text": "The notes are wri", "error": {"status": 500, "mid_stream": True}}
    server.play(Scenario.of(broken, {"text": WORDS}))
    sink = Sink()
    engine = _engine(helix_home, server, sink)
    run = await engine.create("say it", blueprint=_blueprint(), world=tmp_path)

    assert (await engine.drive(run.id)).status == "completed"

    pieces = [d.delta for d in sink.deltas]
    restarts = [p for p in pieces if isinstance(p, ReplyRestart)]
    assert len(restarts) == 1
    assert restarts[0].reason
    before = pieces[: pieces.index(restarts[0])]
    assert "".join(p.text for p in before if isinstance(p, TextDelta)) == "The notes are wri"
    assert pieces[-1] == restarts[0]  # the reply asked again is not streamed: it is logged
    assert [r.stream for r in server.requests] == [True, False]
    log = await engine.store.read(run.id)
    (said,) = _responded(log)
    assert said["text"] == WORDS
    assert [e.type for e in log if e.type.startswith("model.")] == [
        "model.requested",
        "model.failed",  # the broken stream, said; then the request that answered
        "model.responded",
    ]
    assert "run.failed" not in [e.type for e in log]
