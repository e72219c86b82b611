"""Context compaction: the older turns of a long conversation, summarised by a model.

The summary is part of the session: its text is logged, so a replay or a resumed run
reads it back and never calls the model again, and its tokens and cost count against
the run's budget like the run's own model calls.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ._model import Usage
from ._payload import Payload


class ContextCompacted(Payload):
    """A model summarised the run's turns up to ``upto_turn``; requests send the summary."""

    TYPE: ClassVar[str] = "context.compacted"

    upto_turn: int = Field(ge=1)
    """The last turn the summary stands for."""
    messages: int = Field(ge=1)
    """How many of the conversation's messages, from its start, the summary stands for
    (the first, the objective, is still sent as it is, the summary after it)."""
    summary: str
    """What the model wrote: sent in place of those messages from here on."""
    role: str = Field(default="summary", max_length=32)
    """The role whose model wrote it (docs/models.md#roles)."""
    provider: str
    model: str
    """The model that answered, at its provider (a fallback chain's, the one that did)."""
    usage: Usage
    cost_usd: float | None = Field(ge=0)
    """``None`` when the model's price is unknown (never guessed)."""
    latency_ms: float = Field(default=0.0, ge=0)
