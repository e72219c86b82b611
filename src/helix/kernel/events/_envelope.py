"""The envelope every event travels in, stored and on the wire."""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from pydantic_core import to_json

from helix.errors import InvalidEventError

from ._payload import Payload

_ACTOR = re.compile(r"agent|system|user:\S+")
_PLAIN_ACTORS = frozenset({"agent", "system"})


ISO_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
"""How the log writes times: ISO 8601 in UTC, with microseconds and a ``Z``."""


def utc_now_iso() -> str:
    """Return the current UTC time as the log writes it.

    Every append stamps its events, so this is on the hot path: the seconds are
    formatted once per second, the microseconds appended.
    """
    seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
    prefix = _seconds_prefix(seconds)
    return f"{prefix}.{nanos // 1000:06d}Z"


@functools.lru_cache(maxsize=2)
def _seconds_prefix(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def format_iso(moment: datetime) -> str:
    """Write a UTC time as the log does."""
    return moment.strftime(ISO_FORMAT)


@functools.lru_cache(maxsize=16384)
def parse_iso(value: str) -> float:
    """Read a time the log wrote, as a POSIX timestamp.

    Cached: every tool call's gates read the run's start time, and a process may drive
    a thousand runs at once (each entry is a few dozen bytes).
    """
    return datetime.strptime(value, ISO_FORMAT).replace(tzinfo=UTC).timestamp()


def check_actor(actor: str) -> str:
    """Return ``actor`` if it is ``agent``, ``system`` or ``user:<id>``; raise otherwise."""
    if actor in _PLAIN_ACTORS:  # nearly every event: skip the pattern
        return actor
    if not _ACTOR.fullmatch(actor):
        raise InvalidEventError(
            f"invalid actor {actor!r}: expected 'agent', 'system' or 'user:<id>'"
        )
    return actor


def person_of(actor: str | None) -> str | None:
    """The user an actor names (``ann`` of ``user:ann``); ``None`` for ``system``, ``agent``."""
    if actor is not None and actor.startswith("user:"):
        return actor.removeprefix("user:") or None
    return None


class Event(NamedTuple):
    """One stored event: the contract's JSON object, read back from the log.

    ``data`` is the payload as JSON, already upcast to the type's current version.
    A named tuple rather than a frozen dataclass: replay builds millions of these, and
    a tuple is built five times faster.
    """

    run_id: str
    seq: int
    type: str
    v: int
    ts: str
    turn: int | None
    actor: str
    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Return the event as the contract's JSON object."""
        return {
            "run_id": self.run_id,
            "seq": self.seq,
            "type": self.type,
            "v": self.v,
            "ts": self.ts,
            "turn": self.turn,
            "actor": self.actor,
            "data": self.data,
        }

    def to_json(self) -> str:
        """Return the event as one line of JSON."""
        return to_json(self.to_dict()).decode()


@dataclass(frozen=True, slots=True, init=False)
class NewEvent:
    """An event about to be appended; the log assigns its run, seq, version and time."""

    payload: Payload
    actor: str
    turn: int | None
    ts: str | None
    """When it happened, if not now (an imported log keeps its times)."""

    def __init__(
        self,
        payload: Payload,
        actor: str = "system",
        turn: int | None = None,
        ts: str | None = None,
    ) -> None:
        # Every event passes here: checked first, then set without a __post_init__ call.
        if actor not in _PLAIN_ACTORS:
            check_actor(actor)
        if turn is not None and turn < 0:
            raise InvalidEventError(f"invalid turn {turn}: must be 0 or more")
        _set_payload(self, payload)
        _set_actor(self, actor)
        _set_turn(self, turn)
        _set_ts(self, ts)

    @property
    def type(self) -> str:
        """The event type of the payload."""
        return self.payload.TYPE


# The slots' own setters: what ``object.__setattr__`` ends at, without its name lookup.
_set_payload = NewEvent.__dict__["payload"].__set__
_set_actor = NewEvent.__dict__["actor"].__set__
_set_turn = NewEvent.__dict__["turn"].__set__
_set_ts = NewEvent.__dict__["ts"].__set__
