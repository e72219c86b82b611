"""``helix runs``, ``helix show``, ``helix fork``: the run registry."""

from __future__ import annotations

from typing import Annotated

import typer

from helix.kernel.events import RUN_STATUSES
from helix.kernel.log import EventStore

from ._client import remotely
from ._common import fail, print_json_line, run, with_store
from ._remote import connected, print_records, show_record
from ._render import record_dict


def runs(
    status: Annotated[str | None, typer.Option(help="Only runs with this status.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many runs.")] = 20,
    json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """List runs, newest first."""
    if status is not None and status not in RUN_STATUSES:
        fail(f"unknown status {status!r}: choose from {', '.join(RUN_STATUSES)}")
    if (remote := connected()) is not None:
        print_records(remotely(lambda: remote.runs(status, limit)), json=json)
        return

    async def main(store: EventStore) -> None:
        page = await store.list_runs(status=status, limit=limit)
        print_records(page.runs, json=json)

    run(lambda: with_store(main))


def show(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show one run: status, model, counters."""
    if (remote := connected()) is not None:
        show_record(remotely(lambda: remote.run_record(run_id)), json=json)
        return

    async def main(store: EventStore) -> None:
        show_record(await store.get_run(run_id), json=json)

    run(lambda: with_store(main))


def fork(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    turn: Annotated[int, typer.Option(min=0, help="Fork where this turn ended (0: start).")],
    message: Annotated[str | None, typer.Option(help="What the fork is told first.")] = None,
    model: Annotated[str | None, typer.Option(help="A different model for the fork.")] = None,
    detach: Annotated[bool, typer.Option(help="Only create the fork; do not run it.")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Fork a run at a turn boundary, with its own copy of the world there, and run it."""
    from helix.runtime import fork_with_world

    from ._live import drive_and_show, engine_for, exit_code

    if (remote := connected()) is not None:
        raise typer.Exit(remotely(lambda: remote.fork(run_id, turn, message, model, detach, json)))

    async def main(store: EventStore) -> int:
        engine = engine_for(store)
        record = await fork_with_world(engine, run_id, turn, message=message, model=model)
        seq = record.parent.seq if record.parent is not None else -1
        if detach:
            if json:
                print_json_line(record_dict(record))
            else:
                typer.echo(record.id)
            return 0
        if not json:
            typer.echo(f"fork {record.id} of {run_id} at turn {turn}")
        state = await drive_and_show(engine, record.id, json=json, after=seq)
        return exit_code(state)

    raise typer.Exit(run(lambda: with_store(main)))
