"""``helix memory`` and ``helix artifacts``: people's and workspaces' memory through the door.

``--scope personal`` is the caller's own (nobody else sees it), ``--scope workspace``
the workspace's (its members read it, those who may act write it); reads without
``--scope`` show both. Writes default to ``personal``. Export and import move a
workspace's memory and artifacts as JSON Lines (docs/memory.md).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from ._common import EXIT_USAGE, fail, print_json_line, run
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.memory import Artifact, Memory

ScopeName = Literal["personal", "workspace"]
_JSON = typer.Option("--json", help="JSON instead of text (one object per line).")
_WORKSPACE = typer.Option(help="The workspace (default: the door's own).")
_READ_SCOPE = typer.Option(help="personal or workspace (default: both).")
_WRITE_SCOPE = typer.Option(help="personal (yours alone) or workspace (its members').")
_TAG = typer.Option("--tag", help="A tag (repeat for more).")
_ID = typer.Argument(metavar="ID", help="The memory's id (mem_…).")

memory_app = typer.Typer(
    help="Review, search, add, edit and delete memories; export and import them."
)
artifacts_app = typer.Typer(
    help="List, get, put and delete artifacts (named files), personal or the workspace's."
)


def _line(memory: Memory) -> str:
    tags = f" [{', '.join(memory.tags)}]" if memory.tags else ""
    key = f" key={memory.key}" if memory.key else ""
    text = memory.text.replace("\n", " ")
    text = text if len(text) <= 100 else text[:99] + "…"
    return f"{memory.id}  {memory.scope}{key}{tags}  {text}"


def _show(found: list[Memory], json: bool, empty: str) -> None:
    for memory in found:
        if json:
            print_json_line(memory.model_dump(mode="json"))
        else:
            typer.echo(_line(memory))
    if not found and not json:
        typer.echo(empty)


@memory_app.command("list")
def list_memory(
    scope: Annotated[ScopeName | None, _READ_SCOPE] = None,
    limit: Annotated[int, typer.Option(min=1, max=500, help="At most this many.")] = 50,
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """List memories, newest first: id, scope, key, tags, text."""

    async def main(door: Door) -> None:
        found = await door.api.memories(scope=scope, limit=limit, workspace=workspace)
        _show(found, json, "no memories yet (helix memory add TEXT)")

    run(lambda: with_door(main))


@memory_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="Words; every one must match.")],
    scope: Annotated[ScopeName | None, _READ_SCOPE] = None,
    limit: Annotated[int, typer.Option(min=1, max=50, help="At most this many.")] = 10,
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Search memories by words (full text), best match first."""

    async def main(door: Door) -> None:
        found = await door.api.memories(scope=scope, query=query, limit=limit, workspace=workspace)
        _show(found, json, "nothing matches")

    run(lambda: with_door(main))


@memory_app.command("add")
def add(
    text: Annotated[str, typer.Argument(help="What to remember.")],
    scope: Annotated[ScopeName, _WRITE_SCOPE] = "personal",
    tag: Annotated[list[str] | None, _TAG] = None,
    key: Annotated[str | None, typer.Option(help="Replaces the memory with this key.")] = None,
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Remember TEXT (a viewer cannot write workspace memory)."""

    async def main(door: Door) -> None:
        memory = await door.api.remember(
            text, scope=scope, tags=tag or [], key=key, workspace=workspace
        )
        if json:
            print_json_line(memory.model_dump(mode="json"))
        else:
            typer.echo(f"remembered {memory.id} ({memory.scope})")

    run(lambda: with_door(main))


@memory_app.command("edit")
def edit(
    memory_id: Annotated[str, _ID],
    text: Annotated[str | None, typer.Option(help="The new text.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="The new tags.")] = None,
    no_tags: Annotated[bool, typer.Option("--no-tags", help="Remove every tag.")] = False,
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Change a memory's text and/or tags."""
    if text is None and not tag and not no_tags:
        fail("nothing to change: give --text, --tag or --no-tags", EXIT_USAGE)
    tags = [] if no_tags else (tag or None)

    async def main(door: Door) -> None:
        memory = await door.api.update_memory(memory_id, text=text, tags=tags, workspace=workspace)
        if json:
            print_json_line(memory.model_dump(mode="json"))
        else:
            typer.echo(f"edited {memory.id}")

    run(lambda: with_door(main))


@memory_app.command("rm")
def remove(
    memory_id: Annotated[str, _ID],
    workspace: Annotated[str | None, _WORKSPACE] = None,
) -> None:
    """Delete a memory."""

    async def main(door: Door) -> None:
        memory = await door.api.forget(memory_id, workspace=workspace)
        typer.echo(f"forgot {memory.id}")

    run(lambda: with_door(main))


@memory_app.command("export")
def export(
    workspace: Annotated[str | None, _WORKSPACE] = None,
    personal: Annotated[
        bool, typer.Option("--personal", help="Your own memory and artifacts too.")
    ] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here (default: stdout).")
    ] = None,
) -> None:
    """Write the workspace's memory and artifacts as JSON Lines."""

    async def main(door: Door) -> str:
        return await door.api.export_memory(personal=personal, workspace=workspace)

    text = run(lambda: with_door(main))
    if output is None:
        sys.stdout.write(text)
        return
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {text.count(chr(10)) - 1} entries to {output}", err=True)


