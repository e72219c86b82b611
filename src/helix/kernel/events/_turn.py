"""Turn markers: a turn is one model call and the tool calls it asked for."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ._payload import Payload


class TurnStarted(Payload):
    """A new turn begins."""

    TYPE: ClassVar[str] = "turn.started"

    turn: int = Field(ge=1)


class TurnEnded(Payload):
    """The last result of the turn is recorded: this event's seq is a turn boundary.

    Helix's addition to the contract's vocabulary. Marking the boundary in the log
    makes "is this seq a turn boundary?" an O(1) question, which keeps forks O(1).
    """

    TYPE: ClassVar[str] = "turn.ended"

    turn: int = Field(ge=1)
