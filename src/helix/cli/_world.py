"""``helix files|diff|rollback|compare|keep``: a run's world, at any turn (here or on a server)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ._common import fail, print_json_line, run, run_now
from ._control import RunArg
from ._door import Door, with_door

PointOption = Annotated[
    str | None, typer.Option("--turn", help="A turn number, start, or now (the default).")
]


def files(
    run_id: RunArg,
    path: Annotated[str | None, typer.Argument(metavar="[PATH]")] = None,
    turn: PointOption = None,
    json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """List the run's world (or print one file) as it is now or was at a turn."""
    from helix.world import parse_point

    at = run_now(lambda: parse_point(turn))

    async def main(door: Door) -> None:
        full = (await door.api.get(run_id)).id if path else run_id  # one run for both asks
        listing = await door.api.files(full, path, turn=at)
        if path and len(listing) == 1 and listing[0].kind != "dir" and not json:
            sys.stdout.buffer.write(await door.api.read(full, path, turn=at))
            sys.stdout.flush()
            return
        for info in listing:
            if json:
                print_json_line(info.model_dump())
            else:
                suffix = "/" if info.kind == "dir" else " -> link" if info.kind == "link" else ""
                typer.echo(f"{int(info.mode, 8):04o}  {info.size:>10}  {info.path}{suffix}")

    run(lambda: with_door(main))


def diff(
    run_id: RunArg,
    path: Annotated[str | None, typer.Argument(metavar="[PATH]")] = None,
    start: Annotated[
        str, typer.Option("--from", help="start (default), a turn number, or now.")
    ] = "start",
    end: Annotated[
        str, typer.Option("--to", help="now (default), a turn number, or start.")
    ] = "now",
) -> None:
    """A unified diff of the run's world between two points (whole, or one path)."""
    from helix.world import parse_point

    first, last = run_now(lambda: (parse_point(start), parse_point(end)))

    async def main(door: Door) -> None:
        text = await door.api.diff(run_id, start=first, end=last, path=path)
        sys.stdout.write(text)

    run(lambda: with_door(main))


def rollback(
    run_id: RunArg,
    to: Annotated[str, typer.Option("--to", help="start (default) or a turn number.")] = "start",
    json: Annotated[bool, typer.Option("--json", help="Print the marker event's data.")] = False,
) -> None:
    """Restore the run's world to its start or a turn's end (the log keeps a marker)."""
    from helix.world import parse_point

    point = run_now(lambda: parse_point(to))
    if point in ("now", "last"):
        fail("--to takes start or a turn number")

    async def main(door: Door) -> None:
        full = (await door.api.get(run_id)).id  # said back in full
        marker = await door.api.rollback(full, to=point)
        if json:
            print_json_line(marker.model_dump(mode="json"))
            return
        where = "its start" if marker.to_turn == 0 else f"the end of turn {marker.to_turn}"
        typer.echo(
            f"rolled {full} back to {where}: {len(marker.restored)} restored,"
            f" {len(marker.removed)} removed"
            + (f", {len(marker.conflicts)} left as they were" if marker.conflicts else "")
        )
        for conflict in marker.conflicts:
            typer.echo(f"  conflict: {conflict['path']}: {conflict['detail']}")
        for label, outcomes in (
            ("reverted", marker.reverted),
            ("compensated", marker.compensated),
            ("dropped (withheld)", marker.dropped),
            ("cannot undo", marker.cannot_undo),
        ):
            for outcome in outcomes:
                typer.echo(
                    f"  {label}: {outcome['tool']} {outcome['call_id']}: {outcome['detail']}"
                )

    run(lambda: with_door(main))


def compare(
    run_a: Annotated[str, typer.Argument(metavar="RUN_A")],
    run_b: Annotated[str, typer.Argument(metavar="RUN_B")],
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """How two branches differ: outcome, turns, cost, and a diff of their worlds."""

    async def main(door: Door) -> None:
        compared = await door.api.compare(run_a, run_b)
        if json:
            print_json_line(
                {
                    "runs": [
                        {"id": r.id, "status": r.status, "turns": r.turns, "cost_usd": r.cost_usd}
                        for r in compared.runs
                    ],
                    "diff": compared.diff,
                }
            )
            return
        for one in compared.runs:
            typer.echo(f"{one.id}  {one.status:<9}  {one.turns} turns  ${one.cost_usd:.4f}")
        typer.echo(compared.diff if compared.diff else "(their worlds are the same)")

    run(lambda: with_door(main))


def keep(
    run_id: RunArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Promote a branch: its world becomes the original directory's content."""

    async def main(door: Door) -> None:
        branch = await door.api.get(run_id)
        if not yes:
            if not sys.stdin.isatty():
                fail("keep replaces the original directory's content: pass --yes to confirm")
            if not typer.confirm(f"replace the original directory's content with {branch.world}?"):
                fail("not kept", 1)
        kept = await door.api.keep(branch.id)
        typer.echo(
            f"kept {branch.id} in {kept.target}: {len(kept.restored)} written,"
            f" {len(kept.removed)} removed"
        )
        for conflict in kept.conflicts:
            typer.echo(f"  conflict: {conflict['path']}: {conflict['detail']}")
        for outcome in kept.performed:
            typer.echo(f"  performed: {outcome['tool']} {outcome['call_id']}: {outcome['detail']}")

    run(lambda: with_door(main))
