"""``HttpApi.replies``: ``WS /runs/{id}/stream?replies=true``, its pieces only."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING

from helix.kernel.events import TERMINAL_EVENTS

from ._http_socket import run_messages
from ._reply_models import PIECE_TYPES, ReplyPiece

if TYPE_CHECKING:
    from ._models import Run


class HttpReplies:
    """``HttpApi.replies`` (a mixin over its ``url``, ``get`` and ``_ws_token``)."""

    if TYPE_CHECKING:
        url: str
        _ws_token: Callable[[], Awaitable[str]]

        async def get(self, run_id: str) -> Run: ...

    async def replies(self, run_id: str) -> AsyncGenerator[ReplyPiece, None]:
        """The pieces of the run's replies as they stream, until the run ends.

        The socket carries the run's events too (from its head on): they are not
        yielded, but the terminal one ends the stream. A drop for being slow reconnects
        (pieces meanwhile are missed: the replies are in the log).
        """
        run = await self.get(run_id)
        if run.finished:
            return
        messages = run_messages(self.url, self._ws_token, run.id, run.head, replies=True)
        async with contextlib.aclosing(messages):
            async for raw in messages:
                if "seq" not in raw:
                    if raw.get("type") in PIECE_TYPES:
                        yield ReplyPiece.of(raw)
                elif raw.get("type") in TERMINAL_EVENTS:
                    return
