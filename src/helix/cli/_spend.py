"""``helix spend``: what runs' own model calls cost, through the door."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import typer

from ._common import print_json_line, run
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.api import Usage

By = Literal["model", "blueprint", "provider"]


def spend(
    by: Annotated[
        str, typer.Option("--by", help="model (default), blueprint or provider.")
    ] = "model",
    workspace: Annotated[
        str | None, typer.Option("--workspace", help="Only this workspace's runs.")
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """What runs' own model calls cost: in total, and by model, blueprint or provider."""
    from ._common import fail

    if by not in ("model", "blueprint", "provider"):
        fail(f"--by {by!r}: choose model, blueprint or provider")

    async def main(door: Door) -> None:
        report = await door.api.spend(workspace=workspace)
        table: dict[str, Usage] = getattr(report, f"by_{by}")
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
