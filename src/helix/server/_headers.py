"""Security headers on every HTTP answer: pages, API answers and errors alike.

The dashboard loads only its own files (``app.js``, ``style.css``) and talks to its own
origin (``fetch`` and the WebSocket), so one strict policy fits it and every API
answer. A page with something inline of its own (an approval link's page, the API
docs) sets its own ``Content-Security-Policy`` naming exactly that, by hash; the
other headers are the same everywhere.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = "Content-Security-Policy"


def content_policy(*, script: str = "'self'", style: str = "'self'", img: str = "'self'") -> str:
    """A ``Content-Security-Policy``: nothing but the given sources, never framed."""
    return (
        f"default-src 'none'; script-src {script}; style-src {style}; img-src {img};"
        " connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self';"
        " frame-ancestors 'none'"
    )


def source_hash(text: str) -> str:
    """The CSP source expression allowing exactly this inline ``<script>`` or ``<style>``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


SECURITY_HEADERS: dict[str, str] = {
    CSP: content_policy(),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}
"""Every answer's; a page's own ``Content-Security-Policy`` takes the place of the default."""

_RAW = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in SECURITY_HEADERS.items()]


class SecurityHeaders:
    """Add ``SECURITY_HEADERS`` to every HTTP response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in _RAW if name not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)
