"""``LocalApi.replies``: a run's replies as they stream, from the engine's ``ReplyHub``.

A view watching a run makes its model calls stream (each call that starts from then
on); its pieces are handed on until the run ends (its terminal event is logged) or the
caller stops. Without a hub (an engine nobody gave one) nothing streams: the call just
waits for the run's end.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING

from helix.kernel.events import TERMINAL_EVENTS, TERMINAL_STATUSES, Event

from ._reply_models import ReplyPiece

if TYPE_CHECKING:
    from helix.kernel.log import EventStore, RunRecord
    from helix.runtime import ModelDelta, ReplyHub, Watcher


class LocalReplies:
    """``HelixApi.replies`` (a mixin: it uses the API's store and its reply hub)."""

    if TYPE_CHECKING:
        store: EventStore
        _reply_source: ReplyHub | Callable[[], ReplyHub] | None

        async def resolve(self, run_id: str) -> RunRecord: ...

    @property
    def reply_hub(self) -> ReplyHub | None:
        """Where this door's ``replies`` come from (made now if given as a function).

        ``None``: nothing streams to this door's callers.
        """
        from helix.runtime import ReplyHub

        source = self._reply_source
        if source is None or isinstance(source, ReplyHub):
            return source
        hub = self._reply_source = source()
        return hub

    async def replies(self, run_id: str) -> AsyncGenerator[ReplyPiece, None]:
        """The pieces of the run's replies as they stream, until the run ends."""
        from helix.runtime import piece_message

        record = await self.resolve(run_id)
        if record.status in TERMINAL_STATUSES:
            return
        hub = self.reply_hub
        with contextlib.ExitStack() as watching:
            watcher = None if hub is None else watching.enter_context(hub.watch(record.id))
            async with self.store.subscribe(record.id, after=record.head) as live:
                async for piece in _until_ended(watcher, live):
                    yield ReplyPiece.of(piece_message(piece))


async def _until_ended(
    watcher: Watcher | None, live: AsyncIterator[Event]
) -> AsyncGenerator[ModelDelta, None]:
    """The watcher's pieces until ``live`` (the run's events) brings its end."""

    async def end() -> None:
        async for event in live:
            if event.type in TERMINAL_EVENTS:
                return

    async with asyncio.TaskGroup() as group:
        ending = group.create_task(end())
        while watcher is not None:
            ready = group.create_task(watcher.wait())
            await asyncio.wait({ready, ending}, return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()
            for piece in watcher.take():  # given before the end was logged: all are here
                yield piece
            if ending.done():
                return
        await ending
