"""Cumulative budgets: what one caps, what it has spent this period, what a call would pass.

A budget belongs to a workspace and caps one of three things there, for one UTC calendar
period (``day`` or ``month``): the whole workspace's model calls (``kind: workspace``),
those of the runs of one blueprint (``blueprint``, by its name), or those of the runs
one person made (``person``, by user name). Its cap is in USD, in tokens (input plus
output), or both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from helix.errors import ConfigError, NotFoundError

Period = Literal["day", "month"]
Kind = Literal["workspace", "blueprint", "person"]
PERIODS: tuple[Period, ...] = ("day", "month")
KINDS: tuple[Kind, ...] = ("workspace", "blueprint", "person")

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")


class BudgetNotFoundError(NotFoundError):
    """No budget of that kind, name and period in the workspace."""

    code = "budget_not_found"


class BudgetCap(BaseModel):
    """One budget: whose calls it counts, for which period, and its caps."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    workspace: str
    kind: Kind
    name: str = ""
    """The blueprint's or the person's name; empty for the workspace's own budget."""
    period: Period
    usd: float | None = Field(default=None, ge=0, le=1e9)
    """The USD cap for the period (``None``: none)."""
    tokens: int | None = Field(default=None, ge=0, le=10**15)
    """The token cap (input plus output tokens) for the period (``None``: none)."""

    @model_validator(mode="after")
    def _checked(self) -> BudgetCap:
        if self.usd is None and self.tokens is None:
            raise ValueError("give a cap: usd, tokens, or both")
        if (self.kind == "workspace") != (self.name == ""):
            raise ValueError("a blueprint or person budget names one; a workspace budget no name")
        if self.name and _NAME.fullmatch(self.name) is None:
            raise ValueError(f"name {self.name[:64]!r}: letters, digits, '_.@-', up to 64")
        return self

    @property
    def scope(self) -> str:
        """How events and people name it: ``workspace:W``, ``blueprint:B``, ``person:P``."""
        return f"{self.kind}:{self.name or self.workspace}"


def check_cap(
    workspace: str,
    kind: str,
    name: str | None,
    period: str,
    usd: float | None,
    tokens: int | None,
) -> BudgetCap:
    """A ``BudgetCap`` from outside words, or a ``ConfigError`` saying what is wrong."""
    if kind not in KINDS:
        raise ConfigError(f"budget kind {kind[:64]!r}: choose {', '.join(KINDS)}")
    if period not in PERIODS:
        raise ConfigError(f"period {period[:64]!r}: choose day or month")
    if usd is not None and not usd >= 0:
        raise ConfigError(f"usd {usd}: a cap is 0 or more")
    if tokens is not None and tokens < 0:
        raise ConfigError(f"tokens {tokens}: a cap is 0 or more")
    try:
        return BudgetCap(
            workspace=workspace, kind=kind, name=name or "", period=period, usd=usd, tokens=tokens
        )
    except ValueError as error:
        errors = getattr(error, "errors", None)
        said = "; ".join(str(e.get("msg")) for e in errors()) if callable(errors) else str(error)
        raise ConfigError(f"invalid budget: {said}") from None


class BudgetUsage(BaseModel):
    """A budget with what it counted in its current period (``helix budgets list``)."""

    model_config = ConfigDict(frozen=True)

    budget: BudgetCap
    scope: str
    """``workspace:W``, ``blueprint:B`` or ``person:P`` (as ``budget.exceeded`` names it)."""
    period_start: str
    """When the current period began (UTC, ISO 8601)."""
    period_end: str
    """When it ends: the next one begins (UTC)."""
    spent_usd: float
    spent_tokens: int
    """What settled calls cost this period."""
    reserved_usd: float
    reserved_tokens: int
    """What calls in flight hold (each at most, until answered)."""
    left_usd: float | None
    left_tokens: int | None
    """What is left under each cap (``None``: no such cap; never below 0)."""


class BudgetList(BaseModel):
    """A workspace's budgets, each with its current period's spend."""

    workspace: str
    budgets: list[BudgetUsage]


@dataclass(frozen=True, slots=True)
class Charge:
    """A model call to hold against the budgets that apply to its run."""

    workspace: str
    blueprint: str
    person: str | None
    run_id: str
    usd: float
    tokens: int
    at: float
    """POSIX seconds: the period it counts in."""


@dataclass(frozen=True, slots=True)
class Counted:
    """What one budget counted in one period: settled, and held for calls in flight."""

    spent_usd: float = 0.0
    spent_tokens: int = 0
    reserved_usd: float = 0.0
    reserved_tokens: int = 0

    @property
    def usd(self) -> float:
        return self.spent_usd + self.reserved_usd

    @property
    def tokens(self) -> int:
        return self.spent_tokens + self.reserved_tokens


@dataclass(frozen=True, slots=True)
class Passed:
    """The budget a charge would take past a cap, and what it had counted (nothing held)."""

    budget: BudgetCap
    counted: Counted
    cap: Literal["usd", "tokens"]


def period_bounds(period: Period, at: float) -> tuple[float, float]:
    """The UTC calendar day or month holding ``at``: its start and the next one's (POSIX)."""
    moment = datetime.fromtimestamp(at, UTC)
    if period == "day":
        start = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        end = datetime.fromordinal(start.toordinal() + 1).replace(tzinfo=UTC)
    else:
        start = moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        year, month = (start.year + 1, 1) if start.month == 12 else (start.year, start.month + 1)
        end = start.replace(year=year, month=month)
    return start.timestamp(), end.timestamp()


def applies(budget: BudgetCap, charge: Charge) -> bool:
    """Whether ``budget`` counts ``charge`` (same workspace, and its blueprint or person)."""
    if budget.workspace != charge.workspace:
        return False
    if budget.kind == "blueprint":
        return budget.name == charge.blueprint
    if budget.kind == "person":
        return budget.name == charge.person
    return True


def passes(budget: BudgetCap, counted: Counted, charge: Charge) -> Passed | None:
    """The cap ``charge`` would take ``budget`` past, given what it ``counted``; else ``None``."""
    if budget.usd is not None and counted.usd + charge.usd > budget.usd + 1e-12:
        return Passed(budget, counted, "usd")
    if budget.tokens is not None and counted.tokens + charge.tokens > budget.tokens:
        return Passed(budget, counted, "tokens")
    return None


def usage_of(budget: BudgetCap, counted: Counted, at: float) -> BudgetUsage:
    """``budget`` with what it ``counted`` in the period holding ``at``."""
    start, end = period_bounds(budget.period, at)
    left_usd = None if budget.usd is None else max(0.0, budget.usd - counted.usd)
    left_tokens = None if budget.tokens is None else max(0, budget.tokens - counted.tokens)
    return BudgetUsage(
        budget=budget,
        scope=budget.scope,
        period_start=_iso(start),
        period_end=_iso(end),
        spent_usd=counted.spent_usd,
        spent_tokens=counted.spent_tokens,
        reserved_usd=counted.reserved_usd,
        reserved_tokens=counted.reserved_tokens,
        left_usd=left_usd,
        left_tokens=left_tokens,
    )


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
