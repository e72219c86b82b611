"""``helix nodes`` and ``helix nodes drain NODE``: where runs are driven, through the door.

With a server (``HELIX_SERVER`` or ``helix login``): its executor's nodes (owners and
admins of a team workspace only). Embedded: this machine as one node, ``local``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ._common import print_json_line, run
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.api import Node

_JSON = typer.Option("--json", help="One JSON object per line (each node; drain: its answer).")

nodes_app = typer.Typer(help="List the nodes runs are driven on; drain one (its runs move).")


@nodes_app.callback(invoke_without_command=True)
def nodes(ctx: typer.Context, json: Annotated[bool, _JSON] = False) -> None:
    """List the nodes runs are driven on: state, address, CPU and memory, labels, runs."""
    if ctx.invoked_subcommand is not None:
        return

    async def main(door: Door) -> None:
        listed = await door.api.nodes()
        if json:
            for node in listed.nodes:
                print_json_line(node.model_dump(mode="json"))
            return
        typer.echo(node_table(listed.nodes))

    run(lambda: with_door(main))


@nodes_app.command("drain")
def drain(
    node: Annotated[str, typer.Argument(metavar="NODE", help="The node's id (helix nodes).")],
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Drain a node: it takes no new runs, and its runs move at their next turn boundary."""

    async def main(door: Door) -> None:
        drained = await door.api.drain_node(node)
        if json:
            print_json_line(drained.model_dump(mode="json"))
            return
        count = drained.run_count
        moving = f"{count} run{'s' * (count != 1)} move{'s' * (count == 1)}"
        typer.echo(f"node {drained.node} is draining: {moving} at the next turn boundary")
        for run_id in drained.runs:
            typer.echo(f"  {run_id}")

    run(lambda: with_door(main))


def node_table(found: list[Node]) -> str:
    """The nodes as a table people read (memory in GiB, labels as k=v)."""
    rows = [("ID", "STATE", "ADDRESS", "CPU", "MEMORY", "RUNS", "LABELS")]
    for node in found:
        cpu = node.resources.get("CPU")
        memory = node.resources.get("memory")
        labels = ",".join(f"{k}={v}" for k, v in sorted(node.labels.items())) or "-"
        rows.append((
            node.id, node.state, node.address or "-",
            "-" if cpu is None else f"{cpu:g}",
            "-" if memory is None else f"{memory / 2**30:.1f} GiB",
            str(node.run_count), labels,
        ))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        + "  "
        + row[-1]
        for row in rows
    )
