"""Closing what holds a connection, to its end, even when the closer is cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable


async def close_fully(closing: Awaitable[object]) -> None:
    """Await ``closing`` to its end, then raise the cancel that came meanwhile, if one did.

    A cancel that lands in the middle of a close (a second one, say: a task group
    cancelling what its body already cancelled) would otherwise leave a client's
    sockets for the garbage collector.
    """
    task = asyncio.ensure_future(closing)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    task.result()
