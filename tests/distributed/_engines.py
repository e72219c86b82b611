"""Engine openers for the worker processes of the ``processes`` executor's tests.

They must pickle (spawned workers import them by name): module-level functions, given
their settings with ``functools.partial``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from helix.kernel.log import MemoryEventStore, open_store
from helix.runtime import Engine


@asynccontextmanager
async def open_test_engine(db_url: str, home: Path, model_url: str) -> AsyncIterator[Engine]:
    """An engine on the shared store whose ``openai:`` models reach the mock model server."""
    store = await open_store(db_url)
    try:
        env = {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": model_url}
        yield Engine(store, home=home, env=env)
    finally:
        await store.close()


@asynccontextmanager
async def open_broken_engine() -> AsyncIterator[Engine]:
    """An opener that fails, as a worker whose database is unreachable does."""
    if db_unreachable():
        raise OSError("the database is unreachable")
    yield Engine(MemoryEventStore(), home=Path("/nonexistent"))  # pragma: no cover


def db_unreachable() -> bool:
    return True
