"""``ReplyHub``: the pieces of watched runs' replies, for every live view of a process.

The hub's own rules (who watches, a view that falls behind, the wire form), then a real
engine whose runs stream only while a view watches them (the mock model server, through
the OpenAI SDK).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helix.providers import Scenario, TextDelta, ToolCallDelta
from helix.runtime import (
    Blueprint,
    ModelDelta,
    ReplyHub,
    ReplyRestart,
    piece_message,
    piece_of,
)
from helix.testing import MockModelServer

from .conftest import mock_engine

WORDS = "Every word of this reply reaches the view that watches the run, in pieces."


def _piece(run_id: str, text: str, turn: int = 1) -> ModelDelta:
    return ModelDelta(run_id, turn, TextDelta(text))


async def test_a_run_is_watched_while_a_view_watches_it_and_listeners_are_told() -> None:
    hub = ReplyHub()
    told: list[tuple[str, bool]] = []
    hub.listen(lambda run_id, watched: told.append((run_id, watched)))

    assert not hub.watching("run_a")
    with hub.watch("run_a") as first:
        with hub.watch("run_a") as second:
            assert hub.watching("run_a")
            assert hub.watched() == ["run_a"]
            await hub(_piece("run_a", "hello"))
            await hub(_piece("run_b", "not yours"))
        assert hub.watching("run_a")  # the first view still watches
    assert not hub.watching("run_a")
    assert hub.watched() == []

    assert told == [("run_a", True), ("run_a", False)]  # first watcher in, last out
    assert (await anext(first)).delta == TextDelta("hello")
    assert (await anext(second)).delta == TextDelta("hello")


async def test_a_view_that_falls_behind_misses_the_rest_of_that_reply_only() -> None:
    hub = ReplyHub(max_queue=2)
    with hub.watch("run_a") as view:
        for text in ("a", "b", "c", "d"):  # the queue holds two: c is dropped, then d too
            hub.give(_piece("run_a", text, turn=1))
        hub.give(_piece("run_a", "next", turn=2))  # still full: dropped, turn 2 skipped
        got = [await anext(view), await anext(view)]
        hub.give(_piece("run_a", "more of 2", turn=2))  # turn 2 was cut: no more of it
        hub.give(_piece("run_a", "three", turn=3))
        got.append(await anext(view))

    assert [(p.turn, p.delta) for p in got] == [
        (1, TextDelta("a")),
        (1, TextDelta("b")),
        (3, TextDelta("three")),
    ]


@pytest.mark.parametrize(
    "delta",
    [TextDelta("hi"), ToolCallDelta(0, "call_1", "write_file", '{"pa'), ReplyRestart("broke")],
)
def test_a_piece_crosses_the_wire_and_back_unchanged(
    delta: TextDelta | ToolCallDelta | ReplyRestart,
) -> None:
    piece = ModelDelta("run_a", 3, delta)
    message = piece_message(piece)

    assert message["type"].startswith("reply.")
    assert "seq" not in message  # never taken for an event
    assert piece_of(message) == piece


@pytest.mark.parametrize(
    "message",
    [
        {},
        {"type": "reply.text", "run_id": "run_a"},
        {"type": "reply.text", "run_id": "run_a", "turn": "x", "text": "hi"},
        {"type": "model.responded", "run_id": "run_a", "turn": 1},
        {"type": "reply.tool_call", "run_id": "run_a", "turn": 1},
    ],
)
def test_a_message_that_is_no_piece_is_refused(message: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="not a reply piece"):
        piece_of(message)


async def test_an_engines_runs_stream_to_the_hub_only_while_watched(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    server.play(Scenario.of({"text": WORDS}, {"text": WORDS}))
    hub = ReplyHub()
    engine = mock_engine(helix_home, server, deltas=hub)
    blueprint = Blueprint.parse({"model": "openai:mock-model"}, source="hub.yaml")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()

    alone = await engine.create("say it", blueprint=blueprint, world=tmp_path / "a")
    assert (await engine.drive(alone.id)).status == "completed"

    watched = await engine.create("say it", blueprint=blueprint, world=tmp_path / "b")
    with hub.watch(watched.id) as view:
        assert (await engine.drive(watched.id)).status == "completed"
        pieces: list[ModelDelta] = []
        while _text(pieces) != WORDS:  # queued while the run went on: every piece is there
            pieces.append(await asyncio.wait_for(anext(view), 30))

    assert [r.stream for r in server.requests] == [False, True]  # the unwatched run: a request
    assert {p.run_id for p in pieces} == {watched.id}
    assert len(pieces) > 1


def _text(pieces: list[ModelDelta]) -> str:
    return "".join(p.delta.text for p in pieces if isinstance(p.delta, TextDelta))
