"""``helix runs``, ``helix show``, ``helix fork``: the run registry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, cast

import typer

from ._common import fail, print_json_line, run
from ._control import RunArg
from ._door import Door, with_door
from ._listing import ago, fork_mark, short_ids, status_text
from ._paused import WAIT_HELP

if TYPE_CHECKING:  # the kernel's event models load when a command runs, not at --help
    from helix.api import ProcessList, Run
    from helix.kernel.events import RunStatus

    from ._strategy import StrategyTree

ACTIVE: tuple[RunStatus, ...] = ("queued", "running", "waiting", "paused")


def runs(
    status: Annotated[str | None, typer.Option(help="Only runs with this status.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many runs.")] = 20,
    json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """List runs, newest first."""
    from helix.kernel.events import RUN_STATUSES

    if status is not None and status not in RUN_STATUSES:
        fail(f"unknown status {status!r}: choose from {', '.join(RUN_STATUSES)}")

    async def main(door: Door) -> None:
        print_runs(await newest(door, status, limit), json=json)

    run(lambda: with_door(main))


async def newest(door: Door, status: str | None, limit: int) -> list[Run]:
    """Up to ``limit`` runs, newest first, page after page."""
    found: list[Run] = []
    cursor = None
    wanted = cast("RunStatus | None", status)  # checked against RUN_STATUSES
    while len(found) < limit:
        page = await door.api.runs(status=wanted, limit=limit, cursor=cursor)
        found += page.runs
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    return found[:limit]


def print_runs(found: list[Run], *, json: bool) -> None:
    """``helix runs`` output: a table people read (short ids, times ago), or JSON Lines.

    Each id printed is a unique prefix of the run's (``--json``: the full id).
    """
    from ._render import record_dict

    if json:
        for one in found:
            print_json_line(record_dict(one))
        return
    if not found:
        typer.echo("no runs yet: try `helix demo`")
        return
    shown = short_ids([r.id for r in found] + [r.parent.run_id for r in found if r.parent])
    rows = [("ID", "STATUS", "TURNS", "COST", "CREATED", "UPDATED", "OBJECTIVE")]
    for one in found:
        mark = fork_mark(one, shown)
        objective = " ".join(one.objective.split())
        objective = objective if len(objective) <= 50 else objective[:49] + "…"
        rows.append((
            shown[one.id], status_text(one, shown[one.id]), str(one.turns),
            f"${one.cost_usd:.4f}", ago(one.created_at), ago(one.updated_at),
            f"{mark}  {objective}" if mark else objective,
        ))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    for row in rows:
        cells = [
            cell.rjust(width) if i in (2, 3) else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=False))
        ]
        typer.echo("  ".join([*cells, row[6]]).rstrip())


def print_active(found: list[Run]) -> None:
    """``helix status``'s active runs (and whether something drives each)."""
    active = [r for r in found if r.status in ACTIVE]
    typer.echo(f"active     {len(active)} run{'s' if len(active) != 1 else ''}")
    shown = short_ids(r.id for r in active)
    for one in active:
        typer.echo(f"  {shown[one.id]}  {status_text(one, shown[one.id])}  {one.objective[:50]}")


def show_run(
    one: Run,
    *,
    json: bool,
    tree: StrategyTree | None = None,
    why: str | None = None,
    live: ProcessList | None = None,
) -> None:
    """``helix show`` output (a strategy run's branches and their scores after its fields).

    ``why``: why a paused run is paused (``paused_why``), shown after its status;
    ``live``: the background processes of its live world, when it has any.
    """
    from ._render import process_lines, record_dict, run_lines

    shows_live = live is not None and (live.processes or live.image)
    if json:
        shown = record_dict(one)
        if tree is not None:
            shown["strategy"] = tree.as_dict()
        if why is not None:
            shown["paused_because"] = why
        if live is not None and shows_live:
            shown["processes"] = [p.model_dump() for p in live.processes]
            shown["world_image"] = live.image
        print_json_line(shown)
    else:
        lines = run_lines(one)
        if why is not None:
            lines.insert(2, f"paused     {why}")
        if live is not None and shows_live:
            lines += process_lines(live)
        typer.echo("\n".join([*lines, *(tree.lines() if tree is not None else [])]))


async def paused_why(door: Door, one: Run) -> str | None:
    """Why a paused run is paused, read from its last events (``None`` unless paused).

    A budget pause names the budget and the cap passed, and what resumes the run.
    """
    if one.status != "paused":
        return None
    from ._run_notes import budget_words

    reason: str | None = None
    exceeded: dict[str, object] | None = None
    async for event in door.api.events(one.id, after=max(-1, one.events - 40)):
        if event.type == "run.paused":
            reason = str(event.data["reason"])
            if event.data.get("detail"):
                reason += f": {event.data['detail']}"
        elif event.type == "budget.exceeded":
            exceeded = event.data
        elif event.type == "run.resumed":
            reason = exceeded = None
    if reason != "budget" or exceeded is None:
        return reason
    said = budget_words(exceeded)
    scope = exceeded.get("scope")
    if scope is None or scope == "run":
        raise_it = "helix resume --budget" if scope is None else "a higher budget.tokens"
        return f"budget: {said} (resume with {raise_it})"
    return f"budget: {said} (raise it with helix budgets set, then helix resume {one.id})"


def show(
    run_id: RunArg,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show one run: status (and whether something drives it), model, counters.

    A tree-of-thoughts run also lists its branches, their scores and the one kept.

    RUN: a run id, any unique prefix of it (with or without run_), or last.
    """

    async def main(door: Door) -> None:
        from helix.errors import StoreDamagedError

        from ._strategy import tree_of

        one = await door.api.get(run_id)
        why = await paused_why(door, one)
        try:  # a damaged event must not hide the rest of the run
            live: ProcessList | None = await door.api.processes(one.id)
        except StoreDamagedError:
            live = None
        show_run(one, json=json, tree=await tree_of(door.api, one), why=why, live=live)

    run(lambda: with_door(main))


def fork(
    run_id: RunArg,
    turn: Annotated[int, typer.Option(min=0, help="Fork where this turn ended (0: start).")],
    message: Annotated[str | None, typer.Option(help="What the fork is told first.")] = None,
    model: Annotated[str | None, typer.Option(help="A different model for the fork.")] = None,
    detach: Annotated[
        bool, typer.Option("--detach", help="Only create the fork; do not run it.")
    ] = False,
    wait: Annotated[bool, typer.Option("--wait", help=WAIT_HELP)] = False,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Fork a run at a turn boundary, with its own copy of the world there, and run it."""
    from ._render import record_dict

    async def main(door: Door) -> int:
        forked = await door.api.fork(run_id, turn=turn, message=message, model=model)
        if detach:
            if forked.id in door.here:
                door.here.remove(forked.id)  # only created: `helix resume` drives it
            if json:
                print_json_line(record_dict(forked))
            else:
                typer.echo(forked.id)
            return 0
        if not json:
            parent = forked.parent.run_id if forked.parent is not None else run_id
            typer.echo(f"fork {forked.id} of {parent} at turn {turn}")
        after = forked.parent.seq if forked.parent is not None else -1
        return await door.watch(forked.id, json=json, after=after, wait=wait)

    raise typer.Exit(run(lambda: with_door(main)))
