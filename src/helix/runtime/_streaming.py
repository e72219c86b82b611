"""Streaming a model's reply to whoever watches the run live (``Engine(deltas=…)``).

A run's model call streams only when its engine was given a ``DeltaSink``: each piece
of text and of a tool call is handed to the sink as it arrives, and the pieces are
assembled into the same ``ModelResponse`` a plain request returns, which the loop logs
as ever (``model.responded``). The pieces are never events: the log is unchanged.

A sink that raises is logged and not called again during that reply; the run goes on.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

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
class ModelDelta:
    """A piece of a reply as it arrives: which run and turn it belongs to, and the piece.

    ``delta``: a ``TextDelta`` (the next text) or a ``ToolCallDelta`` (a call's id and
    name when it starts, then fragments of its JSON arguments, by the call's ``index``).
    """

    run_id: str
    turn: int
    delta: TextDelta | ToolCallDelta


class DeltaSink(Protocol):
    """Where a live view gets the pieces of every reply the engine's runs stream.

    Awaited once per piece, in order, by the run's loop: a slow sink slows the run, so
    it should only hand the piece on. What it raises is logged and dropped.
    """

    async def __call__(self, delta: ModelDelta) -> None:
        """Take one piece."""
        ...


async def streamed_reply(
    model: ModelAdapter, request: ModelRequest, sink: DeltaSink, run_id: str, turn: int
) -> ModelResponse:
    """Stream ``request`` from ``model``, each piece to ``sink``; the assembled response.

    Usage a stream did not report is estimated and marked so (``helix.providers.collect``).
    The model's errors are raised as ``request`` raises them.
    """
    return await collect(
        _forwarded(model.stream(request), sink, run_id, turn), model.provider, request=request
    )


async def _forwarded(
    stream: AsyncIterator[StreamDelta], sink: DeltaSink, run_id: str, turn: int
) -> AsyncIterator[StreamDelta]:
    telling = True
    async for delta in stream:
        if telling and not isinstance(delta, StreamEnd):
            try:
                await sink(ModelDelta(run_id, turn, delta))
            except Exception as error:  # the view's fault: the reply and the run go on
                _log.warning("a delta sink failed (%r): run %s streams no more", error, run_id)
                telling = False
        yield delta
