"""The base every event payload derives from."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class Payload(BaseModel):
    """The typed ``data`` of one event type.

    Subclasses set ``TYPE`` (the event's name in the log, e.g. ``"tool.completed"``) and
    ``VERSION`` (bumped whenever the shape changes; older stored versions are upcast at
    read time, never rewritten).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    TYPE: ClassVar[str]
    VERSION: ClassVar[int] = 1


class ForkPoint(BaseModel):
    """Where a fork branches off: the parent run and the last seq it shares."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    seq: int
