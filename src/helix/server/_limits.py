"""Limits that protect the server: request body size, and login attempts per address."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
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

    def __init__(self, app: ASGIApp, *, max_bytes: int, large: dict[str, int]) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.large = large
        """Path → its own limit (an import takes a whole log)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.large.get(scope["path"], self.max_bytes)
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
    """At most ``limit`` attempts per key in any ``period_s`` window (sliding).

    Counted in the account store, so every server on one database enforces one limit:
    a client cannot multiply its tries by spreading them over API nodes.
    """

    def __init__(self, store: AccountStore, limit: int, period_s: float = 60.0) -> None:
        self.store = store
        self.limit = limit
        self.period_s = period_s

    async def check(self, key: str) -> None:
        """Count an attempt; ``ApiError`` 429 (with ``Retry-After``) past the limit."""
        now = time.time()
        oldest = await self.store.count_attempt(
            key, now=now, window_s=self.period_s, limit=self.limit
        )
        if oldest is not None:
            wait = max(1, int(self.period_s - (now - oldest)) + 1)
            raise ApiError(
                429,
                "too_many_requests",
                f"too many login attempts from this address: try again in {wait} s",
                {"Retry-After": str(wait)},
            )
