"""How a block, a run and a diff look in the cockpit: Rich text, the same in every screen."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.text import Text

from helix.cli._blocks import call_block, note, question, repeats, said
from helix.cli._screen import text_of
from helix.cli._shown import choice_made, shown_block
from helix.cli._transcript import Block, Call, Note, Said, Shown, Transcript

if TYPE_CHECKING:
    from helix.api import Approval, Run

STATUS_STYLES = {
    "running": "bold green",
    "waiting": "bold yellow",
    "paused": "yellow",
    "completed": "green",
    "failed": "bold red",
    "cancelled": "red",
    "queued": "cyan",
}


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


def block_view(block: Block, transcript: Transcript, diffs: dict[str, str]) -> RenderableType:
    """One block as the terminal run view draws it (a waiting call as its question).

    ``diffs``: for a call that edited files, each file's diff over its turn, once fetched.
    """
    if isinstance(block, Said):
        return said(block)
    if isinstance(block, Note):
        if block.kind == "completed" and repeats(transcript, block):
            return Text("✓ completed", style="bold green")  # its words were just said
        return note(block)
    if isinstance(block, Shown):
        return component_view(block)
    if block.state == "waiting":
        return question(block)
    return call_block(block, diffs)


def component_view(block: Shown) -> RenderableType:
    """A component as text; an options card with its choice (or the keys to make one)."""
    from rich.console import Group

    parts: list[RenderableType] = [shown_block(block)]
    if block.waiting:
        parts.append(Text("  waiting for your choice (below)", style="bold yellow"))
    elif block.choice is not None or block.closed is not None:
        parts.append(choice_made(block))
    return Group(*parts)


def head_text(run: Run, *, driven_here: bool) -> Text:
    """The run's header: id, status, turns, spend, model, and the objective."""
    out = Text()
    out.append(run.id, style="bold")
    out.append("  ")
    out.append(run.status, style=STATUS_STYLES.get(run.status, ""))
    out.append(f"  turn {run.turns}  ${run.cost_usd:.4f}  {run.model}")
    if driven_here and run.driven is not None:  # an ended run's driver is only finishing
        out.append("  (driven here)", style="dim")
    if run.parent is not None:
        out.append(f"  fork of {run.parent.run_id}", style="dim")
    out.append_text(text_of(f"\n{run.objective}"))
    return out


def approval_text(approval: Approval, call: Call | None) -> Text:
    """A pending approval: what, with which arguments, why it asks, and the keys."""
    out = Text()
    question = approval.question
    if question is not None:
        out.append_text(text_of(f"Question from {question.source}", "bold yellow"))
        if approval.name == "sampling":
            tokens = approval.args.get("max_tokens")
            out.append(
                f": may the run's model answer this prompt (up to {tokens} tokens)?", "yellow"
            )
        out.append(" (its words, not Helix's):\n", style="yellow")
        out.append_text(text_of(f"  {clip(question.message, 600)}\n"))
        for name in question.fields.get("properties") or {}:
            out.append_text(text_of(f"  · {name}\n", "dim"))
        if approval.expires_at:
            out.append(f"  cancelled automatically at {approval.expires_at}\n", style="dim")
        out.append("  [a] answer   [d] decline", style="bold")
        return out
    out.append("Approval needed: ", style="bold yellow")
    out.append_text(text_of(approval.name, "bold"))
    out.append("\n")
    for key, value in approval.args.items():
        shown = value if isinstance(value, str) else json.dumps(value)
        out.append_text(text_of(f"  {key}: ", "dim"))
        out.append_text(text_of(f"{clip(str(shown), 300)}\n"))
    for reason in [] if call is None else call.reasons:
        gate, _, why = reason.partition(": ")
        out.append_text(text_of(f"  why ({gate} gate): {why}\n", "yellow"))
    if approval.expires_at:
        out.append(f"  denied automatically at {approval.expires_at}\n", style="dim")
    out.append("  [a] allow   [d] deny", style="bold")
    return out


def choice_text(card: Shown) -> Text:
    """A card waiting for a choice: its question, its options (numbered, clickable), the keys."""
    from rich.style import Style

    out = Text()
    title = card.props.get("title")
    if title:
        out.append_text(text_of(f"{title}\n", "bold"))
    out.append("Choose: ", style="bold yellow")
    out.append_text(text_of(f"{card.props.get('question', '')}\n"))
    options = [o for o in card.props.get("choices") or [] if isinstance(o, dict)]
    for number, option in enumerate(options, start=1):
        click = Style(bold=True, meta={"@click": f"screen.choose({number})"})
        out.append(f"  [{number}] ", style=click)
        out.append_text(text_of(str(option.get("label", option.get("id"))), "bold"))
        if option.get("description"):
            out.append_text(text_of(f" — {option['description']}", "dim"))
        out.append("\n")
    if card.expires_at:
        out.append(f"  closed without a choice at {card.expires_at}\n", style="dim")
    out.append(f"  press 1-{len(options)} (or click an option) to choose", style="bold")
    return out
