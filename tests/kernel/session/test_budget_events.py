"""``budget.exceeded``'s optional fields (which budget, which cap): schema, fold, old logs."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from helix.errors import InvalidEventError
from helix.kernel.events import (
    DEFAULT_REGISTRY,
    Budget,
    BudgetExceeded,
    NewEvent,
    RunCreated,
    RunPaused,
    RunResumed,
)
from helix.kernel.log import MemoryEventStore
from helix.kernel.session import replay_run


def test_the_new_fields_are_in_the_schema_optional_and_checked() -> None:
    schema = str(DEFAULT_REGISTRY.envelope_adapter().json_schema())
    for field in ("scope", "period", "cap_tokens", "spent_tokens"):
        assert field in schema
    old = BudgetExceeded.model_validate({"cap_usd": 1.0, "spent_usd": 0.5})  # as logs hold them
    assert (old.scope, old.period, old.cap_tokens, old.spent_tokens) == (None, None, None, None)
    with pytest.raises((ValidationError, InvalidEventError)):
        BudgetExceeded.model_validate({"spent_usd": 0, "scope": "workspace:t", "period": "week"})
    with pytest.raises((ValidationError, InvalidEventError)):
        BudgetExceeded.model_validate({"spent_usd": 0, "cap_tokens": -1})
    assert Budget(tokens=10).tokens == 10
    with pytest.raises(ValidationError):
        Budget(tokens=-1)


async def test_the_fold_names_the_budget_passed_until_the_run_resumes() -> None:
    store = MemoryEventStore()
    created = RunCreated(
        objective="x", blueprint="b", model="scripted:x", world="/w", parent=None,
        budget=Budget(tokens=5),
    )  # fmt: skip
    record = await store.create_run(created, run_id="run_a")
    exceeded = BudgetExceeded(
        spent_usd=2.0, scope="workspace:team", period="month", cap_tokens=10, spent_tokens=9
    )
    await store.append(
        "run_a", [NewEvent(exceeded), NewEvent(RunPaused(reason="budget"))], expected_seq=1
    )
    state = await replay_run(store, record.id)
    assert (state.pause_reason, state.over_budget, state.over_cap) == (
        "budget",
        "workspace:team",
        "tokens",
    )
    assert state.budget is not None
    assert state.budget.tokens == 5
    await store.append("run_a", [NewEvent(RunResumed())], expected_seq=3)
    state = await replay_run(store, record.id)
    assert (state.over_budget, state.over_cap) == (None, None)
    own = BudgetExceeded(cap_usd=1.0, spent_usd=1.0)  # the run's own USD cap, as before
    await store.append("run_a", [NewEvent(own)], expected_seq=4)
    state = await replay_run(store, record.id)
    assert (state.over_budget, state.over_cap) == ("run", "usd")
