"""``http_fetch``: one HTTP request, answered as text.

The egress allowlist is enforced by a gate before the call. This module adds what only
the request itself can guarantee: http and https only, and no redirects followed, since
a redirect could lead to a host the gate never saw. The model gets the ``Location``
and may fetch it, through the gates again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import http.client
import io
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from email.message import Message
from typing import IO
from urllib.parse import urlsplit

from helix.errors import ConfigError
from helix.sandbox import WORLD_HOST

from ._files import cap_bytes, is_binary
from ._tool import Effect, ToolContext, ToolResult, tool

_METHOD = re.compile(r"[A-Z]{1,20}")
_DISCARD_LIMIT = 8 * 1024 * 1024
"""Bytes read past the output cap just to count them; beyond this the count is a floor."""
_SHOWN_HEADERS = ("content-type", "content-length", "location")


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        return None  # the 3xx then surfaces as an answer, not a hop


_OPENER = urllib.request.build_opener(_NoRedirects)


def _read_capped(stream: IO[bytes], limit: int) -> tuple[bytes, int, bool]:
    """The first ``limit`` bytes, how many more there were, and whether that count is exact."""
    kept = stream.read(limit)
    more = 0
    while more < _DISCARD_LIMIT and (chunk := stream.read(64 * 1024)):
        more += len(chunk)
    return kept, more, more < _DISCARD_LIMIT


def _decode(data: bytes, charset: str | None) -> str:
    try:
        return data.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know: UTF-8 is the best guess
        return data.decode("utf-8", errors="replace")


def _describe(status: int, reason: str, headers: Message, stream: IO[bytes], limit: int) -> str:
    lines = [f"HTTP {status} {reason}".rstrip()]
    lines += [f"{name}: {headers[name]}" for name in _SHOWN_HEADERS if headers[name]]
    if 300 <= status < 400 and headers["location"]:
        lines.append("[redirect not followed: fetch the location with http_fetch to go on]")
    kept, more, exact = _read_capped(stream, limit)
    if is_binary(kept):
        body = f"[binary body: {len(kept) + more}{'' if exact else '+'} bytes not shown]"
    elif more:
        # Re-encoded as UTF-8 so the cap marker's byte count stays meaningful.
        text = _decode(kept, headers.get_content_charset()).encode("utf-8")
        body = cap_bytes(text, more)
        if not exact:
            body = body.replace(f"{more} more bytes", f"{more}+ more bytes")
    else:
        body = _decode(kept, headers.get_content_charset())
    return "\n".join([*lines, "", body])


def _fetch(
    url: str,
    method: str,
    headers: Mapping[str, str],
    body: str | None,
    timeout_s: float,
    max_output: int,
) -> ToolResult:
    data = body.encode("utf-8") if body is not None else None
    request = urllib.request.Request(url, data=data, headers=dict(headers), method=method)
    try:
        with _OPENER.open(request, timeout=timeout_s) as response:
            text = _describe(
                response.status, response.reason, response.headers, response, max_output
            )
            return ToolResult(ok=response.status < 400, output=text)
    except urllib.error.HTTPError as error:  # a 3xx, 4xx or 5xx answer is still an answer
        with error:
            text = _describe(error.code, error.reason, error.headers, error, max_output)
        return ToolResult(ok=error.code < 400, output=text)
    except urllib.error.URLError as error:
        return ToolResult(ok=False, output=f"{method} {url} failed: {error.reason}")
    except TimeoutError:
        return ToolResult(ok=False, output=f"{method} {url} timed out after {timeout_s:g}s")
    except (OSError, ValueError, http.client.HTTPException) as error:
        return ToolResult(ok=False, output=f"{method} {url} failed: {error}")


class _Answer:
    """An HTTP answer read whole from a relay, as ``http.client`` reads a socket."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(io.BytesIO(self._data))


async def _fetch_in_world(
    ctx: ToolContext, url: str, verb: str, headers: Mapping[str, str], body: str | None
) -> ToolResult:
    """One request to a port of the run's live world, through a relay into its box."""
    parts = urlsplit(url)
    if ctx.live is None:
        return ToolResult(ok=False, output=f"{url}: the host world is a live world's, and this"
                          " run's world is not live (sandbox.live)")  # fmt: skip
    if parts.scheme.lower() != "http":
        return ToolResult(ok=False, output=f"{url}: a live world's ports speak plain http")
    try:
        port = parts.port or 80
        world = await ctx.live.world()
        data = body.encode("utf-8") if body is not None else b""
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"{verb} {path} HTTP/1.1", f"Host: {parts.netloc}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in headers.items() if not set(k + v) & {"\r", "\n"}]
        if body is not None:
            lines.append(f"Content-Length: {len(data)}")
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + data
        async with asyncio.timeout(ctx.http_timeout_s), world.relay(port) as relay:
            assert relay.stdin is not None
            assert relay.stdout is not None
            relay.stdin.write(request)
            await relay.stdin.drain()
            relay.stdin.close()
            answer = await relay.stdout.read()
        response = http.client.HTTPResponse(_Answer(answer))  # type: ignore[arg-type]
        response.begin()
        with response:
            text = _describe(response.status, response.reason, response.headers, response,
                             ctx.max_output)  # fmt: skip
        return ToolResult(ok=response.status < 400, output=text)
    except TimeoutError:
        return ToolResult(ok=False, output=f"{verb} {url} timed out after {ctx.http_timeout_s:g}s")
    except (OSError, ValueError, http.client.HTTPException, ConfigError) as error:
        return ToolResult(ok=False, output=f"{verb} {url} failed: nothing answered ({error})")


_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing at the other end (RFC 9110's safe methods, TRACE aside)."""


@tool(effect="none", url="url")
async def http_fetch(
    ctx: ToolContext,
    url: str,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    body: str | None = None,
) -> ToolResult:
    """Send one HTTP request to an http or https URL and return the answer as text.

    The answer starts with the status line and a few headers, then the body (cut
    with a marker when long). Redirects are not followed: the `location` header says
    where to go. Hosts outside the run's network allowlist are refused.
    """
    verb = method.strip().upper()
    if not _METHOD.fullmatch(verb):
        return ToolResult(ok=False, output=f"invalid HTTP method {method!r}")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return ToolResult(
            ok=False, output=f"only http and https URLs with a host can be fetched, not {url!r}"
        )
    if parts.hostname == WORLD_HOST:
        result = await _fetch_in_world(ctx, url, verb, headers or {}, body)
    else:
        result = await asyncio.to_thread(
            _fetch, url, verb, headers or {}, body, ctx.http_timeout_s, ctx.max_output
        )
    if verb in _SAFE_METHODS:
        return result
    # A request that may change something elsewhere: a rollback must say it cannot undo it.
    done = Effect("irreversible", {"method": verb, "url": url}, f"{verb} {url}")
    return dataclasses.replace(result, effects=(*result.effects, done))
