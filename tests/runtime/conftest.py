"""Fixtures the runtime's tests share: each backend as a parameter, and a store on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helix.kernel.log import EventStore, SqliteEventStore, open_store


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def postgres(request: pytest.FixtureRequest) -> str | None:
    """The PostgreSQL database's URL, or ``None`` for a SQLite file."""
    return request.getfixturevalue("postgres_url") if request.param == "postgres" else None


@pytest.fixture
async def store(postgres: str | None, tmp_path: Path) -> AsyncIterator[EventStore]:
    """An event store on the test's backend, closed after it."""
    if postgres is not None:
        opened: EventStore = await open_store(postgres)
    else:
        opened = SqliteEventStore(tmp_path / "events.db")
    yield opened
    await opened.close()
