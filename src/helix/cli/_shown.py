"""Generative UI components as a terminal shows them: each kind as text (``helix.ui``).

A component is drawn under a ``▣`` mark with its kind and id; its body is its kind's
text form (a plugin's kind unknown here: its props as JSON), a diff coloured by line.
An options card that waits says how to choose (``helix choose RUN CARD N``); its
choice, or why it closed without one, is a line of its own when it comes.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from ._screen import Gutter
from ._screen import text_of as _text
from ._transcript import Shown

BODY_LINES = 40
"""Lines of a component's text shown (a table's rows, a diff's lines)."""


def shown_block(block: Shown) -> RenderableType:
    """The component: its kind and id, then its text form."""
    from helix.ui import render_text

    ident = f" {block.component_id}" if block.component_id else ""
    lines: list[RenderableType] = [_text(f"{block.kind}{ident}", "bold cyan")]
    body = render_text(block.kind, block.props).splitlines()
    for line in body[:BODY_LINES]:
        lines.append(_text(line, _style(block.kind, line)))
    if len(body) > BODY_LINES:
        lines.append(
            _text(f"… {len(body) - BODY_LINES} more lines (helix logs --json shows all)", "dim")
        )
    return Gutter(Text("▣", style="bold cyan"), Group(*lines))


def choice_wait(block: Shown, run_id: str) -> RenderableType:
    """An options card waiting for a person: how to choose, and until when."""
    until = f" (until {block.expires_at})" if block.expires_at else ""
    first = _text(f"waiting for your choice{until}", "yellow")
    how = _text(f"choose: helix choose {run_id} {block.component_id} NUMBER|ID", "dim")
    return Gutter(Text("?", style="bold yellow"), Group(first, how))


def choice_made(block: Shown) -> RenderableType:
    """The choice made on a card (or why its wait ended without one)."""
    if block.choice is None:
        return Gutter(Text("!", style="bold yellow"), _text(f"no choice: {block.closed}", "yellow"))
    number = block.number(block.choice)
    label = f"{number}. {block.label(block.choice)} [{block.choice}]"
    return Gutter(
        Text("✓", style="bold green"), _text(f"chose {label} by {block.chosen_by}", "green")
    )


def _style(kind: str, line: str) -> str:
    if kind != "diff":
        return ""
    if line.startswith(("+++", "---")):
        return "bold"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    return "cyan" if line.startswith("@@") else "dim"
