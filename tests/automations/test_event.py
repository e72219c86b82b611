"""``automation.fired``: registered, in ``helix schema events``, closed, and inert in replay."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from helix.errors import InvalidEventError
from helix.kernel.events import DEFAULT_REGISTRY, AutomationFired, Budget, NewEvent, RunCreated
from helix.kernel.log import MemoryEventStore
from helix.kernel.session import replay_run


def test_the_payload_is_registered_and_closed() -> None:
    schema = DEFAULT_REGISTRY.envelope_adapter().json_schema()
    assert "automation.fired" in str(schema)
    fired = AutomationFired(automation_id="aut_1", name="nightly", trigger="cron", slot="cron:x")
    assert (fired.missed, fired.source_run) == (False, None)
    with pytest.raises((ValidationError, InvalidEventError)):
        AutomationFired.model_validate(
            {"automation_id": "a", "name": "n", "trigger": "cron", "slot": "s", "secret": "x"}
        )
    with pytest.raises((ValidationError, InvalidEventError)):
        AutomationFired(automation_id="a", name="n", trigger="sometimes", slot="s")


async def test_a_run_that_says_why_it_started_replays_like_one_that_does_not() -> None:
    store = MemoryEventStore()
    created = RunCreated(
        objective="tidy", blueprint="nightly", model="openai:gpt-4.1", world="/w", parent=None,
        budget=Budget(),
    )  # fmt: skip
    for run_id, why in (("run_a", True), ("run_b", False)):
        await store.create_run(created, run_id=run_id)
        if why:
            fired = AutomationFired(automation_id="aut_1", name="n", trigger="cron", slot="cron:x")
            await store.append(run_id, [NewEvent(fired)], expected_seq=1)
    with_why, without = await replay_run(store, "run_a"), await replay_run(store, "run_b")
    assert with_why.status == without.status
    assert with_why.messages == without.messages
    events = await store.read("run_a")
    assert [e.type for e in events] == ["run.created", "automation.fired"]
    assert events[1].actor == "system"
