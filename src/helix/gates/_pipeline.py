"""The gate pipeline: every gate in its fixed order, deny winning over everything.

``build_gate_pipeline`` is the one place the order is written down::

    ceiling → arguments → boundary → commands → egress → budget → (extra) → approval

Cheap, absolute refusals come first (is the tool allowed at all, are its arguments
valid, does it stay in the world), then the rules on what the call does, then the
run's spending, and approval last, so nobody is asked about a call that would be
refused anyway.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import get_args

from helix.tools import Facets

from ._builtin import (
    ApprovalGate,
    ArgumentsGate,
    BoundaryGate,
    BudgetGate,
    CeilingGate,
    CommandsGate,
    EgressGate,
)
from ._gate import Decision, Gate, GateCall, GateContext, Verdict

_VERDICTS = frozenset(get_args(Verdict))


@dataclass(frozen=True, slots=True)
class PipelineOutcome:
    """What the pipeline decided on one call, and how each gate that ran voted.

    A gate scoped to other tools (``Gate.facets``, ``Gate.tools``) does not run, and is
    not listed.
    """

    verdict: Verdict
    decisions: list[tuple[str, Decision]] = field(default_factory=list[tuple[str, Decision]])
    """(gate name, decision) for each gate that ran, in order; a deny is the last one."""
    reason: str = ""
    """Why: the denying gate's reason, the asking gates' reasons, or why it is allowed."""


class GatePipeline:
    """Gates run one after another on a call; the first deny stops them and wins."""

    def __init__(self, gates: Sequence[Gate]) -> None:
        """Run ``gates`` in this order (their names must be distinct)."""
        names = [gate.name for gate in gates]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"gate names must be distinct: {', '.join(duplicates)}")
        for gate in gates:
            for facet in getattr(gate, "facets", None) or ():
                Facets().declares(facet)  # an unknown facet name fails here, not per call
        self._gates = tuple(gates)
        self._scopes = tuple(
            (getattr(gate, "tools", None), getattr(gate, "facets", None)) for gate in gates
        )

    @property
    def gates(self) -> tuple[Gate, ...]:
        """The gates, in the order they run."""
        return self._gates

    @property
    def names(self) -> list[str]:
        """The gates' names, in the order they run."""
        return [gate.name for gate in self._gates]

    async def evaluate(
        self, call: GateCall, ctx: GateContext, *, auto_approve: bool = False
    ) -> PipelineOutcome:
        """Decide on ``call``.

        Args:
            call: The tool call to decide.
            ctx: What the gates know about the run.
            auto_approve: Turn a final ``ask`` into ``allow`` (the person said so up
                front). A deny stays a deny, and the gates' own decisions are kept as
                they were.

        Returns:
            ``deny`` if any gate denied (a gate that fails counts as denying), else
            ``ask`` if any gate asked, else ``allow``; with every decision made.
        """
        decisions: list[tuple[str, Decision]] = []
        asking: list[str] = []
        for gate, (names, facets) in zip(self._gates, self._scopes, strict=True):
            if not _in_scope(call, names, facets):
                continue  # nothing for this gate to decide: no decision, no event
            decision = await _decide(gate, call, ctx)
            decisions.append((gate.name, decision))
            if decision.verdict == "deny":
                return PipelineOutcome("deny", decisions, decision.reason)
            if decision.verdict == "ask":
                asking.append(decision.reason)
        if not asking:
            return PipelineOutcome("allow", decisions, "every gate allowed it")
        if auto_approve:
            return PipelineOutcome("allow", decisions, "auto-approved")
        return PipelineOutcome("ask", decisions, "; ".join(asking))


def _in_scope(call: GateCall, names: frozenset[str] | None, facets: frozenset[str] | None) -> bool:
    """Whether a gate scoped to tool ``names`` and to ``facets`` rules on ``call``."""
    if names is not None and call.name not in names:
        return False
    if facets is None:
        return True
    return call.tool is not None and any(call.tool.facets.declares(f) for f in facets)


async def _decide(gate: Gate, call: GateCall, ctx: GateContext) -> Decision:
    """The gate's decision; a failing or nonsensical gate denies (never allows by accident)."""
    try:
        decision = await gate(call, ctx)
    except Exception as error:  # a gate's bug must not crash the run or let a call through
        return Decision("deny", f"gate error: {type(error).__name__}: {error}")
    if not isinstance(decision, Decision) or decision.verdict not in _VERDICTS:
        return Decision("deny", f"gate error: returned {decision!r}, not a Decision")
    return decision


def build_gate_pipeline(
    extra: Sequence[Gate] = (), *, available_tools: Iterable[str] = ()
) -> GatePipeline:
    """The pipeline every tool call passes, in the one order Helix uses.

    Args:
        extra: More gates (from plugins, say); they run after the budget gate and
            before approval, so they can refuse a call but never skip the approval.
        available_tools: The tool names the run offers, listed when a model asks for a
            tool that does not exist.

    Returns:
        ceiling → arguments → boundary → commands → egress → budget → extra → approval.
    """
    return GatePipeline(
        [
            CeilingGate(),
            ArgumentsGate(available_tools),
            BoundaryGate(),
            CommandsGate(),
            EgressGate(),
            BudgetGate(),
            *extra,
            ApprovalGate(),
        ]
    )
