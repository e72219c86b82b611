"""Limits that protect the server: request body size, and failed sign-ins per address and user."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from helix.accounts import AccountStore

from ._errors import ApiError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimit:
    """Refuse request bodies over the limit with 413, declared or streamed.

    A declared ``Content-Length`` over the limit is refused before reading; a body
    that grows past it while streaming raises ``ApiError`` from ``receive``, which the
    app's error handlers turn into the same 413.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int,
        large: dict[str, int],
        matching: Sequence[tuple[str, int]] = (),
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.large = large
        """Path → its own limit (an import takes a whole log)."""
        self.matching = [(re.compile(pattern), limit) for pattern, limit in matching]
        """Paths matching a pattern → their own limit (an artifact's upload)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.large.get(scope["path"], self.max_bytes)
        for pattern, own in self.matching:
            if pattern.fullmatch(scope["path"]):
                limit = own
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > limit:
                    await _refuse(send, limit)
                    return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                raise _too_large(limit)
            return message

        await self.app(scope, limited, send)


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "payload_too_large", f"the request body is over {limit} bytes")


async def _refuse(send: Send, limit: int) -> None:
    error = _too_large(limit)
    body = json.dumps({"error": {"code": error.code, "message": error.message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class AttemptLimiter:
    """At most ``limit`` failed attempts per key in any ``period_s`` window (sliding).

    A key is what an attempt is counted against, e.g. ``("address", "10.1.2.3")`` and
    ``("user", "alice")``: an attempt is refused when any of its keys is at the limit.
    Each attempt is counted before it is tried (so parallel tries cannot slip past the
    limit) and un-counted if it succeeds; a refused attempt counts against no key.
    Counted in the account store, so every server on one database enforces one limit:
    a client cannot multiply its tries by spreading them over API nodes.
    """

    def __init__(self, store: AccountStore, limit: int, period_s: float = 60.0) -> None:
        self.store = store
        self.limit = limit
        self.period_s = period_s

    async def check(self, *keys: tuple[str, str]) -> float:
        """Count an attempt against every key; ``ApiError`` 429 (``Retry-After``) past a limit.

        Returns when it was counted, for ``succeeded``.
        """
        now = time.time()
        counted: list[str] = []
        for what, value in keys:
            key = f"{what}:{value}"
            oldest = await self.store.count_attempt(
                key, now=now, window_s=self.period_s, limit=self.limit
            )
            if oldest is not None:
                await self._forget(counted, now)
                wait = max(1, int(self.period_s - (now - oldest)) + 1)
                where = "from this address" if what == "address" else f"for this {what}"
                raise ApiError(
                    429,
                    "too_many_requests",
                    f"too many failed sign-in attempts {where}: try again in {wait} s",
                    {"Retry-After": str(wait)},
                )
            counted.append(key)
        return now

    async def succeeded(self, keys: tuple[tuple[str, str], ...], at: float) -> None:
        """Un-count an attempt that succeeded: only failures use up the limit."""
        await self._forget([f"{what}:{value}" for what, value in keys], at)

    async def _forget(self, keys: list[str], at: float) -> None:
        for key in keys:
            await self.store.forget_attempt(key, at=at)
