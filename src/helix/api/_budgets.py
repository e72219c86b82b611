"""Cumulative budgets through the one door: ``BudgetDoor`` (part of ``HelixApi``), its sides.

A workspace's budgets (``helix.budgets``): list them with what each counted this period,
set one (replacing the one of the same kind, name and period), remove one. Who may set
them (a workspace's owners and admins) is the server's check, as for runs.
``StoreSpending`` is the engine's side: ``helix.runtime.Spending`` over a ``BudgetStore``.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from helix.errors import ConflictError, NotFoundError, RunStateError
from helix.kernel.events import Budget
from helix.kernel.session import SessionState

if TYPE_CHECKING:
    from helix.budgets import BudgetList, BudgetStore, BudgetUsage
    from helix.runtime import Engine, OverCap, SpendClaim

BudgetSource: TypeAlias = "BudgetStore | Callable[[], Awaitable[BudgetStore]]"
"""The budget store, or a function opening it when first needed."""

HOLD_S = 900.0
"""How long a reservation holds unsettled (its process may have died) before it lapses."""


class StoreSpending:
    """``helix.runtime.Spending`` over a budget store (``Engine(spending=StoreSpending(…))``)."""

    def __init__(self, source: BudgetSource, *, hold_s: float = HOLD_S) -> None:
        self._source = source
        self._store: BudgetStore | None = None
        self.hold_s = hold_s
        """How long a hold lasts unsettled, in seconds."""

    async def store(self) -> BudgetStore:
        """The store (opened now, if it was given as a function)."""
        if self._store is None:
            source = self._source
            self._store = await source() if callable(source) else source
        return self._store

    async def aclose(self) -> None:
        """Close the store if this object opened it."""
        store, self._store = self._store, None
        if store is not None and callable(self._source):
            await store.close()

    async def reserve(self, claim: SpendClaim) -> str | OverCap:
        """Hold the claim against the budgets of its workspace, blueprint and person."""
        from helix.budgets import Charge
        from helix.runtime import OverCap

        hold = "hold_" + secrets.token_hex(8)
        charge = Charge(
            claim.workspace, claim.blueprint, claim.person, claim.run_id,
            claim.usd or 0.0, claim.tokens, claim.at,
        )  # fmt: skip
        store = await self.store()
        passed = await store.reserve(charge, hold=hold, lapses_at=claim.at + self.hold_s)
        if passed is None:
            return hold
        budget, counted = passed.budget, passed.counted
        return OverCap(
            scope=budget.scope,
            period=budget.period,
            cap_usd=budget.usd if passed.cap == "usd" else None,
            spent_usd=counted.usd,
            cap_tokens=budget.tokens if passed.cap == "tokens" else None,
            spent_tokens=counted.tokens,
        )

    async def settle(self, hold: str, *, usd: float | None, tokens: int) -> None:
        """Count the call at its cost (an unknown price counts 0 USD; its tokens count)."""
        await (await self.store()).settle(hold, usd=usd or 0.0, tokens=tokens)

    async def release(self, hold: str) -> None:
        """Drop the hold."""
        await (await self.store()).release(hold)

    async def usd_capped(self, workspace: str, blueprint: str, person: str | None) -> Sequence[str]:
        """The budgets with a USD cap that would count such a run's calls."""
        from helix.budgets import Charge, applies

        charge = Charge(workspace, blueprint, person, "", 0.0, 0, 0.0)
        caps = await (await self.store()).caps(workspace)
        return [f"{b.scope} ({b.period})" for b in caps if b.usd is not None and applies(b, charge)]


class BudgetDoor(Protocol):
    """What a client can do with a workspace's budgets (``HelixApi`` includes it)."""

    async def budgets(self, *, workspace: str | None = None) -> BudgetList:
        """The workspace's budgets, each with what it spent, holds and has left this period."""
        ...

    async def set_budget(
        self,
        kind: str,
        *,
        name: str | None = None,
        period: str = "month",
        usd: float | None = None,
        tokens: int | None = None,
        workspace: str | None = None,
    ) -> BudgetUsage:
        """Set a budget's caps (``usd``, ``tokens`` or both), replacing the one it names.

        ``kind``: ``workspace``, ``blueprint`` or ``person`` (the last two with their
        ``name``); ``period``: ``day`` or ``month`` (UTC). Bad words (an unknown kind
        or period, a negative cap, no cap): ``ConfigError`` (HTTP 422). Only a
        workspace's owners and admins may (HTTP 403).
        """
        ...

    async def remove_budget(
        self,
        kind: str,
        *,
        name: str | None = None,
        period: str = "month",
        workspace: str | None = None,
    ) -> None:
        """Remove that budget (``BudgetNotFoundError``, 404, if there is none)."""
        ...