@memory_app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="An export (JSON Lines).")],
    workspace: Annotated[str | None, _WORKSPACE] = None,
) -> None:
    """Store an export's entries here: all of them, or (one bad line) none."""
    from helix.memory import MAX_IMPORT_BYTES

    data = _read_capped(file, MAX_IMPORT_BYTES)

    async def main(door: Door) -> None:
        done = await door.api.import_memory(data, workspace=workspace)
        typer.echo(f"imported {done.memories} memories, {done.artifacts} artifact versions")

    run(lambda: with_door(main))


def _read_capped(file: Path, limit: int) -> bytes:
    try:
        if not file.is_file():
            fail(f"{file}: no such file", 3)
        if file.stat().st_size > limit:
            fail(f"{file} is larger than {limit} bytes", EXIT_USAGE)
        return file.read_bytes()
    except OSError as error:
        fail(f"{file}: {error.strerror or error}", EXIT_USAGE)


def _artifact_line(artifact: Artifact) -> str:
    return (
        f"{artifact.name}  {artifact.scope}  v{artifact.version}  {artifact.size} bytes"
        f"  {artifact.media_type}  {artifact.by}  {artifact.at}"
    )


@artifacts_app.command("list")
def list_artifacts(
    scope: Annotated[ScopeName | None, _READ_SCOPE] = None,
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """List artifacts (their latest versions): name, scope, version, size, type."""

    async def main(door: Door) -> None:
        found = await door.api.artifacts(scope=scope, workspace=workspace)
        for artifact in found:
            if json:
                print_json_line(artifact.model_dump(mode="json"))
            else:
                typer.echo(_artifact_line(artifact))
        if not found and not json:
            typer.echo("no artifacts yet (helix artifacts put FILE)")

    run(lambda: with_door(main))


@artifacts_app.command("get")
def get(
    name: Annotated[str, typer.Argument(help="The artifact's name.")],
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", help="Write here ('-': stdout; default: ./NAME)."),
    ] = None,
    scope: Annotated[ScopeName | None, _READ_SCOPE] = None,
    version: Annotated[int | None, typer.Option(min=1, help="Default: the latest.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    workspace: Annotated[str | None, _WORKSPACE] = None,
) -> None:
    """Download an artifact's version (default: the latest) to a file."""

    async def main(door: Door) -> tuple[Artifact, bytes]:
        return await door.api.artifact(name, scope=scope, version=version, workspace=workspace)

    artifact, content = run(lambda: with_door(main))
    if output == "-":
        sys.stdout.buffer.write(content)
        return
    target = Path(output if output is not None else artifact.name)
    if target.exists() and not force:
        fail(f"{target} exists: give --force to overwrite it", 1)
    target.write_bytes(content)
    typer.echo(f"wrote {artifact.name} v{artifact.version} to {target}", err=True)


@artifacts_app.command("put")
def put(
    file: Annotated[Path, typer.Argument(help="The file to keep.")],
    name: Annotated[str | None, typer.Option(help="Its name (default: the file's).")] = None,
    scope: Annotated[ScopeName, _WRITE_SCOPE] = "personal",
    media_type: Annotated[
        str | None, typer.Option(help="e.g. text/markdown (default: from the name).")
    ] = None,
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Store a file as an artifact's next version (at most 10 MiB)."""
    from helix.memory import MAX_ARTIFACT_BYTES

    content = _read_capped(file, MAX_ARTIFACT_BYTES)

    async def main(door: Door) -> None:
        artifact = await door.api.save_artifact(
            name or file.name, content, scope=scope, media_type=media_type, workspace=workspace
        )
        if json:
            print_json_line(artifact.model_dump(mode="json"))
        else:
            typer.echo(f"saved {artifact.name} v{artifact.version} ({artifact.scope})")

    run(lambda: with_door(main))


@artifacts_app.command("rm")
def remove_artifact(
    name: Annotated[str, typer.Argument(help="The artifact's name.")],
    scope: Annotated[ScopeName, _WRITE_SCOPE] = "personal",
    workspace: Annotated[str | None, _WORKSPACE] = None,
) -> None:
    """Delete every version of an artifact."""

    async def main(door: Door) -> None:
        count = await door.api.delete_artifact(name, scope=scope, workspace=workspace)
        typer.echo(f"deleted {name} ({count} versions)")

    run(lambda: with_door(main))
