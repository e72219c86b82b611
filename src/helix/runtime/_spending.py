"""Money across runs: what a run reserves before each model call (``Engine(spending=…)``).

The run's own caps (``Budget.usd``, ``Budget.tokens``) are read from its log by the loop.
Cumulative budgets (a workspace's, a blueprint's, a person's, per UTC day or month) live
outside the run, in a store every process shares: the engine is given a ``Spending``
(the runtime imports no store), and before each model call the loop reserves the call's
projected cost and tokens against every budget that applies to the run; the reply
settles the reservation to what the call really cost, a call that did not happen
releases it. ``helix.api.StoreSpending`` is the implementation over ``helix.budgets``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from helix._util import close_fully
from helix.kernel.events import BudgetExceeded, NewEvent, RunPaused, person_of
from helix.kernel.session import SessionState

if TYPE_CHECKING:
    from ._setup import RunSetup


@dataclass(frozen=True, slots=True)
class SpendClaim:
    """What one model call of a run could cost at most, and whose budgets it counts in."""

    run_id: str
    workspace: str
    blueprint: str
    """The blueprint's name (``default`` when the run was given none)."""
    person: str | None
    """The user who made the run (``ann`` of ``user:ann``); ``None``: the system did."""
    usd: float | None
    """The projected cost; ``None`` when the model has no known price (counts as 0)."""
    tokens: int
    """The projected tokens: the input so far (estimated) plus the call's ``max_tokens``."""
    at: float
    """When (POSIX seconds, the run's clock): which day and month the call counts in."""


@dataclass(frozen=True, slots=True)
class OverCap:
    """The first budget a claim would take past its cap (a run pauses, naming it)."""

    scope: str
    """``workspace:W``, ``blueprint:B`` or ``person:P``."""
    period: str
    """``day`` or ``month``."""
    cap_usd: float | None
    """The USD cap passed (``None``: it is the token cap that would be passed)."""
    spent_usd: float
    cap_tokens: int | None
    spent_tokens: int
    """What the budget has spent and holds for calls in flight, this period."""


class Spending(Protocol):
    """Cumulative budgets, as a run's loop reserves against them (any process, one store)."""

    async def reserve(self, claim: SpendClaim) -> str | OverCap:
        """Hold ``claim`` against every budget that applies, atomically; the hold's id.

        Or, if it would take one of them past a cap, hold nothing and name that budget.
        Two claims racing for the last of a cap: one passes. A hold not settled or
        released lapses after a while (its process crashed), so it holds nothing then.
        """
        ...

    async def settle(self, hold: str, *, usd: float | None, tokens: int) -> None:
        """The call was made: count what it really cost (``None``: no known price) in place."""
        ...

    async def release(self, hold: str) -> None:
        """The call was not made (or failed): drop the hold."""
        ...

    async def usd_capped(self, workspace: str, blueprint: str, person: str | None) -> Sequence[str]:
        """The budgets with a USD cap that apply to such a run (``workspace:W (month)``…)."""
        ...


class Hold:
    """One reserved call: settled once it is answered, else released (``done``)."""

    def __init__(self, spending: Spending | None, hold: str | None) -> None:
        self._spending = spending
        self._id = hold

    async def settle(self, usd: float | None, tokens: int) -> None:
        """Count what the call cost (and hold it no longer)."""
        spending, hold, self._id = self._spending, self._id, None
        if spending is not None and hold is not None:
            await close_fully(spending.settle(hold, usd=usd, tokens=tokens))

    async def done(self) -> None:
        """Release the hold unless it was settled (even while the caller is cancelled)."""
        spending, hold, self._id = self._spending, self._id, None
        if spending is not None and hold is not None:
            await close_fully(spending.release(hold))


async def reserve_call(
    setup: RunSetup, state: SessionState, usd: float | None, tokens: int
) -> Hold | list[NewEvent]:
    """Reserve a call of ``setup``'s run: a ``Hold``, or the events that pause the run."""
    spending = setup.spending
    if spending is None:
        return Hold(None, None)
    claim = SpendClaim(
        run_id=setup.run_id,
        workspace=setup.workspace,
        blueprint=setup.blueprint.name,
        person=person_of(state.created_by),
        usd=usd,
        tokens=tokens,
        at=setup.clock.now(),
    )
    held = await spending.reserve(claim)
    if isinstance(held, str):
        return Hold(spending, held)
    exceeded = BudgetExceeded(
        cap_usd=held.cap_usd,
        spent_usd=held.spent_usd,
        scope=held.scope,
        period="day" if held.period == "day" else "month",
        cap_tokens=held.cap_tokens,
        spent_tokens=held.spent_tokens if held.cap_tokens is not None else None,
    )
    return [
        NewEvent(exceeded, turn=state.turn),
        NewEvent(RunPaused(reason="budget"), turn=state.turn),
    ]


def run_cap_events(state: SessionState, usd: float | None, tokens: int) -> list[NewEvent]:
    """The events that pause a run whose own cap (USD or tokens) the call could pass."""
    budget = state.budget
    if budget is None:
        return []
    spent = state.spent_usd
    if budget.usd is not None and usd is not None and spent + usd > budget.usd:
        exceeded = BudgetExceeded(cap_usd=budget.usd, spent_usd=spent)
    elif budget.tokens is not None and used_tokens(state) + tokens > budget.tokens:
        exceeded = BudgetExceeded(
            spent_usd=spent, scope="run", cap_tokens=budget.tokens, spent_tokens=used_tokens(state)
        )
    else:
        return []
    return [
        NewEvent(exceeded, turn=state.turn),
        NewEvent(RunPaused(reason="budget"), turn=state.turn),
    ]


def used_tokens(state: SessionState) -> int:
    """The input and output tokens of the run's own model calls."""
    return state.own_usage.input_tokens + state.own_usage.output_tokens
