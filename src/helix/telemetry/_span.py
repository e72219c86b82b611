"""A finished span as Helix hands it to an exporter: plain data, no OpenTelemetry import.

Ids are derived from the log, never drawn at random: a run's trace id from the run
that started its tree (a delegating run's children share its trace), a span's id from
its run and the seq of the event that opened it. So a span exported twice (a restarted
exporter, two processes following one store) has the same ids both times.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Literal

AttributeValue = str | int | float | bool | tuple[str, ...]
"""What an attribute may hold (OpenTelemetry's scalar types and string arrays)."""
_NONE: Mapping[str, AttributeValue | None] = MappingProxyType({})


def trace_id_of(root_run_id: str) -> int:
    """The 128-bit trace id of a run tree, from the id of the run at its top."""
    return _hash(16, "trace", root_run_id)


def span_id_of(run_id: str, seq: int | None = None) -> int:
    """The 64-bit id of the span a run's event ``seq`` opened (``None``: the run's own)."""
    return _hash(8, "run" if seq is None else "span", run_id, str(seq))


def _hash(size: int, *parts: str) -> int:
    digest = hashlib.blake2b("\0".join(parts).encode(), digest_size=size).digest()
    return int.from_bytes(digest, "big") or 1  # 0 is OpenTelemetry's "invalid id"


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


@functools.lru_cache(maxsize=256)  # the events of one append share their time
def ts_ns(ts: str) -> int:
    """An event's time (the log's ISO 8601, microseconds, ``Z``) as nanoseconds since the epoch.

    Exact (integer arithmetic), and parsed by ``fromisoformat``: a fiftieth of the cost
    of ``strptime``, which matters at one call per event followed.
    """
    moment = datetime.fromisoformat(ts)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MICROSECOND * 1000


@dataclass(slots=True)
class SpanEvent:
    """Something that happened at one moment of a span (a gate's decision, an approval)."""

    name: str
    time_ns: int
    attributes: dict[str, AttributeValue] = field(default_factory=dict[str, AttributeValue])


@dataclass(slots=True)
class OtelSpan:
    """One span: a run, a turn, a model call (``chat``) or a tool call (``execute_tool``)."""

    trace_id: int
    span_id: int
    parent_id: int | None
    name: str
    start_ns: int
    kind: Literal["internal", "client"] = "internal"
    end_ns: int | None = None
    """``None`` while the span is open."""
    attributes: dict[str, AttributeValue] = field(default_factory=dict[str, AttributeValue])
    events: list[SpanEvent] = field(default_factory=list[SpanEvent])
    status: Literal["unset", "ok", "error"] = "unset"
    description: str | None = None
    """Why the span's status is ``error``."""

    def event(
        self, name: str, ts: str, attributes: Mapping[str, AttributeValue | None] = _NONE
    ) -> None:
        """Add a span event at the log time ``ts`` (``None`` attributes are left out)."""
        kept = {k: v for k, v in attributes.items() if v is not None}
        self.events.append(SpanEvent(name, ts_ns(ts), kept))

    def end(self, ts: str) -> OtelSpan:
        """Close the span at the log time ``ts`` (never before its start)."""
        self.end_ns = max(self.start_ns, ts_ns(ts))
        return self

    def fail(self, error_type: str, description: str) -> None:
        """Mark the span failed (``error.type`` as the semantic conventions ask)."""
        self.status = "error"
        self.description = description[:_MAX_TEXT]
        self.attributes["error.type"] = error_type


_MAX_TEXT = 500
"""Longest free text (a gate's reason, an error) put on a span."""


def clip(text: str) -> str:
    """Free text as a span carries it: at most a few hundred characters."""
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"
