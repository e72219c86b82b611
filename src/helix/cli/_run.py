"""``helix run``, ``helix resume``: runs shown live (driven here, or by the server)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from helix.errors import BlueprintError, RunStateError

from ._common import print_json_line, run
from ._door import Door, with_door
from ._paused import WAIT_HELP

if TYPE_CHECKING:
    from ._project import Project


def run_command(
    objective: Annotated[
        str, typer.Argument(metavar="OBJECTIVE", help="What the agent should do.")
    ],
    model: Annotated[
        str | None, typer.Option(help="provider:model (overrides the blueprint).")
    ] = None,
    blueprint: Annotated[
        str | None,
        typer.Option(
            help="A blueprint file (YAML or TOML), or a stored blueprint's NAME or NAME@N;"
            " default: a trusted ./helix.yaml."
        ),
    ] = None,
    dir: Annotated[
        str | None,
        typer.Option(
            "--dir", help="The run's world (default: here; with a server, a world's name)."
        ),
    ] = None,
    budget: Annotated[float | None, typer.Option(min=0, help="A USD cap for the run.")] = None,
    budget_tokens: Annotated[
        int | None,
        typer.Option("--budget-tokens", min=0, help="A cap on the run's input + output tokens."),
    ] = None,
    auto_approve: Annotated[
        bool, typer.Option("--auto-approve", help="Turn every ask into allow (never a deny).")
    ] = False,
    detach: Annotated[
        bool,
        typer.Option(
            "--detach",
            help="Start it in the background; print its id (its approvals wait for"
            " helix approve/deny until their deadline).",
        ),
    ] = False,
    unattended: Annotated[
        bool,
        typer.Option(
            "--unattended",
            help="Nobody answers this run: a call that needs approval is denied at once.",
        ),
    ] = False,
    wait: Annotated[bool, typer.Option("--wait", help=WAIT_HELP)] = False,
    json: Annotated[bool, typer.Option("--json", help="Print events as JSON Lines.")] = False,
) -> None:
    """Run an agent on OBJECTIVE, in the foreground, shown live.

    Exit 0 when it completed, 1 when it failed, 5 when it paused (why, and the resume
    command, are printed), 130 after Ctrl-C.
    """
    from helix.runtime import Blueprint

    async def main(door: Door) -> int:
        from helix.api import is_blueprint_file

        loaded: Blueprint | str | None = None
        if blueprint:  # a file here is read here; else the name of a stored one
            loaded = Blueprint.load(blueprint) if is_blueprint_file(blueprint) else blueprint
        project = None if blueprint else _project_here()  # helix.yaml, as far as trusted
        source = blueprint or (str(project.path) if project else None)
        try:
            created = await door.create(
                objective, model=model, blueprint=project.blueprint if project else loaded,
                world=door.world(dir), budget_usd=budget, auto_approve=auto_approve,
                unattended=unattended, detach=detach, budget_tokens=budget_tokens,
                workspace=project.workspace if project else None,
            )  # fmt: skip
        except BlueprintError as error:  # a name the file gives (tool, model): say which file
            raise BlueprintError(f"{source}: {error}" if source else str(error)) from None
        if detach:
            door.detach(created.id)
            if json:
                print_json_line({"id": created.id, "status": created.status})
            else:
                typer.echo(created.id)
            return 0
        return await door.watch(created.id, json=json, after=-1, wait=wait)

    raise typer.Exit(run(lambda: with_door(main)))


def _project_here() -> Project | None:
    """The project blueprint in the current directory (``helix init``), if any.

    A trusted one's local-server address is set in this process's environment unless
    the variable is set already (a detached run's process inherits it).
    """
    import os
    from pathlib import Path

    from helix.config import Settings

    from ._project import find_project

    project = find_project(Path.cwd(), Settings.from_env().home)
    if project is not None:
        for variable, value in project.env:
            os.environ.setdefault(variable, value)
        trust = "trusted" if project.trusted else "untrusted: it only narrows the defaults"
        typer.echo(f"blueprint: {project.path} ({trust})", err=True)
    return project


def resume(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    budget: Annotated[float | None, typer.Option(min=0, help="Raise the USD cap to this.")] = None,
    budget_tokens: Annotated[
        int | None, typer.Option("--budget-tokens", min=0, help="Raise the token cap to this.")
    ] = None,
    max_turns: Annotated[
        int | None, typer.Option("--max-turns", min=1, help="Raise the turn cap to this.")
    ] = None,
    max_seconds: Annotated[
        float | None,
        typer.Option(
            "--max-seconds", min=0, help="Raise the time cap (seconds since creation) to this."
        ),
    ] = None,
    wait: Annotated[bool, typer.Option("--wait", help=WAIT_HELP)] = False,
    json: Annotated[bool, typer.Option("--json", help="Print events as JSON Lines.")] = False,
) -> None:
    """Resume a paused or interrupted run; drive it here unless another process does.

    Exit codes as helix run's: 5 when it pauses again (unless --wait).
    """
    ref = run_id
    options = {
        "budget cap": ("--budget USD", budget), "token cap": ("--budget-tokens N", budget_tokens),
        "turn limit": ("--max-turns N", max_turns), "time limit": ("--max-seconds S", max_seconds),
    }  # fmt: skip

    async def main(door: Door) -> int:
        shown = await door.api.get(ref)  # a prefix or `last`: this run, from here on
        run_id, head = shown.id, shown.head
        try:
            await door.api.resume(
                run_id, budget_usd=budget, budget_tokens=budget_tokens, max_turns=max_turns,
                max_seconds=max_seconds,
            )  # fmt: skip
        except RunStateError as error:
            for cap, (flag, given) in options.items():
                if given is None and f"paused at its {cap}" in str(error):
                    raise RunStateError(f"{error} (helix resume RUN {flag})") from None
            raise
        if await door.driven_elsewhere(run_id):
            typer.echo("resumed: another process is driving it")
            return 0
        if await _is_graph(door, run_id):  # its tasks' changes, as helix graph run shows
            from ._graph_follow import follow_graph

            return await follow_graph(door, run_id, json=json, after=head)
        return await door.watch(run_id, json=json, after=head, wait=wait)

    raise typer.Exit(run(lambda: with_door(main)))


async def _is_graph(door: Door, run_id: str) -> bool:
    from helix.errors import NotAGraphError

    try:
        await door.api.graph(run_id)
    except NotAGraphError:
        return False
    return True
