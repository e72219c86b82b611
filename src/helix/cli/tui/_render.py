"""How a block, a run and a diff look in the cockpit: Rich text, the same in every screen."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rich.text import Text

from helix.cli._transcript import Block, Call, Note, Said

if TYPE_CHECKING:
    from helix.api import Approval, Run

OUTPUT_LINES = 8
"""A result shows its last lines; the whole output is in the log (``helix logs``)."""

STATUS_STYLES = {
    "running": "bold green",
    "waiting": "bold yellow",
    "paused": "yellow",
    "completed": "green",
    "failed": "bold red",
    "cancelled": "red",
    "queued": "cyan",
}
TONES = {"info": "italic magenta", "good": "green", "warn": "yellow", "bad": "bold red"}
WHO = {"agent": "", "person": "bold cyan", "system": "dim"}


def clip(text: str, width: int) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def diff_text(diff: str, indent: str = "") -> Text:
    """A unified diff, coloured: additions green, removals red, headers bold."""
    out = Text()
    for line in diff.splitlines():
        if line.startswith(("+++", "---", "diff ", "new file", "deleted file")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        out.append(indent + line + "\n", style=style)
    return out


def turn_rule(turn: int) -> Text:
    """The line between turns."""
    return Text(f"── turn {turn} ──", style="bold")


def block_text(block: Block, diff: str | None = None) -> Text:
    """One block as a person reads it (a call with its diff, once fetched)."""
    if isinstance(block, Said):
        if block.who == "person":
            return Text(f"you> {block.text}", style=WHO["person"])
        return Text(block.text, style=WHO[block.who])
    if isinstance(block, Note):
        text = "completed" if block.kind == "completed" else block.text  # its text was said
        return Text(f"• {text}", style=TONES.get(block.tone, ""))
    return call_text(block, diff)


def call_text(call: Call, diff: str | None = None) -> Text:
    """A tool call: mark, name and arguments; who asked or denied; result; diff."""
    out = Text()
    mark, style = _mark(call)
    out.append(f"{mark} ", style=style)
    out.append(call.name, style="bold")
    out.append(f"  {call.summary}\n", style="dim")
    if call.verdict in ("ask", "deny"):
        word = "asked" if call.verdict == "ask" else "denied"
        for reason in call.reasons:
            gate, _, why = reason.partition(": ")
            out.append(f"  the {gate} gate {word}: {why}\n", style="yellow")
    if call.decision is not None:
        verb = "allowed" if call.decision == "allow" else "denied"
        by = " (automatically)" if call.auto else f" by {call.decided_by}"
        out.append(f"  {verb}{by}\n", style="green" if call.decision == "allow" else "red")
    if call.state == "waiting":
        out.append("  … waiting for a decision\n", style="bold yellow")
    elif call.state in ("requested", "running"):
        out.append("  … running\n", style="dim")
    if call.output:
        _output(out, call)
    if diff:
        out.append_text(diff_text(diff, indent="  "))
    elif call.files:
        changed = ", ".join(f"{c.op} {c.path}" for c in call.files)
        out.append(f"  changed: {changed}\n", style="cyan")
    if call.child_run_id:
        out.append(f"  delegated to {call.child_run_id}\n", style="dim")
    out.rstrip()
    return out


def _output(out: Text, call: Call) -> None:
    lines = call.output.rstrip("\n").splitlines() or [""]
    if len(lines) > OUTPUT_LINES:
        out.append(f"  … {len(lines) - OUTPUT_LINES} lines above\n", style="dim")
    bad = call.state in ("error", "denied", "interrupted")
    for line in lines[-OUTPUT_LINES:]:
        out.append(f"  │ {line}\n", style="red" if bad else "")


def _mark(call: Call) -> tuple[str, str]:
    if call.state == "denied" or call.decision == "deny":
        return "✗", "bold red"
    if call.state == "waiting":
        return "?", "bold yellow"
    if call.state in ("error", "interrupted"):
        return "!", "red"
    if call.done:
        return "✓", "green"
    return "…", "dim"


def head_text(run: Run, *, driven_here: bool) -> Text:
    """The run's header: id, status, turns, spend, model, and the objective."""
    out = Text()
    out.append(run.id, style="bold")
    out.append("  ")
    out.append(run.status, style=STATUS_STYLES.get(run.status, ""))
    out.append(f"  turn {run.turns}  ${run.cost_usd:.4f}  {run.model}")
    if driven_here:
        out.append("  (driven here)", style="dim")
    if run.parent is not None:
        out.append(f"  fork of {run.parent.run_id}", style="dim")
    out.append(f"\n{run.objective}")
    return out


def approval_text(approval: Approval, call: Call | None) -> Text:
    """A pending approval: what, with which arguments, why it asks, and the keys."""
    out = Text()
    out.append("Approval needed: ", style="bold yellow")
    out.append(approval.name, style="bold")
    out.append("\n")
    for key, value in approval.args.items():
        shown = value if isinstance(value, str) else json.dumps(value)
        out.append(f"  {key}: ", style="dim")
        out.append(f"{clip(str(shown), 300)}\n")
    for reason in [] if call is None else call.reasons:
        gate, _, why = reason.partition(": ")
        out.append(f"  why ({gate} gate): {why}\n", style="yellow")
    if approval.expires_at:
        out.append(f"  denied automatically at {approval.expires_at}\n", style="dim")
    out.append("  [a] allow   [d] deny", style="bold")
    return out
