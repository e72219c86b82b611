"""``run.created.blueprint_version``: optional, stored exactly, absent in older logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.errors import InvalidPayloadError
from helix.kernel.events import DEFAULT_REGISTRY, RunCreated
from helix.kernel.log import SqliteEventStore


def test_it_is_optional_and_counts_from_one() -> None:
    old = {"objective": "x", "model": "scripted:demo", "world": "/w", "blueprint": "reviewer"}
    parsed = DEFAULT_REGISTRY.parse("run.created", old)  # a log from before versions
    assert isinstance(parsed, RunCreated)
    assert parsed.blueprint_version is None
    assert DEFAULT_REGISTRY.parse("run.created", {**old, "blueprint_version": 3}) == RunCreated(
        objective="x", model="scripted:demo", world="/w", blueprint="reviewer", blueprint_version=3
    )
    for bad in (0, -1, "3", 2.5):
        with pytest.raises(InvalidPayloadError, match="blueprint_version"):
            DEFAULT_REGISTRY.parse("run.created", {**old, "blueprint_version": bad})
    schema = DEFAULT_REGISTRY.model("run.created").model_json_schema()
    assert "blueprint_version" in schema["properties"]


async def test_it_is_stored_and_read_back(tmp_path: Path) -> None:
    store = SqliteEventStore(tmp_path / "events.db")
    try:
        created = RunCreated(
            objective="x", model="scripted:demo", world=str(tmp_path), blueprint="r",
            blueprint_version=2,
        )  # fmt: skip
        record = await store.create_run(created, workspace="default")
        first = await store.event_at(record.id, 0)
        assert first is not None
        assert first.data["blueprint_version"] == 2
        assert DEFAULT_REGISTRY.parse(first.type, first.data) == created
    finally:
        await store.close()
