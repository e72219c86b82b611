"""Sampling: a tool source has the run's model answer a prompt (MCP ``sampling/createMessage``).

The reply is part of the session: its text is logged, so a replay or a resumed run
reads it back and never calls the model again, and its tokens and cost count against
the run's budget like the run's own model calls.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ._model import Usage
from ._payload import Payload


class McpSampled(Payload):
    """The run's model answered a source's sampling request."""

    TYPE: ClassVar[str] = "mcp.sampled"

    source: str
    """The tool source that asked (``mcp:NAME``)."""
    call_id: str | None
    """The tool call during which it asked, if any."""
    model: str
    """``provider:model`` that answered."""
    usage: Usage
    cost_usd: float | None = Field(ge=0)
    """``None`` when the model's price is unknown (never guessed)."""
    latency_ms: float = Field(ge=0)
    text: str
    """What the model answered (handed to the source)."""
    stop_reason: str = "endTurn"


class McpSampleRefused(Payload):
    """A source's sampling request was refused: the model was not called."""

    TYPE: ClassVar[str] = "mcp.sample_refused"

    source: str
    call_id: str | None
    reason: str
    """Why: the blueprint's ``sampling.allow``, a person's denial, the budget cap, nobody
    to ask, or the model's error."""
