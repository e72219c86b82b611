"""The budget gate: the run still has money and time left."""

from __future__ import annotations

from helix.gates._gate import Decision, GateCall, GateContext


class BudgetGate:
    """Refuses every call once the run has spent its USD cap or its time limit."""

    name: str = "budget"

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        """Decide on ``call``."""
        budget = ctx.budget
        # Written as "not below" so that a NaN spend (a bug upstream) refuses too.
        if budget.cap_usd is not None and not budget.spent_usd < budget.cap_usd:
            return Decision(
                "deny", f"budget exhausted: ${budget.spent_usd:.2f} of ${budget.cap_usd:.2f}"
            )
        if budget.max_seconds is not None and not budget.elapsed_s < budget.max_seconds:
            return Decision(
                "deny",
                f"time limit reached: {budget.elapsed_s:.0f}s of {budget.max_seconds:.0f}s",
            )
        if budget.cap_usd is not None:
            return Decision(
                "allow", f"within budget: ${budget.spent_usd:.2f} of ${budget.cap_usd:.2f}"
            )
        return Decision("allow", "no spending cap")
