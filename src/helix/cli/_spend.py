"""``helix spend``: what runs' own model calls cost, grouped and over time, through the door."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ._common import print_json_line, run
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.api import Usage

_BY = ("model", "blueprint", "provider", "workspace", "person", "run", "role")
_BUCKETS = ("day", "hour")


def spend(
    by: Annotated[
        str,
        typer.Option(
            "--by", help="model (default), blueprint, provider, workspace, person, run or role."
        ),
    ] = "model",
    bucket: Annotated[
        str | None, typer.Option("--bucket", help="Also per day or hour, oldest first.")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Calls from: a date, a UTC time or an age (7d, 12h, 30m)."),
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Calls before: a date, a time or an age.")
    ] = None,
    workspace: Annotated[
        str | None, typer.Option("--workspace", help="Only this workspace's runs.")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Only this provider:model's calls.")
    ] = None,
    provider: Annotated[
        str | None, typer.Option("--provider", help="Only this provider's calls.")
    ] = None,
    blueprint: Annotated[
        str | None, typer.Option("--blueprint", help="Only runs of this blueprint.")
    ] = None,
    person: Annotated[
        str | None, typer.Option("--person", help="Only runs this person made (user:ann).")
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """What runs' own model calls cost: in total, by model, blueprint, person etc., over time."""
    from ._common import fail

    if by not in _BY:
        fail(f"--by {by!r}: choose {', '.join(_BY)}")
    if bucket is not None and bucket not in _BUCKETS:
        fail(f"--bucket {bucket!r}: choose {', '.join(_BUCKETS)}")

    async def main(door: Door) -> None:
        report = await door.api.spend(
            workspace=workspace, by=by, bucket=bucket, since=since, until=until, model=model,
            provider=provider, blueprint=blueprint, person=person,
        )  # fmt: skip
        if json:
            for key, usage in report.groups.items():
                print_json_line({by: key, **usage.model_dump()})
            for point in report.series:
                print_json_line({"start": point.start, by: point.key, **point.usage.model_dump()})
            print_json_line({"total": True, "runs": report.runs, **report.total.model_dump()})
            return
        for key, usage in report.groups.items():
            typer.echo(_line(key, usage))
        typer.echo(_line(f"total ({report.runs} runs)", report.total))
        if report.series:
            typer.echo(f"\nper {bucket}:")
            for point in report.series:
                typer.echo(_line(f"{point.start}  {point.key}", point.usage))

    run(lambda: with_door(main))


def _line(label: str, usage: Usage) -> str:
    unpriced = f"  ({usage.unpriced_calls} unpriced)" if usage.unpriced_calls else ""
    return (
        f"{label:<40}  ${usage.cost_usd:>10.4f}  {usage.input_tokens:>9} in"
        f"  {usage.output_tokens:>9} out{unpriced}"
    )
