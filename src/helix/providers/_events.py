"""What model calls write to the log: ``model.responded`` and ``model.failed`` payloads."""

from __future__ import annotations

from helix.kernel.events import ModelFailed, ModelResponded, ToolCall, Usage

from ._adapter import ModelAdapter
from ._retry import ModelFailure
from ._types import ModelResponse


def responded(
    response: ModelResponse,
    cost_usd: float | None,
    *,
    role: str | None = None,
    answered_by: ModelAdapter | None = None,
) -> ModelResponded:
    """The ``model.responded`` payload of a response (``cost_usd`` ``None`` if unpriced).

    ``role``: the call's role; ``answered_by``: the model that answered (a fallback
    chain's), recorded as the payload's ``provider`` and ``model``.
    """
    usage = response.usage
    return ModelResponded(
        text=response.text,
        tool_calls=[
            ToolCall(id=c.id, name=c.name, args=c.args, malformed=c.malformed, raw_args=c.raw_args)
            for c in response.tool_calls
        ],
        usage=Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cached_tokens,
            estimated=usage.estimated,
        ),
        cost_usd=cost_usd,
        latency_ms=response.latency_ms,
        role=role,
        provider=None if answered_by is None else answered_by.provider,
        model=None if answered_by is None else answered_by.model,
    )


def failed(failure: ModelFailure) -> ModelFailed:
    """The ``model.failed`` payload of one failed attempt (its message is already redacted)."""
    return ModelFailed(
        error=str(failure.error), attempt=failure.attempt, retry_in_s=failure.retry_in_s
    )
