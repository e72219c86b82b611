"""Roles in the log: ``model.*.role``, the answering model, and ``context.compacted``.

In the vocabulary and its schema, stored exactly in every backend, folded into the
session (the summary and what it stands for, its spend), and older logs still read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helix.errors import InvalidPayloadError
from helix.kernel.events import (
    DEFAULT_REGISTRY,
    ContextCompacted,
    ModelRequested,
    ModelResponded,
    NewEvent,
    Payload,
    RunSettings,
    Usage,
)
from helix.kernel.log import EventStore, MemoryEventStore, SqliteEventStore, open_store
from helix.kernel.session import SpendQuery, decode_state, encode_state, replay_run, spend
from helix.testing import run_created, turn_events

COMPACTED = ContextCompacted(
    upto_turn=1,
    messages=4,
    summary="Turn 1 read README.md.",
    provider="openai",
    model="cheap-model",
    usage=Usage(input_tokens=300, output_tokens=20),
    cost_usd=0.0001,
    latency_ms=12.0,
)


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
    assert "context.compacted" in schema["discriminator"]["mapping"]
    assert DEFAULT_REGISTRY.versions["context.compacted"] == 1
    text = str(schema)
    assert "role" in str(ModelRequested.model_json_schema()["properties"])
    assert "role" in str(ModelResponded.model_json_schema()["properties"])
    assert "upto_turn" in text


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        ("context.compacted", {"upto_turn": 0, "messages": 2, "summary": "s", "provider": "p",
                               "model": "m", "usage": {"input_tokens": 1, "output_tokens": 1},
                               "cost_usd": None}),
        ("context.compacted", {"upto_turn": 1, "messages": 2, "summary": "s"}),
        ("model.requested", {"provider": "p", "model": "m", "role": "x" * 40}),
    ],
)  # fmt: skip
def test_bad_payloads_are_refused(kind: str, data: dict[str, object]) -> None:
    with pytest.raises(InvalidPayloadError):
        DEFAULT_REGISTRY.new_event(kind, data)


def test_older_payloads_still_read() -> None:
    """A log written before roles: no role, no answering model, no settings role."""
    asked = DEFAULT_REGISTRY.parse("model.requested", {"provider": "openai", "model": "gpt-4.1"})
    assert isinstance(asked, ModelRequested)
    assert asked.role is None
    said = DEFAULT_REGISTRY.parse(
        "model.responded",
        {"text": "hi", "usage": {"input_tokens": 1, "output_tokens": 1}, "cost_usd": None,
         "latency_ms": 1.0},
    )  # fmt: skip
    assert isinstance(said, ModelResponded)
    assert (said.role, said.provider, said.model) == (None, None, None)
    assert RunSettings.model_validate({"depth": 1}).role is None


async def test_compaction_round_trips_and_folds_into_the_session(store: EventStore) -> None:
    record = await store.create_run(run_created(), workspace="compacting")
    events = [*turn_events(1), *turn_events(2)]
    await store.append(record.id, events, expected_seq=1)
    before = await replay_run(store, record.id)
    assert before.context_summary is None
    assert before.turn_message_ends == {1: 3, 2: 5}
    head = before.head
    await store.append(record.id, [NewEvent(COMPACTED, turn=2)], expected_seq=head + 1)
    (stored,) = await store.read(record.id, after=head)
    assert store.registry.parse(stored.type, stored.data) == COMPACTED
    assert stored.data["role"] == "summary"

    state = await replay_run(store, record.id)
    assert state.context_summary == "Turn 1 read README.md."
    assert (state.compacted_messages, state.compacted_upto_turn) == (4, 1)
    assert state.usage_by_model["openai:cheap-model"].output_tokens == 20
    assert state.own_usage.cost_usd == pytest.approx(before.own_usage.cost_usd + 0.0001)
    assert decode_state(encode_state(state)) == state  # fold snapshots keep it
    run = await store.get_run(record.id)
    assert run.cost_usd == pytest.approx(state.own_usage.cost_usd)  # the registry counts it

    report = await spend(store, query=SpendQuery(by="role", workspace="compacting"))
    assert set(report.by_role) == {"main", "summary"}  # old-style calls (no role) are main
    assert report.by_role["summary"].output_tokens == 20


async def test_the_answering_model_and_role_are_what_spend_counts(store: EventStore) -> None:
    record = await store.create_run(run_created(), workspace="planning")
    asked = ModelRequested(provider="openai", model="first", role="planner")
    said = ModelResponded(
        text="plan", usage=Usage(input_tokens=5, output_tokens=7), cost_usd=0.5,
        latency_ms=1.0, role="planner", provider="openai", model="second",
    )  # fmt: skip
    await store.append(record.id, [NewEvent(asked), NewEvent(said)], expected_seq=1)
    state = await replay_run(store, record.id)
    assert set(state.usage_by_model) == {"openai:second"}
    report = await spend(store, query=SpendQuery(by="role", workspace="planning"))
    assert set(report.by_role) == {"planner"}
    assert set(report.by_model) == {"openai:second"}
    only: list[Payload] = [asked]
    assert [store.registry.parse(e.type, e.data) for e in await store.read(record.id)][1:2] == only
