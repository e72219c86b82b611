"""``helix blueprints``: a workspace's stored blueprints, in versions, through the door.

List, show (a version), save a file as the next version, history, diff two versions,
roll back (an old version saved as the next). Embedded, they live in the account
tables of the database ``HELIX_DB`` names; with a server, in the server's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ._common import print_json_line, run
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.api import BlueprintInfo

_JSON = typer.Option("--json", help="JSON instead of text (one object per line).")
_WORKSPACE = typer.Option(help="The workspace (default: the door's own).")
_NAME = typer.Argument(metavar="NAME", help="The stored blueprint's name.")
_EXPECTED = typer.Option(
    "--expected-version",
    min=0,
    help="The latest version you saw: refused (exit 1) if another was saved since"
    " (0: NAME must be new). Default: on top of the latest.",
)

blueprints_app = typer.Typer(
    help="List, show, save, diff and roll back stored blueprints (every save a version)."
)


def _line(info: BlueprintInfo) -> str:
    note = f"  {info.note}" if info.note else ""
    return f"v{info.version}  {info.by}  {info.at}{note}"


@blueprints_app.command("list")
def list_blueprints(
    workspace: Annotated[str | None, _WORKSPACE] = None, json: Annotated[bool, _JSON] = False
) -> None:
    """List the workspace's stored blueprints: name, latest version, who saved it, when."""

    async def main(door: Door) -> None:
        found = await door.api.blueprints(workspace=workspace)
        for info in found:
            if json:
                print_json_line(info.model_dump(mode="json"))
            else:
                typer.echo(f"{info.name}  {_line(info)}")
        if not found and not json:
            typer.echo("no stored blueprints yet (helix blueprints save NAME FILE)")

    run(lambda: with_door(main))


@blueprints_app.command("show")
def show(
    name: Annotated[str, _NAME],
    version: Annotated[
        int | None, typer.Option(min=1, help="That version (default: the latest).")
    ] = None,
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Print a version of a stored blueprint as YAML (keys sorted), after a comment line."""
    from helix.api import blueprint_yaml

    async def main(door: Door) -> None:
        found = await door.api.blueprint(name, version=version, workspace=workspace)
        if json:
            print_json_line(found.model_dump(mode="json"))
            return
        note = f": {found.note}" if found.note else ""
        typer.echo(
            f"# {found.name} version {found.version}, saved by {found.by} at {found.at}{note}"
        )
        typer.echo(blueprint_yaml(found.blueprint), nl=False)

    run(lambda: with_door(main))


@blueprints_app.command("save")
def save(
    name: Annotated[str, _NAME],
    file: Annotated[
        str, typer.Argument(metavar="FILE", help="A blueprint file (YAML, TOML, JSON).")
    ],
    note: Annotated[str | None, typer.Option(help="A one-line note for this version.")] = None,
    expected_version: Annotated[int | None, _EXPECTED] = None,
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Save FILE as the next version of NAME (its name is NAME, whatever the file says)."""
    from helix.runtime import Blueprint

    async def main(door: Door) -> None:
        blueprint = Blueprint.load(file)
        saved = await door.api.save_blueprint(
            name, blueprint, expected_version=expected_version, note=note, workspace=workspace
        )
        if json:
            print_json_line(saved.model_dump(mode="json"))
        else:
            typer.echo(f"{saved.name} is now version {saved.version}")

    run(lambda: with_door(main))


@blueprints_app.command("history")
def history(
    name: Annotated[str, _NAME],
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Every version of NAME, oldest first: who saved it, when, its note."""

    async def main(door: Door) -> None:
        for info in await door.api.blueprint_history(name, workspace=workspace):
            if json:
                print_json_line(info.model_dump(mode="json"))
            else:
                typer.echo(_line(info))

    run(lambda: with_door(main))


@blueprints_app.command("diff")
def diff(
    name: Annotated[str, _NAME],
    a: Annotated[int, typer.Argument(metavar="A", min=1, help="The version to diff from.")],
    b: Annotated[int, typer.Argument(metavar="B", min=1, help="The version to diff to.")],
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """A unified diff of versions A and B (their YAML, keys sorted), and the fields changed."""

    async def main(door: Door) -> None:
        found = await door.api.blueprint_diff(name, a, b, workspace=workspace)
        if json:
            print_json_line(found.model_dump(mode="json"))
            return
        if not found.diff:
            typer.echo(f"{name}: v{a} and v{b} have the same fields")
            return
        colour = {"+": "green", "-": "red", "@": "cyan"}
        for line in found.diff.splitlines():
            typer.secho(line, fg=None if line[:3] in ("+++", "---") else colour.get(line[:1]))
        changes = ", ".join(f"{c.path} ({c.change})" for c in found.changed)
        typer.echo(f"changed: {changes}")

    run(lambda: with_door(main))


@blueprints_app.command("rollback")
def rollback(
    name: Annotated[str, _NAME],
    version: Annotated[
        int, typer.Argument(metavar="N", min=1, help="The version whose fields come back.")
    ],
    expected_version: Annotated[int | None, _EXPECTED] = None,
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Save version N's fields as the next version of NAME (history is kept)."""

    async def main(door: Door) -> None:
        saved = await door.api.rollback_blueprint(
            name, version, expected_version=expected_version, workspace=workspace
        )
        if json:
            print_json_line(saved.model_dump(mode="json"))
        else:
            typer.echo(f"{saved.name} is now version {saved.version} ({saved.note})")

    run(lambda: with_door(main))
