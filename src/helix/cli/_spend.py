"""``helix spend``: what runs' own model calls cost, through the door."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ._common import print_json_line, run
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.api import Usage

_BY = ("model", "blueprint", "provider", "workspace", "person")


def spend(
    by: Annotated[
        str, typer.Option("--by", help="model (default), blueprint, provider, workspace or person.")
    ] = "model",
    workspace: Annotated[
        str | None, typer.Option("--workspace", help="Only this workspace's runs.")
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """What runs' own model calls cost: in total, and by model, blueprint, person, etc."""
    from ._common import fail

    if by not in _BY:
        fail(f"--by {by!r}: choose {', '.join(_BY)}")

    async def main(door: Door) -> None:
        report = await door.api.spend(workspace=workspace)
        table: dict[str, Usage]
        if by == "workspace":
            names = [workspace] if workspace is not None else await _workspaces(door)
            table = {w: (await door.api.spend(workspace=w)).total for w in names}
        else:
            table = getattr(report, f"by_{by}")
        if json:
            for key, usage in table.items():
                print_json_line({by: key, **usage.model_dump()})
            print_json_line({"total": True, "runs": report.runs, **report.total.model_dump()})
            return
        for key, usage in table.items():
            typer.echo(_line(key, usage))
        typer.echo(_line(f"total ({report.runs} runs)", report.total))

    run(lambda: with_door(main))


def _line(label: str, usage: Usage) -> str:
    unpriced = f"  ({usage.unpriced_calls} unpriced)" if usage.unpriced_calls else ""
    return (
        f"{label:<40}  ${usage.cost_usd:>10.4f}  {usage.input_tokens:>9} in"
        f"  {usage.output_tokens:>9} out{unpriced}"
    )


async def _workspaces(door: Door) -> list[str]:
    """The workspaces of the runs the caller may see."""
    seen: set[str] = set()
    cursor = None
    while True:
        page = await door.api.runs(limit=1000, cursor=cursor)
        seen.update(run.workspace for run in page.runs)
        if page.next_cursor is None:
            return sorted(seen)
        cursor = page.next_cursor
