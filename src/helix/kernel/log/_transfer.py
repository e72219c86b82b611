"""Moving a run's log between stores as JSON Lines: export, and a checked import."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from pydantic_core import from_json

from helix.errors import InvalidEventError
from helix.kernel.events import (
    STATUS_AFTER,
    TERMINAL_STATUSES,
    NewEvent,
    RunCreated,
    RunPaused,
    RunSettings,
    RunStatus,
)

from ._records import RunRecord
from ._store import EventStore


async def export_lines(store: EventStore, run_id: str) -> AsyncIterator[str]:
    """Yield the run's whole (stitched) log as JSON lines, one event a line."""
    await store.get_run(run_id)
    async for page in store.read_pages(run_id):
        for event in page:
            yield event.to_json()


IMPORTED = "imported"
"""The ``reason`` of the ``run.paused`` that stops an imported run from resuming by itself."""


async def import_lines(
    store: EventStore,
    lines: Iterable[str],
    *,
    world: str,
    run_id: str | None = None,
    workspace: str = "default",
    by: str = "system",
    check_settings: Callable[[RunSettings], object] | None = None,
) -> RunRecord:
    """Import an exported log as a new run; every line is checked before anything is written.

    The file is not trusted. Each line is validated as its type's payload, so content
    hashes must be digests and world paths normalised relative paths (``WorldPath``);
    a bad line is refused with its number. A line of an older version of its type is
    upcast first, as a read would (a log exported by an older Helix imports), and one
    newer than this Helix knows is refused. ``check_settings`` checks what the kernel
    keeps as data in ``run.created``'s settings (the runtime's blueprint); it raises
    ``InvalidEventError`` to refuse them. The run works in ``world``, which the caller
    chooses (a fresh folder of its own): the file's ``run.created`` world is replaced,
    and its ``auto_approve`` setting is turned off. A run that had not ended is paused
    (``run.paused``, reason ``imported``, by ``by``): it never resumes by itself, and a
    person resumes it explicitly.

    The run keeps the exported run's id (the last event's ``run_id``) unless ``run_id``
    is given, and every other event keeps its time, actor and turn. A fork's export
    imports as a standalone run: its inherited history becomes its own.
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
    if check_settings is not None:
        try:
            check_settings(first.payload.settings)
        except InvalidEventError as error:
            raise InvalidEventError(f"line 1: {error}") from None
    if _status_after(events) not in (*TERMINAL_STATUSES, "paused"):
        events.append(NewEvent(RunPaused(reason=IMPORTED), actor=by))
    record = await store.create_run(
        _rehomed(first.payload, world),
        run_id=run_id or last_run_id,
        workspace=workspace,
        actor=first.actor,
        ts=first.ts,
    )
    if len(events) > 1:
        await store.append(record.id, events[1:], expected_seq=1)
    return await store.get_run(record.id)


def _rehomed(created: RunCreated, world: str) -> RunCreated:
    """``run.created`` as imported: the importer's world, and no auto-approval."""
    settings = created.settings.model_copy(update={"auto_approve": False})
    return created.model_copy(update={"world": world, "settings": settings})


def _status_after(events: list[NewEvent]) -> RunStatus:
    status: RunStatus = "queued"
    for event in events:
        status = STATUS_AFTER.get(event.type, status)
    return status
