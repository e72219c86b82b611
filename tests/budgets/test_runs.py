"""Runs reserve each model call against the cumulative budgets that apply to them.

Real stores (SQLite and PostgreSQL), a mock model server over HTTP, prices given by
the blueprint: every reply reports a million input tokens, so costs $2.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helix.api import LocalApi, Run, StoreSpending
from helix.budgets import check_cap, open_budgets
from helix.errors import ConfigError, RunStateError
from helix.kernel.log import open_store
from helix.providers import Scenario
from helix.runtime import Blueprint, Engine, ModelPrice
from helix.testing import MockModelServer

MODEL = "openai:house-model-nobody-prices"
PRICED = Blueprint(
    name="coder",
    model=MODEL,
    max_tokens=1000,
    prices={MODEL: ModelPrice(input=2.0, output=10.0)},  # a call projects ~$0.01 of output
)
REPLY = {"text": "done", "usage": {"input_tokens": 1_000_000, "output_tokens": 0}}


STOPS = {"run.paused", "run.completed", "run.failed", "run.cancelled"}


async def stopped(api: LocalApi, run_id: str, after: int = -1) -> Run:
    """The run once it stops (pauses or ends) after seq ``after``."""
    async for event in api.events(run_id, after=after, follow=True):
        if event.type in STOPS:
            break
    return await api.get(run_id)


async def resumed(api: LocalApi, run_id: str, **caps: int) -> Run:
    """Resume the run and wait until it stops again."""
    head = (await api.get(run_id)).head
    await api.resume(run_id, **caps)
    return await stopped(api, run_id, head)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'helix.db'}"
    url = request.getfixturevalue("fresh_postgres_url")
    assert isinstance(url, str)
    return url


@pytest.fixture
async def api(database: str, helix_home: Path) -> AsyncIterator[LocalApi]:
    """A door as user:ann in workspace ``team``, its engine reserving against the database."""
    store = await open_store(database)
    spending = StoreSpending(lambda: open_budgets(database))
    with MockModelServer(Scenario.of(REPLY, repeat=True)) as server:
        env = {"OPENAI_API_KEY": "test-no-key", "OPENAI_BASE_URL": server.openai_base_url}
        engine = Engine(store, home=helix_home, env=env, spending=spending)
        try:
            async with LocalApi(engine, actor="user:ann", workspace="team") as door:
                yield door
        finally:
            await spending.aclose()
            await store.close()


async def test_a_workspace_monthly_cap_pauses_the_second_of_two_runs(api: LocalApi) -> None:
    await api.set_budget("workspace", period="month", usd=2.005)
    first = await api.create("one", blueprint=PRICED)
    assert (await stopped(api, first.id)).status == "completed"  # $0.01 projected: it fit
    second = await api.create("two", blueprint=PRICED)
    paused = await stopped(api, second.id)
    assert (paused.status, paused.cost_usd) == ("paused", 0.0)  # the model was not called
    events = [e async for e in api.events(second.id)]
    (exceeded,) = [e.data for e in events if e.type == "budget.exceeded"]
    assert exceeded["scope"] == "workspace:team"
    assert (exceeded["period"], exceeded["cap_usd"]) == ("month", 2.005)
    assert exceeded["spent_usd"] == pytest.approx(2.0)
    assert [e.data["reason"] for e in events if e.type == "run.paused"] == ["budget"]
    (usage,) = (await api.budgets()).budgets
    assert usage.spent_usd == pytest.approx(2.0)
    assert usage.reserved_usd == 0.0
    assert usage.left_usd == pytest.approx(0.005)

    await api.set_budget("workspace", period="month", usd=10.0)  # raised: resume continues
    assert (await resumed(api, second.id)).status == "completed"
    (usage,) = (await api.budgets()).budgets
    assert usage.spent_usd == pytest.approx(4.0)


async def test_a_blueprint_or_person_budget_counts_only_their_runs(api: LocalApi) -> None:
    await api.set_budget("person", name="bob", period="day", tokens=10)  # not ann's runs
    await api.set_budget("blueprint", name="coder", period="day", tokens=1_000_500)
    first = await api.create("one", blueprint=PRICED)
    assert (await stopped(api, first.id)).status == "completed"
    other = await api.create("other", blueprint=PRICED.model_copy(update={"name": "writer"}))
    assert (await stopped(api, other.id)).status == "completed"  # another blueprint's budget
    second = await api.create("two", blueprint=PRICED)
    assert (await stopped(api, second.id)).status == "paused"
    events = [e async for e in api.events(second.id)]
    (exceeded,) = [e.data for e in events if e.type == "budget.exceeded"]
    assert (exceeded["scope"], exceeded["period"]) == ("blueprint:coder", "day")
    assert (exceeded["cap_tokens"], exceeded["spent_tokens"]) == (1_000_500, 1_000_000)
    assert exceeded["cap_usd"] is None
    # the run is paused at a cumulative budget: a resume does not need a new cap of its own
    await api.set_budget("blueprint", name="coder", period="day", tokens=5_000_000)
    assert (await resumed(api, second.id)).status == "completed"


async def test_a_runs_own_token_cap_pauses_it(api: LocalApi) -> None:
    capped = PRICED.model_copy(update={"budget": PRICED.budget.model_copy(update={"tokens": 500})})
    run = await api.create("capped", blueprint=capped)  # 1000 tokens out could pass 500
    paused = await stopped(api, run.id)
    assert paused.status == "paused"
    events = [e async for e in api.events(run.id)]
    (exceeded,) = [e.data for e in events if e.type == "budget.exceeded"]
    assert (exceeded["scope"], exceeded["cap_tokens"], exceeded["spent_tokens"]) == ("run", 500, 0)
    with pytest.raises(RunStateError, match="token cap: resume it with a higher budget_tokens"):
        await api.resume(run.id)
    assert (await resumed(api, run.id, budget_tokens=2_000_000)).status == "completed"
    given = await api.create("given", blueprint=PRICED, budget_tokens=10)  # the door's cap
    assert (await stopped(api, given.id)).status == "paused"
    events = [e async for e in api.events(given.id)]
    (exceeded,) = [e.data for e in events if e.type == "budget.exceeded"]
    assert exceeded["cap_tokens"] == 10


async def test_a_usd_budget_refuses_an_unpriced_model_at_creation(api: LocalApi) -> None:
    unpriced = Blueprint(name="coder", model=MODEL)
    await api.set_budget("workspace", period="day", tokens=10_000_000)  # tokens bind any model
    run = await api.create("tokens only", blueprint=unpriced)
    assert (await stopped(api, run.id)).status == "completed"
    await api.set_budget("person", name="ann", period="month", usd=5.0)
    with pytest.raises(
        ConfigError, match=r"no known price, so the USD budget person:ann \(month\)"
    ):
        await api.create("x", blueprint=unpriced)
    with pytest.raises(ConfigError, match="prices:"):
        await api.create("x", blueprint=unpriced)
    run = await api.create("priced", blueprint=PRICED)  # the blueprint prices it: it binds
    assert (await stopped(api, run.id)).status == "completed"


async def test_bad_budgets_through_the_door(api: LocalApi) -> None:
    with pytest.raises(ConfigError, match="choose day or month"):
        await api.set_budget("workspace", period="year", usd=1.0)
    with pytest.raises(ConfigError, match="a cap is 0 or more"):
        await api.set_budget("workspace", usd=-1.0)
    with pytest.raises(ConfigError, match="give a cap"):
        await api.set_budget("workspace")
    from helix.budgets import BudgetNotFoundError

    with pytest.raises(BudgetNotFoundError):
        await api.remove_budget("person", name="ann")
    assert check_cap("team", "workspace", None, "month", 1.0, None).scope == "workspace:team"
