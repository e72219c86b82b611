"""Moving a run's log between stores as JSON Lines: export, and a checked import."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

from pydantic_core import from_json

from helix.errors import InvalidEventError
from helix.kernel.events import NewEvent, RunCreated

from ._records import RunRecord
from ._store import EventStore


async def export_lines(store: EventStore, run_id: str) -> AsyncIterator[str]:
    """Yield the run's whole (stitched) log as JSON lines, one event a line."""
    await store.get_run(run_id)
    async for page in store.read_pages(run_id):
        for event in page:
            yield event.to_json()


async def import_lines(
    store: EventStore,
    lines: Iterable[str],
    *,
    run_id: str | None = None,
    workspace: str = "default",
) -> RunRecord:
    """Import an exported log as a new run; every line is checked before anything is written.

    The run keeps the exported run's id (the last event's ``run_id``) unless ``run_id``
    is given, and every event keeps its time, actor and turn. A fork's export imports
    as a standalone run: its inherited history becomes its own.
    """
    events: list[NewEvent] = []
    last_run_id = ""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj: Any = from_json(line)
            envelope, payload = store.registry.parse_envelope(obj)
        except (ValueError, InvalidEventError) as error:
            raise InvalidEventError(f"line {number}: {error}") from None
        if envelope["seq"] != len(events):
            raise InvalidEventError(
                f"line {number}: expected seq {len(events)}, found {envelope['seq']}"
            )
        events.append(NewEvent(payload, envelope["actor"], envelope["turn"], envelope["ts"]))
        last_run_id = envelope["run_id"]
    if not events:
        raise InvalidEventError("nothing to import: the log is empty")
    first = events[0]
    if not isinstance(first.payload, RunCreated):
        raise InvalidEventError(f"line 1: a log starts with run.created, not {first.type}")
    record = await store.create_run(
        first.payload,
        run_id=run_id or last_run_id,
        workspace=workspace,
        actor=first.actor,
        ts=first.ts,
    )
    if len(events) > 1:
        await store.append(record.id, events[1:], expected_seq=1)
    return await store.get_run(record.id)
