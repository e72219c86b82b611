"""``helix graph run|show|logs|retry|cancel``: task graphs, through the door.

A graph is a run (docs/graphs.md): ``helix resume``, ``helix approve`` and ``helix
cancel`` work on it as on any run; these commands add what only a graph has.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ._common import print_json_line, run
from ._control import RunArg
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.api import GraphRun

LAST_LOOKED_AT = 100
"""How many of the newest runs ``last`` looks through for the newest graph."""

graph_app = typer.Typer(
    help="Task graphs: run a plan, show its tasks, read its logs, retry a failed task.",
    no_args_is_help=True,
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@graph_app.command("run")
def run_graph(
    plan: Annotated[str, typer.Argument(metavar="PLAN", help="A plan file (YAML, TOML, JSON).")],
    world: Annotated[
        str | None,
        typer.Option(
            "--world", help="The graph's world (default: here; with a server, a world's name)."
        ),
    ] = None,
    detach: Annotated[
        bool,
        typer.Option("--detach", help="Start it in the background; print its id."),
    ] = False,
    auto_approve: Annotated[
        bool,
        typer.Option("--auto-approve", help="Allow every approval at once (task reports too)."),
    ] = False,
    budget: Annotated[
        float | None, typer.Option(min=0, help="A USD cap for the whole graph.")
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="Print events as JSON Lines.")] = False,
) -> None:
    """Run a task graph from PLAN, showing each task's progress until the graph ends.

    Exit 0 when every task completed; 1 when the graph failed or was cancelled; 2 for
    a plan that is not one (a cycle, an unknown dependency…: nothing is started). A
    graph paused by a task that failed for good is waited on: retry the task (helix
    graph retry) or cancel the graph from another terminal.
    """
    from helix.runtime import Plan

    from ._graph_follow import follow_graph

    async def main(door: Door) -> int:
        parsed = Plan.load(plan)  # not a plan: BlueprintError, exit 2, nothing started
        created = await door.api.create_graph(
            parsed, world=door.world(world), auto_approve=auto_approve, budget_usd=budget
        )
        if detach:
            door.detach(created.id)
            if json:
                print_json_line({"id": created.id, "status": created.status})
            else:
                typer.echo(created.id)
            return 0
        if not json:
            count = len(parsed.blueprint.graph.tasks) if parsed.blueprint.graph else 0
            typer.echo(f"graph {created.id}: {count} tasks · helix graph show {created.id}")
        return await follow_graph(door, created.id, json=json, after=-1)

    raise typer.Exit(run(lambda: with_door(main)))


@graph_app.command("show")
def show_graph(run_id: RunArg, json: JsonOpt = False) -> None:
    """Show a graph's tasks: status, attempts, run, cost and what each needs."""
    from ._graph_lines import graph_table

    async def main(door: Door) -> None:
        graph = await graph_of(door, run_id)
        if json:
            print_json_line(graph.model_dump(mode="json"))
        else:
            typer.echo("\n".join(graph_table(graph)))

    run(lambda: with_door(main))


@graph_app.command("logs")
def graph_logs(
    run_id: RunArg,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing until the graph ends.")
    ] = False,
    json: Annotated[
        bool, typer.Option("--json", help="One JSON event per line, with its task.")
    ] = False,
) -> None:
    """Print a graph's events and its tasks' runs' events, each led by its task's id."""
    from ._graph_follow import print_logs

    async def main(door: Door) -> None:
        await print_logs(door.api, await graph_of(door, run_id), follow=follow, json=json)

    run(lambda: with_door(main))


@graph_app.command("retry")
def retry(
    run_id: RunArg,
    task: Annotated[str, typer.Argument(metavar="TASK", help="The failed task's id.")],
    detach: Annotated[
        bool, typer.Option("--detach", help="Do not follow the graph: drive it in the background.")
    ] = False,
    json: Annotated[bool, typer.Option("--json", help="Print events as JSON Lines.")] = False,
) -> None:
    """Try a failed task again (a new run); the graph, paused for it, carries on.

    The graph is then followed here as helix graph run does (unless another process
    drives it, or --detach).
    """
    from ._graph_follow import follow_graph

    async def main(door: Door) -> int:
        shown = (await graph_of(door, run_id)).run
        graph = await door.api.retry_task(shown.id, task)
        if not json:
            typer.echo(f"retrying {task} of {graph.run.id}")
        if detach:
            door.detach(graph.run.id)
            return 0
        if graph.run.id not in door.here:  # the server, or another process, drives it
            return 0
        if await door.driven_elsewhere(graph.run.id):
            door.here.remove(graph.run.id)
            if not json:
                typer.echo("another process is driving it")
            return 0
        return await follow_graph(door, graph.run.id, json=json, after=shown.head)

    raise typer.Exit(run(lambda: with_door(main)))


@graph_app.command("cancel")
def cancel(run_id: RunArg) -> None:
    """Cancel a graph: its running tasks' runs are cancelled with it."""

    async def main(door: Door) -> None:
        graph = await graph_of(door, run_id)  # not a graph: said so (exit 3)
        await door.api.cancel(graph.run.id)
        typer.echo("cancelled")

    run(lambda: with_door(main))


async def graph_of(door: Door, ref: str) -> GraphRun:
    """The graph ``ref`` names: an id, a unique prefix, or ``last`` (the newest graph)."""
    from helix.errors import NotAGraphError

    if ref != "last":
        return await door.api.graph(ref)
    for one in (await door.api.runs(limit=LAST_LOOKED_AT)).runs:
        try:
            return await door.api.graph(one.id)
        except NotAGraphError:
            continue
    raise NotAGraphError("no task graph among the newest runs: start one with helix graph run PLAN")
