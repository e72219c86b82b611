"""``helix logs``, ``helix replay``, ``helix export``, ``helix import``: the session log."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from secrets import token_hex
from typing import Annotated

import typer

from helix.config import Settings
from helix.errors import RunExistsError
from helix.kernel.events import TERMINAL_EVENTS
from helix.kernel.log import EventStore, export_lines, import_lines

from ._client import remotely
from ._common import fail, print_json_line, run, with_store
from ._remote import connected
from ._render import event_line, state_dict


def logs(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new events.")
    ] = False,
    after: Annotated[int, typer.Option(help="Only events with a seq above this.")] = -1,
    json: Annotated[bool, typer.Option("--json", help="One JSON event per line.")] = False,
) -> None:
    """Print a run's events; with --follow, stream them live until the run ends."""

    def show(line: str) -> None:
        typer.echo(line)

    if (remote := connected()) is not None:
        remotely(lambda: remote.logs(run_id, follow=follow, after=after, json=json))
        return

    async def main(store: EventStore) -> None:
        record = await store.get_run(run_id)
        if not follow:
            async for page in store.read_pages(run_id, after=after):
                for event in page:
                    show(event.to_json() if json else event_line(event))
            return
        async with store.subscribe(run_id, after=after) as events:
            async for event in events:
                show(event.to_json() if json else event_line(event))
                if event.type in TERMINAL_EVENTS and event.seq >= record.head:
                    return

    run(lambda: with_store(main))


def replay(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    to: Annotated[int | None, typer.Option("--to", help="Stop after this seq.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Rebuild a run's state from its log (recorded results are read back, never re-run)."""
    from helix.kernel.session import SessionState, replay_run

    def show(state: SessionState) -> None:
        shown = state_dict(state)
        if json:
            print_json_line(shown)
        else:
            for key, value in shown.items():
                typer.echo(f"{key:<18} {value}")

    if (remote := connected()) is not None:
        # The same fold, over the events the server sends: nothing runs, here or there.
        show(remotely(lambda: remote.replay(run_id, to_seq=to)))
        return

    async def main(store: EventStore) -> None:
        await store.get_run(run_id)
        show(await replay_run(store, run_id, to_seq=to))

    run(lambda: with_store(main))


def export(run_id: Annotated[str, typer.Argument(metavar="RUN")]) -> None:
    """Write a run's whole log to stdout as JSON Lines."""
    if (remote := connected()) is not None:
        sys.stdout.write(remotely(lambda: remote.client.call("GET", f"/runs/{run_id}/export")))
        return

    async def main(store: EventStore) -> None:
        async for line in export_lines(store, run_id):
            sys.stdout.write(line + "\n")

    run(lambda: with_store(main))


def import_(
    file: Annotated[str, typer.Argument(metavar="FILE", help="A JSON Lines log; - for stdin.")],
    as_id: Annotated[str | None, typer.Option("--as", help="Import under this run id.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Import an exported log as a new run (checked whole before anything is written).

    The run works in a new, empty folder under HELIX_HOME/worlds/default (never the
    file's world), is paused unless it had ended, and never auto-approves.
    """
    if file == "-":
        lines = sys.stdin.read().splitlines()
    else:
        try:
            lines = Path(file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            fail(f"cannot read {file}: {error}", 2)
    if (remote := connected()) is not None:
        remotely(lambda: remote.import_lines(lines, as_id, json))
        return

    async def main(store: EventStore) -> None:
        from helix.runtime import blueprint_of  # the engine only when a run is imported

        # Never the file's world: a new, empty folder under HELIX_HOME/worlds/default.
        world = Settings.from_env().home / "worlds" / "default" / f"imported-{token_hex(6)}"
        world.mkdir(parents=True)
        try:
            record = await import_lines(
                store, lines, world=str(world.resolve()), run_id=as_id, check_settings=blueprint_of
            )
        except BaseException as error:
            with contextlib.suppress(OSError):
                world.rmdir()
            if isinstance(error, RunExistsError):
                fail(f"{error}; import it under another id with --as NEW_ID", 1)
            raise
        if json:
            print_json_line({"id": record.id, "status": record.status, "events": record.next_seq})
        else:
            typer.echo(record.id)

    run(lambda: with_store(main))
