"""``helix logs``, ``helix replay``, ``helix export``, ``helix import``: the session log."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Annotated

import typer

from helix.errors import ConflictError

from ._common import fail, print_json_line, run
from ._control import RunArg
from ._door import Door, with_door


def logs(
    run_id: RunArg,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new events.")
    ] = False,
    after: Annotated[int, typer.Option(help="Only events with a seq above this.")] = -1,
    json: Annotated[bool, typer.Option("--json", help="One JSON event per line.")] = False,
) -> None:
    """Print a run's events; with --follow, stream them live until the run ends."""
    from ._render import event_line

    async def main(door: Door) -> None:
        events = door.api.events(run_id, after=after, follow=follow)
        async with contextlib.aclosing(events):
            async for event in events:
                typer.echo(event.to_kernel().to_json() if json else event_line(event))

    run(lambda: with_door(main))


def replay(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    to: Annotated[int | None, typer.Option("--to", min=0, help="Stop after this seq.")] = None,
    json: Annotated[
        bool, typer.Option("--json", help="Print the state rebuilt from the log, as JSON.")
    ] = False,
) -> None:
    """Show a run's session from its log, as it was shown live (nothing is run again).

    With --json, the state the log folds into (status, turn, pending calls, usage…).
    """
    from ._render import state_dict

    async def main(door: Door) -> None:
        await door.api.get(run_id)  # not found: exit 3
        if json:
            from helix.kernel.session import replay as fold

            # The fold here, over the events the door hands out: nothing runs, here or there.
            state = fold([e.to_kernel() async for e in door.api.events(run_id)], to_seq=to)
            print_json_line(state_dict(state))
            return
        from rich.console import Console

        from ._view import show_replay

        await show_replay(door.api, run_id, to=to, console=Console(highlight=False))

    run(lambda: with_door(main))


def export(run_id: RunArg) -> None:
    """Write a run's whole log to stdout as JSON Lines."""

    async def main(door: Door) -> None:
        lines = door.api.export(run_id)
        async with contextlib.aclosing(lines):
            async for line in lines:
                sys.stdout.write(line + "\n")

    run(lambda: with_door(main))


def import_(
    file: Annotated[str, typer.Argument(metavar="FILE", help="A JSON Lines log; - for stdin.")],
    as_id: Annotated[str | None, typer.Option("--as", help="Import under this run id.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Import an exported log as a new run (checked whole before anything is written).

    The run works in a new, empty folder under HELIX_HOME/worlds/default (never the
    file's world; with a server, under the server's worlds), is paused unless it had
    ended, and never auto-approves. It keeps the exported run's id unless a run has it
    already: then it gets a fresh one (said on stderr); --as names the id instead.
    """
    if file == "-":
        lines = sys.stdin.read().splitlines()
    else:
        try:
            lines = Path(file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            fail(f"cannot read {file}: {error}", 2)

    async def main(door: Door) -> None:
        try:
            made = await door.api.import_run(lines, as_id=as_id)
        except ConflictError as error:
            fail(f"{error}; import it under another id with --as NEW_ID", 1)
        if made.original_id is not None:  # imported before: this copy has an id of its own
            typer.echo(
                f"note: run {made.original_id} exists already: imported as {made.id}", err=True
            )
        if json:
            print_json_line(made.model_dump())
        else:
            typer.echo(made.id)

    run(lambda: with_door(main))
