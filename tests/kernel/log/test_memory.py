from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from helix.kernel.events import EventRegistry
from helix.kernel.log import EventStore, MemoryEventStore
from helix.testing.conformance import EventStoreConformance, Reopen


class TestMemoryConformance(EventStoreConformance):
    @pytest.fixture
    async def store(self) -> AsyncIterator[EventStore]:
        async with MemoryEventStore() as store:
            yield store

    @pytest.fixture
    def reopen(self) -> Reopen:
        async def reopen(store: EventStore, registry: EventRegistry) -> EventStore:
            assert isinstance(store, MemoryEventStore)
            return store.view(registry)

        return reopen
