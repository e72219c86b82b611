"""The strategy events: in the vocabulary and its schema, stored exactly, folded into progress."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helix.errors import InvalidPayloadError
from helix.kernel.events import (
    DEFAULT_REGISTRY,
    Budget,
    NewEvent,
    Payload,
    StrategyBranch,
    StrategyBranched,
    StrategyChosen,
    StrategyScored,
    WorldKept,
)
from helix.kernel.log import EventStore, MemoryEventStore, SqliteEventStore, open_store
from helix.kernel.session import decode_state, encode_state, replay_run
from helix.testing import run_created

BRANCHED = StrategyBranched(
    turn=0,
    branches=[
        StrategyBranch(run_id="run_b1", message="try A", model="scripted:a", judge_run_id=None),
        StrategyBranch(run_id="run_b2", message="try B"),
    ],
    budget_usd=0.5,
    judge="command: pytest -q",
)
SCORED = [
    StrategyScored(branch="run_b1", status="completed", score=0.0, detail="exit 1\nFAILED"),
    StrategyScored(branch="run_b2", status="completed", score=1.0, detail="exit 0\n1 passed"),
]
CHOSEN = StrategyChosen(
    branch="run_b2", score=1.0, reason="the best score of 2 branches (1)", closed=["run_b1"]
)
KEPT = WorldKept(branch="run_b2", target="/w", manifest="0" * 64, world_changed=True, by="system")


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return str(request.param)


@pytest.fixture
async def store(backend: str, tmp_path: Path) -> AsyncIterator[EventStore]:
    opened: EventStore
    if backend == "memory":
        opened = MemoryEventStore()
    elif backend == "sqlite":
        opened = SqliteEventStore(tmp_path / "events.db")
    else:
        opened = await open_store(backend)
    yield opened
    await opened.close()


def test_the_vocabulary_and_its_schema_have_them() -> None:
    schema = DEFAULT_REGISTRY.json_schema()
    mapping = schema["discriminator"]["mapping"]
    for kind in ("strategy.branched", "strategy.scored", "strategy.chosen"):
        assert kind in mapping
        assert DEFAULT_REGISTRY.versions[kind] == 1


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        ("strategy.branched", {"turn": 0, "branches": [{"run_id": "r"}], "judge": "run"}),
        ("strategy.branched", {"turn": -1, "branches": [], "judge": "run"}),
        ("strategy.scored", {"branch": "r", "status": "completed"}),
        ("strategy.chosen", {"branch": None, "reason": "x", "surprise": 1}),
    ],
)
def test_bad_payloads_are_refused(kind: str, data: dict[str, object]) -> None:
    with pytest.raises(InvalidPayloadError):
        DEFAULT_REGISTRY.new_event(kind, data)


async def test_they_round_trip_and_fold_into_the_runs_progress(store: EventStore) -> None:
    record = await store.create_run(run_created())
    payloads: list[Payload] = [BRANCHED, *SCORED, CHOSEN, KEPT]
    await store.append(record.id, [NewEvent(p) for p in payloads], expected_seq=1)
    stored = await store.read(record.id, after=0)
    assert [store.registry.parse(e.type, e.data) for e in stored] == payloads

    state = await replay_run(store, record.id)
    progress = state.strategy
    assert progress is not None
    assert (progress.turn, progress.budget_usd) == (0, 0.5)
    assert [(b.run_id, b.scored, b.score) for b in progress.branches] == [
        ("run_b1", True, 0.0),
        ("run_b2", True, 1.0),
    ]
    assert (progress.branches[0].message, progress.branches[0].model) == ("try A", "scripted:a")
    assert (progress.decided, progress.chosen, progress.kept) == (True, "run_b2", True)
    assert decode_state(encode_state(state)) == state  # fold snapshots keep it


async def test_progress_builds_up_event_by_event(store: EventStore) -> None:
    record = await store.create_run(run_created())
    await store.append(record.id, [NewEvent(BRANCHED)], expected_seq=1)
    progress = (await replay_run(store, record.id)).strategy
    assert progress is not None
    assert not any(b.scored for b in progress.branches)
    assert not progress.decided
    await store.append(record.id, [NewEvent(SCORED[0])], expected_seq=2)
    progress = (await replay_run(store, record.id)).strategy
    assert progress is not None
    assert [b.scored for b in progress.branches] == [True, False]
    assert (await replay_run(store, record.id, to_seq=0)).strategy is None


async def test_a_fork_with_a_budget_of_its_own(store: EventStore) -> None:
    record = await store.create_run(run_created())
    own = Budget(usd=0.25, max_turns=4)
    fork = await store.fork(record.id, at_seq=0, budget=own)
    (forked,) = [e for e in await store.read(fork.id) if e.type == "run.forked"]
    assert forked.data["budget"] == own.model_dump(mode="json")
    assert (await replay_run(store, fork.id)).budget == own
    plain = await store.fork(record.id, at_seq=0)
    assert (await replay_run(store, plain.id)).budget is None
