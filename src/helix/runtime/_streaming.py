"""Streaming a model's reply to whoever watches the run live (``Engine(deltas=…)``).

A run's model call streams only when its engine was given a ``DeltaSink`` and the sink
watches the run when the call starts: each piece of text and of a tool call is handed
to the sink as it arrives, and the pieces are assembled into the same ``ModelResponse``
a plain request returns, which the loop logs as ever (``model.responded``). The pieces
are never events: the log is unchanged.

A stream that breaks after its first piece is asked again as a plain request (retried
as requests are); the sink is told first (``ReplyRestart``: the pieces so far are void).
A sink that raises is logged and not called again during that reply; the run goes on.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from helix.errors import ModelCallError
from helix.providers import (
    ModelAdapter,
    ModelRequest,
    ModelResponse,
    StreamDelta,
    StreamEnd,
    TextDelta,
    ToolCallDelta,
    collect,
)

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReplyRestart:
    """The pieces of this reply so far are void: the reply is being asked again whole."""

    reason: str
    """Why: the stream's error."""


@dataclass(frozen=True, slots=True)
class ModelDelta:
    """A piece of a reply as it arrives: which run and turn it belongs to, and the piece.

    ``delta``: a ``TextDelta`` (the next text), a ``ToolCallDelta`` (a call's id and name
    when it starts, then fragments of its JSON arguments, by the call's ``index``), or a
    ``ReplyRestart`` (forget this turn's pieces: the whole reply comes as its event).
    """

    run_id: str
    turn: int
    delta: TextDelta | ToolCallDelta | ReplyRestart


class DeltaSink(Protocol):
    """Where a live view gets the pieces of the replies of the runs it watches.

    ``watching`` is asked as each model call starts: the call streams only if it says
    yes. The sink is then awaited once per piece, in order, by the run's loop: a slow
    sink slows the run, so it should only hand the piece on. What it raises is logged
    and dropped.
    """

    def watching(self, run_id: str) -> bool:
        """Whether anyone watches the run now (its next reply streams only then)."""
        ...

    async def __call__(self, delta: ModelDelta) -> None:
        """Take one piece."""
        ...


async def streamed_reply(
    model: ModelAdapter, request: ModelRequest, sink: DeltaSink, run_id: str, turn: int
) -> ModelResponse:
    """Stream ``request`` from ``model``, each piece to ``sink``; the assembled response.

    Usage a stream did not report is estimated and marked so (``helix.providers.collect``).
    A stream that fails after a piece was handed on is asked again as a request, the sink
    told first; the model's errors are raised as ``request`` raises them.
    """
    forward = _Forward(sink, run_id, turn)
    try:
        return await collect(forward(model.stream(request)), model.provider, request=request)
    except ModelCallError as error:
        if not forward.handed:
            raise  # nothing shown yet: the adapter retried (or moved on) as for a request
        _log.info("run %s: a stream broke after its first piece (%s); asked again", run_id, error)
        await forward.give(ReplyRestart(str(error)))
        return await model.request(request)


class _Forward:
    """Hands a stream's pieces to the sink as they pass; stops telling it if it fails."""

    def __init__(self, sink: DeltaSink, run_id: str, turn: int) -> None:
        self.sink = sink
        self.run_id = run_id
        self.turn = turn
        self.telling = True
        self.handed = False
        """Whether any piece reached the sink (a broken stream is then asked again)."""

    async def __call__(self, stream: AsyncIterator[StreamDelta]) -> AsyncIterator[StreamDelta]:
        async for delta in stream:
            if not isinstance(delta, StreamEnd):
                await self.give(delta)
            yield delta

    async def give(self, delta: TextDelta | ToolCallDelta | ReplyRestart) -> None:
        if not self.telling:
            return
        self.handed = True
        try:
            await self.sink(ModelDelta(self.run_id, self.turn, delta))
        except Exception as error:  # the view's fault: the reply and the run go on
            _log.warning("a delta sink failed (%r): run %s streams no more", error, self.run_id)
            self.telling = False
