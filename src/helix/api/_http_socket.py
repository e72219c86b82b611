"""``WS /runs/{id}/stream`` as raw messages, for ``HttpApi``'s events and replies.

Each connection gets a short-lived token (``POST /auth/ws-token``: URLs get logged). A
drop for being slow (4008) reconnects after the last seq received; a run not found
(4404) is a ``NotFoundError``; any other close or a connection that fails is a
``StoreUnavailableError``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from helix.errors import NotFoundError, StoreUnavailableError

from ._paths import run_path

CLOSE_TOO_SLOW = 4008
CLOSE_NOT_FOUND = 4404


async def run_messages(
    url: str,
    ws_token: Callable[[], Awaitable[str]],
    run_id: str,
    after: int,
    *,
    replies: bool = False,
) -> AsyncGenerator[dict[str, Any], None]:
    """Every message of the run's stream from ``after`` on (``replies``: its pieces too).

    ``url``: the server's root; ``ws_token``: a fresh WebSocket token for a connection.
    """
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    base = "ws" + url.removeprefix("http")
    flag = "&replies=true" if replies else ""
    while True:
        token = await ws_token()
        address = f"{base}/api/v1{run_path(run_id)}/stream?token={token}&after={after}{flag}"
        try:
            async with connect(address, max_size=None) as socket:
                async for message in socket:
                    raw = json.loads(message)
                    if isinstance(raw.get("seq"), int):
                        after = raw["seq"]
                    yield raw
        except ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd is not None else None
            if code == CLOSE_NOT_FOUND:
                raise NotFoundError(f"run {run_id!r} not found") from None
            if code != CLOSE_TOO_SLOW:
                raise StoreUnavailableError(f"the server closed the stream: {closed}") from None
        except OSError as error:
            raise StoreUnavailableError(f"cannot reach the server: {error}") from None