class LocalBudgets:
    """``LocalApi``'s budgets (mixed in; ``LocalApi`` sets the state)."""

    visible: frozenset[str] | None
    workspace: str
    budget_source: BudgetSource | None

    if TYPE_CHECKING:

        @property
        def engine(self) -> Engine: ...

    async def budget_store(self) -> BudgetStore:
        """The store: given, else the engine's ``StoreSpending``'s (``ConflictError``: none)."""
        source: Any = self.budget_source
        if source is None:
            spending = self.engine.spending
            if isinstance(spending, StoreSpending):
                return await spending.store()
            raise ConflictError(
                "budgets live in a database: this door has none (set HELIX_SERVER, or HELIX_DB)"
            )
        if callable(source):
            self.budget_source = source = await source()
        store: BudgetStore = source
        return store

    def _budget_workspace(self, workspace: str | None) -> str:
        where = workspace or self.workspace
        if self.visible is not None and where not in self.visible:
            raise NotFoundError(f"no workspace {where!r}")
        return where

    async def budgets(self, *, workspace: str | None = None) -> BudgetList:
        """The workspace's budgets with this period's counts (``BudgetDoor.budgets``)."""
        from helix.budgets import BudgetList

        where = self._budget_workspace(workspace)
        store = await self.budget_store()
        found = await store.usage(where, now=self.engine.clock.now())
        return BudgetList(workspace=where, budgets=found)

    async def set_budget(
        self,
        kind: str,
        *,
        name: str | None = None,
        period: str = "month",
        usd: float | None = None,
        tokens: int | None = None,
        workspace: str | None = None,
    ) -> BudgetUsage:
        """Set a budget (``BudgetDoor.set_budget``)."""
        from helix.budgets import check_cap

        where = self._budget_workspace(workspace)
        budget = check_cap(where, kind, name, period, usd, tokens)
        store = await self.budget_store()
        await store.put(budget)
        listed = await store.usage(where, now=self.engine.clock.now())
        return next(u for u in listed if u.budget == budget)

    async def remove_budget(
        self,
        kind: str,
        *,
        name: str | None = None,
        period: str = "month",
        workspace: str | None = None,
    ) -> None:
        """Remove a budget (``BudgetDoor.remove_budget``)."""
        from helix.budgets import BudgetNotFoundError, check_cap

        where = self._budget_workspace(workspace)
        check_cap(where, kind, name, period, 0.0, None)  # the words are checked as for a set
        store = await self.budget_store()
        if not await store.remove(where, kind, name or "", period):
            shown = kind if kind == "workspace" else f"{kind}:{name}"
            raise BudgetNotFoundError(f"no {period} budget for {shown} in {where!r}")


class HttpBudgets:
    """``HttpApi``'s budgets: ``/api/v1/budgets`` (a mixin over its ``_json``/``_send``)."""

    if TYPE_CHECKING:

        async def _json(self, method: str, path: str, **kwargs: Any) -> Any: ...

        async def _send(self, method: str, path: str, **kwargs: Any) -> Any: ...

    async def budgets(self, *, workspace: str | None = None) -> BudgetList:
        """``GET /budgets`` (default: the caller's own workspace)."""
        from helix.budgets import BudgetList

        params = {} if workspace is None else {"workspace": workspace}
        return BudgetList.model_validate(await self._json("GET", "/budgets", params=params))

    async def set_budget(
        self,
        kind: str,
        *,
        name: str | None = None,
        period: str = "month",
        usd: float | None = None,
        tokens: int | None = None,
        workspace: str | None = None,
    ) -> BudgetUsage:
        """``PUT /budgets``."""
        from helix.budgets import BudgetUsage

        body = {"kind": kind, "name": name, "period": period, "usd": usd, "tokens": tokens}
        params = {} if workspace is None else {"workspace": workspace}
        raw = await self._json("PUT", "/budgets", json=body, params=params)
        return BudgetUsage.model_validate(raw)

    async def remove_budget(
        self,
        kind: str,
        *,
        name: str | None = None,
        period: str = "month",
        workspace: str | None = None,
    ) -> None:
        """``DELETE /budgets``."""
        words = {"kind": kind, "name": name, "period": period, "workspace": workspace}
        await self._send("DELETE", "/budgets", params={k: v for k, v in words.items() if v})


def raised_caps(
    run_id: str,
    folded: SessionState,
    usd: float | None,
    tokens: int | None,
    *,
    max_turns: int | None = None,
    max_seconds: float | None = None,
) -> Budget | None:
    """The run's caps raised as a resume asks (``None``: as they are).

    ``RunStateError`` for a run paused at its own cap (USD, tokens, turns, seconds) that
    the resume does not raise, or a turn cap it has reached already: it would only pause
    again. A cumulative budget is raised elsewhere (``set_budget``).
    """
    _check_limits(run_id, folded, max_turns, max_seconds)
    if usd is None and tokens is None and max_turns is None and max_seconds is None:
        if folded.status == "paused" and folded.pause_reason == "budget":
            if folded.over_budget == "run" and folded.over_cap == "tokens":
                raise RunStateError(
                    f"run {run_id!r} is paused at its token cap: resume it with a higher"
                    " budget_tokens"
                )
            if folded.over_budget in (None, "run"):
                raise RunStateError(
                    f"run {run_id!r} is paused at its budget cap: resume it with a higher"
                    " budget_usd"
                )
        return None
    caps = {"usd": usd, "tokens": tokens, "max_turns": max_turns, "max_seconds": max_seconds}
    given = {cap: value for cap, value in caps.items() if value is not None}
    return (folded.budget or Budget()).model_copy(update=given)


_LIMITS = {"max_turns": ("turn limit", "max_turns"), "max_seconds": ("time limit", "max_seconds")}


def _check_limits(
    run_id: str, folded: SessionState, max_turns: int | None, max_seconds: float | None
) -> None:
    """A run paused at its turn or time limit resumes only with that limit raised."""
    if max_turns is not None and max_turns <= folded.turn:
        raise RunStateError(
            f"run {run_id!r} has taken {folded.turn} turns already: max_turns {max_turns}"
            " would pause it again at once (give more)"
        )
    reason = folded.pause_reason if folded.status == "paused" else None
    given = {"max_turns": max_turns, "max_seconds": max_seconds}
    if reason in _LIMITS and given[reason] is None:
        words, field = _LIMITS[reason]
        raise RunStateError(
            f"run {run_id!r} is paused at its {words}: resume it with a higher {field}"
        )
