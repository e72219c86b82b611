"""How a block, a run and a diff look: Rich text, the same in every screen."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.text import Text

from ._blocks import Block, Call, Note, Said

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
    "created": "cyan",
    "interrupted": "magenta",
}


def clip(text: str, width: int) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def args_line(args: dict[str, Any], width: int = 80) -> str:
    """A call's arguments summarised on one line: ``key=value …``."""
    parts = []
    for key, value in args.items():
        shown = value if isinstance(value, str) else json.dumps(value)
        parts.append(f"{key}={clip(str(shown), 40)}")
    return clip(" ".join(parts), width)


def diff_text(diff: str, indent: str = "") -> Text:
    """A unified diff, coloured: additions green, removals red, headers dim."""
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


def block_text(block: Block) -> Text:
    """One block as a person reads it."""
    if isinstance(block, Said):
        return Text(block.text)
    if isinstance(block, Note):
        style = "bold" if block.kind == "turn.started" else "italic magenta"
        if block.kind == "turn.started":
            return Text(f"── {block.text} ──", style=style)
        return Text(f"• {block.text}", style=style)
    return call_text(block)


def call_text(call: Call) -> Text:
    """A tool call: name and arguments, gate mark, decision, result, diff."""
    out = Text()
    mark, style = _mark(call)
    out.append(f"{mark} ", style=style)
    out.append(call.name, style="bold")
    out.append(f"  {args_line(call.args)}\n", style="dim")
    if call.verdict != "allow":
        word = "asked" if call.verdict == "ask" else "denied"
        out.append(f"  {call.gate} gate {word}: {call.why}\n", style="yellow")
    if call.decision is not None:
        by = f" by {call.decided_by}" if call.decided_by else ""
        colour = "green" if call.decision == "allow" else "red"
        out.append(f"  {call.decision}ed{by}\n".replace("denyed", "denied"), style=colour)
    if call.output is not None:
        lines = call.output.rstrip("\n").splitlines() or [""]
        if len(lines) > OUTPUT_LINES:
            out.append(f"  … {len(lines) - OUTPUT_LINES} lines above\n", style="dim")
        for line in lines[-OUTPUT_LINES:]:
            out.append(f"  │ {line}\n", style="" if call.ok else "red")
    elif not call.done:
        out.append("  … waiting for a decision\n" if call.verdict == "ask" and call.decision
                   is None else "  … running\n", style="dim")  # fmt: skip
    if call.diff:
        out.append_text(diff_text(call.diff, indent="  "))
    elif call.changed:
        out.append(f"  changed: {', '.join(call.changed)}\n", style="cyan")
    out.rstrip()
    return out


def _mark(call: Call) -> tuple[str, str]:
    if call.verdict == "deny" or call.decision == "deny":
        return "✗", "bold red"
    if call.verdict == "ask" and call.decision is None:
        return "?", "bold yellow"
    if call.ok is False:
        return "!", "red"
    return "✓", "green"


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


def approval_text(approval: Approval, why: str | None) -> Text:
    """A pending approval: what, with which arguments, why it asks, and the keys."""
    out = Text()
    out.append("Approval needed: ", style="bold yellow")
    out.append(approval.name, style="bold")
    out.append("\n")
    for key, value in approval.args.items():
        shown = value if isinstance(value, str) else json.dumps(value)
        out.append(f"  {key}: ", style="dim")
        out.append(f"{clip(str(shown), 300)}\n")
    if why:
        out.append(f"  why: {why}\n", style="yellow")
    if approval.expires_at:
        out.append(f"  denied automatically at {approval.expires_at}\n", style="dim")
    out.append("  [a] allow   [d] deny", style="bold")
    return out
