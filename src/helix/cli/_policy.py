"""``helix policy replay``: what a candidate policy would have done with logged calls."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ._common import fail, print_json_line, run, run_now
from ._door import Door, with_door

policy_app = typer.Typer(help="Try a policy against what runs really did.", no_args_is_help=True)

_SHOWN = 60
"""Characters of a call's arguments shown in the table."""


def replay(
    run_id: Annotated[str | None, typer.Argument(metavar="RUN", help="The run to judge.")] = None,
    policy: Annotated[
        Path | None,
        typer.Option("--policy", help="The candidate policy: a YAML, TOML or JSON file."),
    ] = None,
    workspace: Annotated[
        str | None, typer.Option("--workspace", help="Judge every run of this workspace.")
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """Judge every logged tool call with a candidate policy; show what it would change.

    Lists the calls the policy would have denied or asked about that were allowed (or
    denied where the log asked), and the reverse. Runs no model and no tool, and
    writes nothing to the log.
    """
    from helix.runtime import CandidatePolicy

    if (run_id is None) == (workspace is None):
        fail("name a run, or --workspace W (not both)")
    if policy is None:
        fail("--policy FILE is required: the policy to try")
    candidate = run_now(lambda: CandidatePolicy.load(policy))

    async def main(door: Door) -> None:
        if run_id is not None:
            found = [await door.api.policy_replay(run_id, candidate)]
        else:
            assert workspace is not None
            found = await door.api.policy_replay_workspace(workspace, candidate)
        _print([report.model_dump(mode="json") for report in found], json=json)

    run(lambda: with_door(main))


policy_app.command()(replay)


def _print(reports: list[dict[str, Any]], *, json: bool) -> None:
    if json:
        for report in reports:
            for call in report["differences"]:
                print_json_line({"kind": "difference", **call})
            for call in report["unjudged"]:
                print_json_line({"kind": "unjudged", **call})
            summary = {k: v for k, v in report.items() if k not in ("differences", "unjudged")}
            print_json_line({"kind": "summary", **summary, "unjudged": len(report["unjudged"])})
        return
    if not reports:
        typer.echo("no runs to judge")
    for report in reports:
        typer.echo("\n".join(report_lines(report)))


def report_lines(report: dict[str, Any]) -> list[str]:
    """One run's replay as a table of the calls whose verdict changes."""
    head = (
        f"{report['run_id']}: {report['calls']} calls judged,"
        f" {report['stricter']} stricter, {report['looser']} looser"
    )
    if report["unjudged"]:
        head += f", {len(report['unjudged'])} not judged"
    lines = [head]
    rows = [("SEQ", "TURN", "TOOL", "LOGGED", "CANDIDATE", "CALL")]
    for call in report["differences"]:
        candidate = call["candidate"]
        if call["candidate_gate"]:
            candidate += f" ({call['candidate_gate']})"
        rows.append((
            str(call["seq"]), str(call["turn"] if call["turn"] is not None else "-"),
            call["tool"], _logged(call), candidate, _args(call["args"]),
        ))  # fmt: skip
    if len(rows) > 1:
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        for row in rows:
            cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
            lines.append("  " + "  ".join([*cells, row[5]]).rstrip())
        lines.append("")
        for call in report["differences"]:
            lines.append(f"  seq {call['seq']} ({call['change']}): {call['candidate_reason']}")
    for call in report["unjudged"]:
        lines.append(f"  seq {call['seq']} {call['tool']}: not judged: {call['reason']}")
    return lines


def _logged(call: dict[str, Any]) -> str:
    text = str(call["logged"])
    approval = call.get("approval")
    if approval is not None:
        decision = approval["decision"]
        if decision is None:
            text += " → unanswered"
        else:
            by = "auto" if approval.get("auto") else approval.get("by")
            text += f" → {'allowed' if decision == 'allow' else 'denied'} by {by}"
    return text + (", ran" if call["ran"] else "")


def _args(args: dict[str, Any]) -> str:
    shown = ", ".join(
        f"{name}={value}" if isinstance(value, str) else f"{name}={value!r}"
        for name, value in args.items()
    )
    shown = " ".join(shown.split())
    return shown if len(shown) <= _SHOWN else shown[: _SHOWN - 1] + "…"
