"""Fixtures the runtime's tests share: each backend as a parameter, a store on it, the
mock model server, and an engine that reaches it through the OpenAI SDK."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from helix.kernel.log import EventStore, MemoryEventStore, SqliteEventStore, open_store
from helix.runtime import Engine
from helix.sandbox import ProcessSandbox
from helix.testing import MockModelServer


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


@pytest.fixture
def server() -> Iterator[MockModelServer]:
    """The mock model server, stopped after the test."""
    with MockModelServer() as mock:
        yield mock


def mock_engine(
    home: Path, server: MockModelServer, store: EventStore | None = None, **options: Any
) -> Engine:
    """An engine on ``store`` (a fresh memory store) whose ``openai:`` models are ``server``'s.

    Commands run in the process sandbox; ``options`` are the engine's own (``deltas=``…).
    """
    env = {"OPENAI_API_KEY": "test-no-key", "OPENAI_BASE_URL": server.openai_base_url}
    return Engine(
        store or MemoryEventStore(), home=home, sandbox=ProcessSandbox(), env=env, **options
    )
