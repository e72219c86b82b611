"""The wire model of a run's trace (``GET /runs/{id}/trace``): a tree of timed spans."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from helix.kernel.session import TraceSpan

from ._models import _Out


class Span(_Out):
    """One timed piece of a run's trace.

    A ``run``, ``turn``, ``model`` call, tool ``call``, its ``gates`` (allowed, denied
    or asked) or its ``tool`` execution.

    ``start_ms``/``end_ms``: milliseconds from the traced run's first event (children's
    too: one axis); ``end`` is ``None`` while the span is open (a live run).
    ``duration_ms``: the logged figure for model calls (latency) and tools (duration);
    for gates and the rest, end minus start. Tokens and cost: a model call's own; a
    turn's and a run's, the sum of their own model calls (a child's are in its span).
    """

    kind: Literal["run", "turn", "model", "call", "gates", "tool"]
    name: str
    run_id: str
    start: str
    start_ms: float
    end: str | None = None
    end_ms: float | None = None
    duration_ms: float | None = None
    turn: int | None = None
    call_id: str | None = None
    status: str | None = None
    detail: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    children: list[Span] = Field(default_factory=list["Span"])

    @classmethod
    def of(cls, span: TraceSpan) -> Span:
        """From the kernel's span tree."""
        fields = {k: getattr(span, k) for k in cls.model_fields if k != "children"}
        return cls(**fields, children=[cls.of(child) for child in span.children])
