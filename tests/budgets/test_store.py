"""One conformance suite for the budget store, run on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from helix.budgets import BudgetCap, BudgetStore, Charge, check_cap, open_budgets, period_bounds
from helix.errors import ConfigError

# 2026-12-15 12:00 UTC, and a moment of the next day and of the next month
NOW = datetime(2026, 12, 15, 12, tzinfo=UTC).timestamp()
NEXT_DAY = datetime(2026, 12, 16, 0, 0, 1, tzinfo=UTC).timestamp()
NEXT_MONTH = datetime(2027, 1, 1, 0, 0, 1, tzinfo=UTC).timestamp()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'helix.db'}"
    url = request.getfixturevalue("fresh_postgres_url")
    assert isinstance(url, str)
    return url


@pytest.fixture
async def store(database: str) -> AsyncIterator[BudgetStore]:
    opened = await open_budgets(database)
    try:
        yield opened
    finally:
        await opened.close()


def cap(
    kind: str = "workspace",
    name: str = "",
    *,
    period: str,
    usd: float | None = None,
    tokens: int | None = None,
) -> BudgetCap:
    return check_cap("team", kind, name, period, usd, tokens)


def charge(usd: float = 0.0, tokens: int = 0, *, at: float = NOW, **who: str) -> Charge:
    return Charge(
        "team", who.get("blueprint", "coder"), who.get("person", "ann"), "run_x", usd, tokens, at
    )


async def test_budgets_are_set_replaced_listed_and_removed(store: BudgetStore) -> None:
    await store.put(cap(period="month", usd=10.0))
    await store.put(cap("person", "ann", period="day", tokens=1000))
    await store.put(cap("blueprint", "coder", period="month", usd=1.0, tokens=5))
    await store.put(cap(period="month", usd=20.0))  # replaces the first
    listed = await store.caps("team")
    assert [(b.scope, b.period, b.usd, b.tokens) for b in listed] == [
        ("workspace:team", "month", 20.0, None),
        ("blueprint:coder", "month", 1.0, 5),
        ("person:ann", "day", None, 1000),
    ]
    assert await store.caps("other") == []
    assert await store.remove("team", "person", "ann", "day") is True
    assert await store.remove("team", "person", "ann", "day") is False
    assert len(await store.caps("team")) == 2


async def test_a_reservation_counts_until_settled_or_released(store: BudgetStore) -> None:
    await store.put(cap(period="month", usd=1.0, tokens=1000))
    assert await store.reserve(charge(0.4, 300), hold="h1", lapses_at=NOW + 60) is None
    (usage,) = await store.usage("team", now=NOW)
    assert (usage.reserved_usd, usage.reserved_tokens, usage.spent_usd) == (0.4, 300, 0.0)
    assert usage.left_usd == pytest.approx(0.6)
    assert usage.left_tokens == 700
    await store.settle("h1", usd=0.1, tokens=120)
    await store.release("h1")  # a settled charge is not released
    assert await store.reserve(charge(0.2, 10), hold="h2", lapses_at=NOW + 60) is None
    await store.release("h2")
    (usage,) = await store.usage("team", now=NOW)
    assert (usage.spent_usd, usage.spent_tokens, usage.reserved_usd) == (0.1, 120, 0.0)


async def test_a_charge_past_a_cap_is_refused_naming_the_budget(store: BudgetStore) -> None:
    await store.put(cap(period="month", usd=10.0))
    await store.put(cap("blueprint", "coder", period="day", tokens=500))
    await store.put(cap("person", "bob", period="day", usd=0.0))  # not this charge's person
    assert await store.reserve(charge(1.0, 400), hold="h1", lapses_at=NOW + 60) is None
    passed = await store.reserve(charge(1.0, 200), hold="h2", lapses_at=NOW + 60)
    assert passed is not None
    assert (passed.budget.scope, passed.budget.period, passed.cap) == (
        "blueprint:coder",
        "day",
        "tokens",
    )
    assert (passed.counted.tokens, passed.counted.usd) == (400, 1.0)
    # another blueprint's run is not counted by that budget; the workspace's still counts it
    assert (
        await store.reserve(charge(8.0, 200, blueprint="other"), hold="h3", lapses_at=NOW + 60)
        is None
    )
    passed = await store.reserve(charge(1.5, 0, blueprint="other"), hold="h4", lapses_at=NOW + 60)
    assert passed is not None
    assert (passed.budget.scope, passed.cap) == ("workspace:team", "usd")
    refused = [u for u in await store.usage("team", now=NOW) if u.budget.kind == "workspace"]
    assert refused[0].reserved_usd == 9.0  # the refused charges hold nothing


async def test_a_new_period_starts_from_nothing(store: BudgetStore) -> None:
    await store.put(cap(period="day", usd=1.0))
    await store.put(cap(period="month", usd=1.5))
    assert await store.reserve(charge(0.9), hold="h1", lapses_at=NOW + 60) is None
    await store.settle("h1", usd=0.9, tokens=0)
    assert await store.reserve(charge(0.5), hold="h2", lapses_at=NOW + 60) is not None
    assert await store.reserve(charge(0.5, at=NEXT_DAY), hold="h3", lapses_at=NEXT_DAY + 60) is None
    passed = await store.reserve(charge(0.5, at=NEXT_DAY), hold="h4", lapses_at=NEXT_DAY + 60)
    assert passed is not None
    assert passed.budget.period == "month"
    assert (
        await store.reserve(charge(0.5, at=NEXT_MONTH), hold="h5", lapses_at=NEXT_MONTH + 60)
        is None
    )


async def test_a_crashed_processs_hold_lapses(store: BudgetStore) -> None:
    await store.put(cap(period="month", usd=1.0))
    assert await store.reserve(charge(0.8), hold="h1", lapses_at=NOW + 60) is None  # never settled
    assert await store.reserve(charge(0.8, at=NOW + 30), hold="h2", lapses_at=NOW + 90) is not None
    assert await store.reserve(charge(0.8, at=NOW + 61), hold="h3", lapses_at=NOW + 121) is None
    (usage,) = await store.usage("team", now=NOW + 61)
    assert usage.reserved_usd == 0.8  # h3 only


async def test_two_processes_racing_for_one_cap_one_passes(database: str) -> None:
    """Eight stores (connections, as eight processes), each reserving at once: one fits."""
    first = await open_budgets(database)
    await first.put(cap(period="month", usd=1.0))
    await first.close()

    async def one(index: int) -> bool:
        store = await open_budgets(database)
        try:
            passed = await store.reserve(charge(0.6), hold=f"h{index}", lapses_at=NOW + 60)
            return passed is None
        finally:
            await store.close()

    # each in a thread of its own: SQLite's statements block, so threads race for real
    results = await asyncio.gather(*(asyncio.to_thread(asyncio.run, one(i)) for i in range(8)))
    assert sorted(results) == [False] * 7 + [True]


def test_bad_budgets_are_refused_with_the_reason() -> None:
    with pytest.raises(ConfigError, match="period 'week': choose day or month"):
        check_cap("team", "workspace", None, "week", 1.0, None)
    with pytest.raises(ConfigError, match=r"usd -1\.0: a cap is 0 or more"):
        check_cap("team", "workspace", None, "day", -1.0, None)
    with pytest.raises(ConfigError, match="tokens -5"):
        check_cap("team", "workspace", None, "day", None, -5)
    with pytest.raises(ConfigError, match="give a cap"):
        check_cap("team", "workspace", None, "day", None, None)
    with pytest.raises(ConfigError, match="kind 'team'"):
        check_cap("team", "team", None, "day", 1.0, None)
    with pytest.raises(ConfigError, match="names one"):
        check_cap("team", "blueprint", None, "day", 1.0, None)
    with pytest.raises(ConfigError, match="name"):
        check_cap("team", "person", "../x", "day", 1.0, None)
    assert check_cap("team", "person", "ann", "day", 0.0, None).scope == "person:ann"


def test_periods_are_utc_calendar_days_and_months() -> None:
    day = period_bounds("day", NOW)
    month = period_bounds("month", NOW)
    assert day == (datetime(2026, 12, 15, tzinfo=UTC).timestamp(), NEXT_DAY - 1)
    assert month == (datetime(2026, 12, 1, tzinfo=UTC).timestamp(), NEXT_MONTH - 1)
