"""A USD cap binds only a model with a price: unpriced models are refused unless priced."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helix.errors import BlueprintError, ConfigError
from helix.kernel.log import MemoryEventStore
from helix.providers import PriceBook, Scenario
from helix.runtime import Blueprint, Engine, ModelPrice
from helix.testing import MockModelServer

UNPRICED = "openai:house-model-nobody-prices"


@pytest.fixture
def engine(helix_home: Path) -> Iterator[Engine]:
    """An engine whose OpenAI-dialect models answer from a mock server over HTTP."""
    reply = {"text": "done", "usage": {"input_tokens": 1_000_000, "output_tokens": 0}}
    with MockModelServer(Scenario.of(reply)) as server:
        env = {"OPENAI_API_KEY": "test-no-key", "OPENAI_BASE_URL": server.openai_base_url}
        yield Engine(MemoryEventStore(), home=helix_home, env=env)


async def test_a_usd_cap_on_a_model_without_a_price_is_refused(
    engine: Engine, tmp_path: Path
) -> None:
    assert not PriceBook().knows("openai", "house-model-nobody-prices")
    with pytest.raises(ConfigError, match="has no known price, so a USD budget cannot bind"):
        await engine.create("x", model=UNPRICED, world=tmp_path, budget_usd=1.0)
    capped = Blueprint(model=["openai:gpt-4.1", UNPRICED], budget={"usd": 1.0})
    with pytest.raises(ConfigError, match="prices:"):
        await engine.create("x", blueprint=capped, world=tmp_path)
    assert (await engine.store.list_runs()).runs == []  # nothing was created


async def test_without_a_cap_an_unpriced_model_runs_and_costs_null(
    engine: Engine, tmp_path: Path
) -> None:
    record = await engine.create("x", model=UNPRICED, world=tmp_path)
    state = await engine.drive(record.id)
    assert state.status == "completed"
    (responded,) = [e for e in await engine.store.read(record.id) if e.type == "model.responded"]
    assert responded.data["cost_usd"] is None


async def test_a_blueprint_price_lets_the_cap_bind(engine: Engine, tmp_path: Path) -> None:
    priced = Blueprint(
        model=UNPRICED, budget={"usd": 5.0}, prices={UNPRICED: ModelPrice(input=2.0, output=8.0)}
    )
    record = await engine.create("x", blueprint=priced, world=tmp_path)
    state = await engine.drive(record.id)
    assert state.status == "completed"
    (responded,) = [e for e in await engine.store.read(record.id) if e.type == "model.responded"]
    assert responded.data["cost_usd"] == pytest.approx(2.0)  # a million input tokens at $2


def test_blueprint_prices_are_checked(tmp_path: Path) -> None:
    with pytest.raises(BlueprintError, match="prices"):
        Blueprint.parse({"prices": {UNPRICED: {"input": -1, "output": 1}}}, source="bp")
    with pytest.raises(BlueprintError, match="prices"):
        Blueprint.parse({"prices": {UNPRICED: {"input": 1}}}, source="bp")
    from helix.tools import builtin_registry

    unknown = Blueprint.parse({"prices": {"nonsense": {"input": 1, "output": 1}}}, source="bp")
    with pytest.raises(BlueprintError, match=r"prices\.nonsense"):
        unknown.check(builtin_registry())
