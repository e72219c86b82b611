"""What a run's first event says of its start: its settings, and who started it."""

from __future__ import annotations

from helix.kernel.events import RunCreated, RunSettings
from helix.kernel.log import EventStore


async def run_origin(store: EventStore, run_id: str) -> tuple[RunSettings, str]:
    """The settings a run's ``run.created`` holds and its actor (who started the run).

    A fork's own log starts with ``run.forked``: its settings are the defaults here,
    its actor whoever forked it.
    """
    first = await store.event_at(run_id, 0)
    if first is None:
        return RunSettings(), "system"
    if first.type != "run.created":
        return RunSettings(), first.actor
    created = store.registry.parse(first.type, first.data)
    assert isinstance(created, RunCreated)
    return created.settings, first.actor


async def run_settings(store: EventStore, run_id: str) -> RunSettings:
    """The settings a run's ``run.created`` holds (upcast from whichever Helix wrote them).

    A fork's own log starts with ``run.forked``: its settings are the defaults here.
    """
    return (await run_origin(store, run_id))[0]
