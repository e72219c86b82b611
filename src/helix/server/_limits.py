"""Limits that protect the server: request body size, and login attempts per address."""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

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
    """At most ``limit`` attempts per key in any ``period_s`` window (sliding)."""

    def __init__(self, limit: int, period_s: float = 60.0) -> None:
        self.limit = limit
        self.period_s = period_s
        self._attempts: dict[str, deque[float]] = {}

    def check(self, key: str) -> None:
        """Count an attempt; ``ApiError`` 429 (with ``Retry-After``) past the limit."""
        now = time.monotonic()
        attempts = self._attempts.setdefault(key, deque())
        while attempts and now - attempts[0] >= self.period_s:
            attempts.popleft()
        if len(attempts) >= self.limit:
            wait = max(1, int(self.period_s - (now - attempts[0])) + 1)
            raise ApiError(
                429,
                "too_many_requests",
                f"too many login attempts from this address: try again in {wait} s",
                {"Retry-After": str(wait)},
            )
        attempts.append(now)
        if len(self._attempts) > 10000:  # forget idle addresses so memory stays bounded
            for stale in [k for k, v in self._attempts.items() if not v or now - v[-1] > 60]:
                del self._attempts[stale]
