"""The memory events: in the vocabulary and its schema, stored exactly, folded as no-ops."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helix.errors import InvalidPayloadError
from helix.kernel.events import (
    DEFAULT_REGISTRY,
    MEMORY_PAYLOADS,
    MemoryArtifactOpened,
    MemoryArtifactSaved,
    MemoryRecalled,
    MemoryRemembered,
    NewEvent,
    Payload,
)
from helix.kernel.log import EventStore, MemoryEventStore, SqliteEventStore, open_store
from helix.kernel.session import replay_run
from helix.testing import run_created

DIGEST = "a" * 64
PAYLOADS: list[Payload] = [
    MemoryRemembered(
        call_id="t1c0", id="mem_1", scope="personal", owner="ann", tags=["x"], chars=5
    ),
    MemoryRecalled(call_id="t1c1", query='deploy "x', scopes=["personal", "workspace"], ids=[]),
    MemoryArtifactSaved(
        call_id="t2c0",
        scope="workspace",
        owner="team",
        name="a.md",
        version=1,
        media_type="text/markdown",
        size=3,
        sha256=DIGEST,
    ),
    MemoryArtifactOpened(
        call_id="t2c1",
        scope="workspace",
        owner="team",
        name="a.md",
        version=1,
        sha256=DIGEST,
        path="notes/a.md",
    ),
]


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
    mapping = DEFAULT_REGISTRY.json_schema()["discriminator"]["mapping"]
    names = [kind.TYPE for kind in MEMORY_PAYLOADS]
    assert names == [
        "memory.remembered",
        "memory.recalled",
        "memory.artifact_saved",
        "memory.artifact_opened",
    ]
    for name in names:
        assert name in mapping
        assert DEFAULT_REGISTRY.versions[name] == 1


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        (
            "memory.remembered",
            {"call_id": "c", "id": "m", "scope": "everyone", "owner": "a", "chars": 1},
        ),
        (
            "memory.remembered",
            {"call_id": "c", "id": "m", "scope": "personal", "owner": "a", "chars": -1},
        ),
        ("memory.recalled", {"call_id": "c", "query": "q", "scopes": [], "ids": [], "text": "x"}),
        (
            "memory.artifact_saved",
            {
                "call_id": "c",
                "scope": "personal",
                "owner": "a",
                "name": "n",
                "version": 0,
                "media_type": "t/x",
                "size": 1,
                "sha256": DIGEST,
            },
        ),
    ],
)
def test_bad_payloads_are_refused(kind: str, data: dict[str, object]) -> None:
    with pytest.raises(InvalidPayloadError):
        DEFAULT_REGISTRY.new_event(kind, data)


async def test_they_round_trip_and_fold_as_no_ops(store: EventStore) -> None:
    record = await store.create_run(run_created())
    before = await replay_run(store, record.id)
    await store.append(record.id, [NewEvent(p, turn=1) for p in PAYLOADS], expected_seq=1)
    stored = await store.read(record.id, after=0)
    assert [store.registry.parse(e.type, e.data) for e in stored] == PAYLOADS
    after = await replay_run(store, record.id)
    assert after.head == before.head + len(PAYLOADS)
    after.head = before.head
    assert after == before  # nothing a run's state holds changes
