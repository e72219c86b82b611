"""``helix workflows``: a workspace's workflows through the door.

List, show, edit, import, history, run. Edits from a file are saved as a new version
(``how: file``); a run is the workflow's task graph, shown live like ``helix run`` (or
left running with ``--detach``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import print_json_line, run
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.workflows import Workflow

_JSON = typer.Option("--json", help="JSON instead of text (one object per line).")
_WORKSPACE = typer.Option(help="The workspace (default: the door's own).")
_NAME = typer.Argument(metavar="NAME", help="The workflow's name.")
_FILE = typer.Argument(metavar="FILE", help="A workflow file (YAML or JSON).")

workflows_app = typer.Typer(
    help="List, show, edit, import and run workflows (definitions run as task graphs)."
)


def _read(path: str) -> Workflow:
    from helix.workflows import load_file

    return load_file(Path(path))


@workflows_app.command("list")
def list_workflows(
    workspace: Annotated[str | None, _WORKSPACE] = None, json: Annotated[bool, _JSON] = False
) -> None:
    """List the workspace's workflows: name, latest version, steps, who saved it, when."""

    async def main(door: Door) -> None:
        found = await door.api.workflows(workspace=workspace)
        for item in found:
            if json:
                print_json_line(item.model_dump(mode="json"))
            else:
                typer.echo(
                    f"{item.name}  v{item.version}  {item.steps} steps  {item.by}  {item.at}"
                )
        if not found and not json:
            typer.echo("no workflows yet (helix workflows import FILE)")

    run(lambda: with_door(main))


@workflows_app.command("show")
def show(
    name: Annotated[str, _NAME],
    version: Annotated[
        int | None, typer.Option(min=1, help="That version (default: the latest).")
    ] = None,
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Print a workflow's definition as YAML (the text ``edit`` takes back)."""
    from helix.workflows import dump

    async def main(door: Door) -> None:
        found = await door.api.workflow(name, version=version, workspace=workspace)
        assert found.workflow is not None
        if json:
            print_json_line(found.model_dump(mode="json", by_alias=True))
            return
        typer.echo(
            f"# {found.name} version {found.version}, {found.how} by {found.by} at {found.at}"
        )
        typer.echo(dump(found.workflow), nl=False)

    run(lambda: with_door(main))


@workflows_app.command("edit")
def edit(
    name: Annotated[str, _NAME],
    file: Annotated[str, _FILE],
    base_version: Annotated[
        int | None,
        typer.Option(
            "--base-version",
            min=0,
            help="The version FILE was made from: refused"
            " (exit 1) if another was saved since. Default: on top of the latest.",
        ),
    ] = None,
    workspace: Annotated[str | None, _WORKSPACE] = None,
) -> None:
    """Save FILE as the next version of workflow NAME (it must be named NAME)."""
    from helix.errors import WorkflowError

    async def main(door: Door) -> None:
        definition = _read(file)
        if definition.name != name:
            raise WorkflowError(f"{file}: the workflow is named {definition.name!r}, not {name!r}")
        await door.api.workflow(name, workspace=workspace)  # an edit needs a workflow: exit 3
        saved = await door.api.save_workflow(
            definition, base_version=base_version, how="file", workspace=workspace
        )
        typer.echo(f"{saved.name} is now version {saved.version}: {saved.change}")

    run(lambda: with_door(main))


@workflows_app.command("import")
def import_workflow(
    file: Annotated[str, _FILE],
    world: Annotated[
        str | None,
        typer.Option(
            "--world",
            help="FILE is a path in this world of the workspace (with a"
            " server: a world's name there); it may not lead out of it.",
        ),
    ] = None,
    workspace: Annotated[str | None, _WORKSPACE] = None,
) -> None:
    """Store FILE as a new workflow (version 1); one of that name already: exit 1."""

    async def main(door: Door) -> None:
        if world is not None:
            saved = await door.api.import_workflow(file, world=world, workspace=workspace)
        else:
            saved = await door.api.save_workflow(_read(file), base_version=0, how="file",
                                                 workspace=workspace)  # fmt: skip
        typer.echo(f"{saved.name} version {saved.version}: {saved.change}")

    run(lambda: with_door(main))


@workflows_app.command("history")
def history(
    name: Annotated[str, _NAME],
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Every version of a workflow: who saved it, how, when, and what changed."""

    async def main(door: Door) -> None:
        for version in await door.api.workflow_history(name, workspace=workspace):
            if json:
                print_json_line(version.model_dump(mode="json", exclude={"workflow"}))
            else:
                typer.echo(f"v{version.version}  {version.at}  {version.how:<6}  {version.by}"
                           f"  {version.change}")  # fmt: skip

    run(lambda: with_door(main))


@workflows_app.command("run")
def run_workflow(
    name: Annotated[str, _NAME],
    version: Annotated[
        int | None, typer.Option(min=1, help="That version (default: the latest).")
    ] = None,
    world: Annotated[
        str | None,
        typer.Option(
            "--world",
            help="Where its tasks work (default: a new folder; with a server, a world's name).",
        ),
    ] = None,
    detach: Annotated[
        bool, typer.Option("--detach", help="Start it in the background; print its id.")
    ] = False,
    budget: Annotated[
        float | None, typer.Option(min=0, help="A USD cap for the whole run.")
    ] = None,
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, typer.Option("--json", help="Print events as JSON Lines.")] = False,
) -> None:
    """Run a workflow: its task graph, shown live (exit 0 when it completed)."""

    async def main(door: Door) -> int:
        started = await door.api.run_workflow(
            name, version=version, world=door.world(world) if world else None,
            workspace=workspace, budget_usd=budget,
        )  # fmt: skip
        if detach:
            door.detach(started.id)
            if json:
                print_json_line({"id": started.id, "status": started.status})
            else:
                typer.echo(started.id)
            return 0
        return await door.watch(started.id, json=json, after=-1)

    raise typer.Exit(run(lambda: with_door(main)))
