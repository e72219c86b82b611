"""Bounded reads for MCP answers: a page of events, a file's bytes, a diff.

An MCP client feeds answers to a model, so none may be unbounded: events come in pages
(at most ``limit`` events and about ``EVENTS_BYTES`` of JSON, never fewer than one), a
file and a diff are cut at a size and say so (``truncated``). A page can also wait for
the run's next event (a long poll), so a supervising agent need not spin.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from typing import Any

from helix.api import HelixApi, Point
from helix.kernel.events import TERMINAL_STATUSES

EVENTS_BYTES = 512 * 1024
"""About how much JSON one page of events holds (a page has at least one event)."""
DIFF_BYTES = 512 * 1024
"""The longest diff returned whole."""


async def events_page(
    api: HelixApi, run_id: str, *, after: int, limit: int, wait_s: float
) -> dict[str, Any]:
    """Up to ``limit`` events with seq > ``after``; wait up to ``wait_s`` for a first one.

    ``next_after`` is the seq to pass as ``after`` next time; ``more`` says whether more
    events are already there. ``status`` is the run's status read just before its events
    (a run's status and its events are committed together), so every event that brought
    the run to that status is in this page or an earlier one: a client that sees
    ``waiting`` with ``more`` false has seen the ``approval.requested``.
    """
    run = await api.get(run_id)
    run_id, status = run.id, run.status
    events, more = await _take(api, run_id, after, limit)
    if not events and wait_s > 0 and status not in TERMINAL_STATUSES:
        await _wait_for_one(api, run_id, after, wait_s)
        status = (await api.get(run_id)).status
        events, more = await _take(api, run_id, after, limit)
    next_after = events[-1]["seq"] if events else after
    return {
        "run_id": run_id,
        "status": status,
        "events": events,
        "next_after": next_after,
        "more": more,
    }


async def _take(api: HelixApi, run_id: str, after: int, limit: int) -> tuple[list[Any], bool]:
    """The events after ``after`` that fit a page, and whether any were left out."""
    taken: list[Any] = []
    size = 0
    stream = api.events(run_id, after=after)
    try:
        async for event in stream:
            if len(taken) >= limit or size >= EVENTS_BYTES:
                return taken, True
            item = event.model_dump(mode="json")
            size += len(json.dumps(item))
            taken.append(item)
    finally:
        await stream.aclose()
    return taken, False


async def _wait_for_one(api: HelixApi, run_id: str, after: int, wait_s: float) -> None:
    """Return when the run has an event after ``after``, or ``wait_s`` has passed."""
    live = api.events(run_id, after=after, follow=True)
    try:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait_s):
                async for _ in live:
                    return
    finally:
        await live.aclose()


async def file_content(
    api: HelixApi, run_id: str, path: str, *, turn: Point, max_bytes: int
) -> dict[str, Any]:
    """A file of the world: ``text`` when it is UTF-8, else ``base64``; cut at ``max_bytes``."""
    data = await api.read(run_id, path, turn=turn)
    size = len(data)
    cut = data[:max_bytes]
    truncated = size > max_bytes
    answer: dict[str, Any] = {"path": path, "size": size, "truncated": truncated}
    text = _utf8(cut, truncated)
    if text is not None:
        answer["text"] = text
    else:
        answer["base64"] = base64.b64encode(cut).decode("ascii")
    return answer


def _utf8(data: bytes, truncated: bool) -> str | None:
    """``data`` as text, if it is UTF-8 (a character cut by the truncation is dropped)."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        if truncated and error.start >= len(data) - 3:
            with contextlib.suppress(UnicodeDecodeError):
                return data[: error.start].decode("utf-8")
        return None


async def diff_text(
    api: HelixApi, run_id: str, *, start: Point, end: Point, path: str | None
) -> dict[str, Any]:
    """A unified diff of the world between two points, cut at ``DIFF_BYTES``."""
    text = await api.diff(run_id, start=start, end=end, path=path)
    encoded = text.encode("utf-8")
    truncated = len(encoded) > DIFF_BYTES
    if truncated:
        text = encoded[:DIFF_BYTES].decode("utf-8", "ignore")
    return {"diff": text, "truncated": truncated, "size": len(encoded)}
