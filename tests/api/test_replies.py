"""``HelixApi.replies``: a run's replies as they are written, through both doors.

A run waits on an approval; a follower starts; once the door says the run is watched,
the approval is given, and the next reply streams: its first piece arrives while the
mock model server holds the rest (so the reply is not in the log yet), then the rest,
and the follow ends with the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

import pytest

from helix import AsyncClient
from helix.api import ReplyPiece
from helix.errors import RunNotFoundError
from helix.testing import MockModelServer

from .conftest import MODEL, Door, play

ASK = {"name": "run_command", "args": {"command": "true"}}
WORDS = "The command ran, and this reply was read by its follower as it was written."
WAIT_S = 60.0
"""A safety net for a busy machine, never a performance limit."""


async def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def _waiting(client: AsyncClient, run_id: str) -> None:
    async with contextlib.aclosing(client.events(run_id, follow=True)) as events:
        async for event in events:
            if event.type == "approval.requested":
                return


def _text(pieces: list[ReplyPiece]) -> str:
    return "".join(p.text or "" for p in pieces if p.type == "reply.text")


async def test_a_follower_reads_the_reply_as_it_is_written(
    door: Door, client: AsyncClient, model_server: MockModelServer
) -> None:
    play(
        model_server,
        {"text": "Running it.", "tool_calls": [ASK]},
        {"text": WORDS, "pause_mid_stream": True},
    )
    run = await client.create("run true", model=MODEL)
    await _waiting(client, run.id)
    pieces: list[ReplyPiece] = []
    first = asyncio.Event()

    async def follow() -> None:
        async with contextlib.aclosing(client.replies(run.id)) as replies:
            async for piece in replies:
                pieces.append(piece)
                first.set()

    async with asyncio.TaskGroup() as group:
        following = group.create_task(follow())
        await _until(lambda: door.reply_hub(client.api).watching(run.id), "the follower to watch")
        await client.decide(run.id, None, "allow")
        await asyncio.wait_for(first.wait(), WAIT_S)
        said = [e async for e in client.events(run.id) if e.type == "model.responded"]
        assert len(said) == 1  # the reply being written is not in the log yet
        model_server.release()
        await asyncio.wait_for(following, WAIT_S)  # it ends with the run

    assert (await client.get(run.id)).status == "completed"
    assert _text(pieces) == WORDS
    assert {(p.run_id, p.turn) for p in pieces} == {(run.id, 2)}
    assert [r.stream for r in model_server.requests] == [False, True]  # turn 1: nobody watched
    hub = door.reply_hub(client.api)  # the follower's watch ends with it (once the server sees it)
    await _until(lambda: not hub.watching(run.id), "the watch to end")


async def test_an_ended_run_has_no_replies_to_follow(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Done."})
    run = await client.create("say done", model=MODEL)
    await client.wait(run.id)

    assert [p async for p in client.replies(run.id)] == []
    with pytest.raises(RunNotFoundError):
        _ = [p async for p in client.replies("run_nosuchrun")]
