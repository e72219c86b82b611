"""Importing an exported log as a new run: checked whole, in a fresh empty world."""

from __future__ import annotations

import contextlib
import secrets
from pathlib import Path

from helix.errors import ConfigError, RunExistsError
from helix.kernel.log import EventStore, RunRecord, import_lines, new_run_id

from ._ids import LAST
from ._models import Imported


async def import_run(
    store: EventStore, lines: list[str], *, worlds: Path, workspace: str, actor: str,
    as_id: str | None,
) -> Imported:  # fmt: skip
    """Import ``lines`` into ``workspace``, in a new folder under ``worlds/WORKSPACE``.

    The run keeps the exported run's id unless a run has it already (the same export
    imported twice): then it gets a fresh id, and ``original_id`` says which it was.
    An id asked for (``as_id``) is that id or nothing (``RunExistsError``).
    """
    from helix.runtime import blueprint_of  # refuses a blueprint this Helix would not run

    if as_id == LAST:
        raise ConfigError("`last` names the newest run: import under another id")
    world = worlds / workspace / f"imported-{secrets.token_hex(6)}"
    world.mkdir(parents=True)
    folder = str(world.resolve())

    async def under(run_id: str | None) -> RunRecord:
        return await import_lines(
            store, lines, world=folder, run_id=run_id, workspace=workspace, by=actor,
            check_settings=blueprint_of,
        )  # fmt: skip

    original = None
    try:
        try:
            record = await under(as_id)
        except RunExistsError as clash:
            if as_id is not None:
                raise
            original = clash.run_id
            record = await under(new_run_id())
    except BaseException:
        with contextlib.suppress(OSError):  # a refused import leaves no empty world
            world.rmdir()
        raise
    return Imported(
        id=record.id, status=record.status, events=record.next_seq, original_id=original
    )
