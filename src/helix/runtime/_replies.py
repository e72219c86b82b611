"""Replies as they stream, for every live view of a process: ``ReplyHub``.

A ``ReplyHub`` is the ``DeltaSink`` of an engine whose runs many views may watch (a
server's dashboard pages, a TUI): each view ``watch``es a run and gets that run's
pieces, from then on, in a bounded queue of its own. A run streams only while someone
watches it (``watching``). Every piece is handed on before the engine logs the reply
it belongs to, so a view that takes what is queued before it shows each event shows
the pieces before their ``model.responded``. A view too slow to take the pieces misses
the rest of that reply's pieces, never the reply: it arrives whole, as always.

Pieces cross processes and sockets as small JSON objects (``piece_message``, parsed
back with ``piece_of``), the wire form the WebSocket streams send (docs/api.md):

- ``{"type": "reply.text", "run_id", "turn", "text"}``: the next text;
- ``{"type": "reply.tool_call", "run_id", "turn", "index", "id", "name", "args"}``: a
  call's start (``id``, ``name``), then fragments of its JSON arguments (``args``);
- ``{"type": "reply.restart", "run_id", "turn", "reason"}``: forget this turn's pieces.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from helix.providers import TextDelta, ToolCallDelta

from ._streaming import ModelDelta, ReplyRestart

WatchListener = Callable[[str, bool], None]
"""Told ``(run_id, True)`` when a run gains its first watcher, ``(run_id, False)`` when
it loses its last (a ``processes`` executor tells the worker driving it)."""


class Watcher:
    """One view's pieces of one run, in order, until it stops watching.

    ``async for`` takes them one at a time; ``wait`` and ``take`` all that are queued at
    once (a socket that must send them before the event that follows them).
    """

    def __init__(self, run_id: str, max_queue: int) -> None:
        self.run_id = run_id
        self.max_queue = max_queue
        self._pieces: deque[ModelDelta] = deque()
        self._ready = asyncio.Event()
        self._skipping: int | None = None
        """The turn whose pieces this view missed some of: it gets no more of them."""

    def give(self, piece: ModelDelta) -> None:
        """Queue ``piece``; drop it (and the rest of its reply) if the view is behind."""
        if self._skipping == piece.turn:
            return
        if len(self._pieces) >= self.max_queue:
            self._skipping = piece.turn
            return
        self._pieces.append(piece)
        self._ready.set()

    async def wait(self) -> None:
        """Until a piece is queued."""
        await self._ready.wait()

    def take(self) -> list[ModelDelta]:
        """Every piece queued now (none: an empty list), oldest first."""
        taken = list(self._pieces)
        self._pieces.clear()
        self._ready.clear()
        return taken

    def __aiter__(self) -> AsyncIterator[ModelDelta]:
        return self

    async def __anext__(self) -> ModelDelta:
        while not self._pieces:
            self._ready.clear()
            await self._ready.wait()
        piece = self._pieces.popleft()
        if not self._pieces:
            self._ready.clear()
        return piece


class ReplyHub:
    """A ``DeltaSink`` that hands each run's pieces to whoever watches that run."""

    def __init__(self, max_queue: int = 1000) -> None:
        self.max_queue = max_queue
        """How many pieces a view may fall behind before it misses the rest of a reply."""
        self._watchers: dict[str, list[Watcher]] = {}
        self._listeners: list[WatchListener] = []

    def watching(self, run_id: str) -> bool:
        """Whether any view watches ``run_id`` now."""
        return bool(self._watchers.get(run_id))

    def watched(self) -> list[str]:
        """The runs some view watches now."""
        return [run_id for run_id, views in self._watchers.items() if views]

    async def __call__(self, delta: ModelDelta) -> None:
        """Hand ``delta`` to its run's watchers (the engine's sink)."""
        self.give(delta)

    def give(self, delta: ModelDelta) -> None:
        """The same, from code that does not await (a pipe's reader)."""
        for view in self._watchers.get(delta.run_id, ()):
            view.give(delta)

    def listen(self, listener: WatchListener) -> None:
        """Tell ``listener`` when a run gains its first watcher or loses its last."""
        self._listeners.append(listener)

    @contextmanager
    def watch(self, run_id: str) -> Iterator[Watcher]:
        """Watch ``run_id``: its pieces from now on, until the block ends."""
        view = Watcher(run_id, self.max_queue)
        views = self._watchers.setdefault(run_id, [])
        views.append(view)
        if len(views) == 1:
            self._tell(run_id, True)
        try:
            yield view
        finally:
            views.remove(view)
            if not views:
                del self._watchers[run_id]
                self._tell(run_id, False)

    def _tell(self, run_id: str, watched: bool) -> None:
        for listener in self._listeners:
            listener(run_id, watched)


def piece_message(delta: ModelDelta) -> dict[str, Any]:
    """``delta`` as its wire message (see the module docstring)."""
    head: dict[str, Any] = {"run_id": delta.run_id, "turn": delta.turn}
    piece = delta.delta
    if isinstance(piece, TextDelta):
        return {"type": "reply.text", **head, "text": piece.text}
    if isinstance(piece, ToolCallDelta):
        call = {"index": piece.index, "id": piece.id, "name": piece.name, "args": piece.args_json}
        return {"type": "reply.tool_call", **head, **call}
    return {"type": "reply.restart", **head, "reason": piece.reason}


def piece_of(message: dict[str, Any]) -> ModelDelta:
    """The piece a wire message carries; ``ValueError`` if it is not one."""
    try:
        run_id, turn, kind = str(message["run_id"]), int(message["turn"]), message["type"]
        if kind == "reply.text":
            return ModelDelta(run_id, turn, TextDelta(str(message["text"])))
        if kind == "reply.tool_call":
            call = ToolCallDelta(
                int(message["index"]),
                _text_or_none(message.get("id")),
                _text_or_none(message.get("name")),
                str(message.get("args") or ""),
            )
            return ModelDelta(run_id, turn, call)
        if kind == "reply.restart":
            return ModelDelta(run_id, turn, ReplyRestart(str(message["reason"])))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"not a reply piece: {error}") from error
    raise ValueError(f"not a reply piece: type {kind!r}")


def _text_or_none(value: object) -> str | None:
    return None if value is None else str(value)
