"""Showing the person a component, and asking them to choose: ``show_component``, ``ask_choice``.

``show_component`` returns a component (``ToolResult.ui``) that the runtime checks against its
kind's schema and records as a ``ui.component`` event: a table, a diff, a chart.
``ask_choice`` puts an options card in front of the person and waits for the click;
the choice is the call's result. The tool only knows the ``Chooser`` interface: the
runtime shows the card, waits (the run shows as waiting, with the approvals deadline),
and records the click. Tools that knew about runs and logs would invert the layers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from ._tool import ToolContext, ToolResult, UiPart, tool


@dataclass(frozen=True, slots=True)
class ChoiceAnswer:
    """How an ``ask_choice`` ended: the card's id and the option chosen (or why none was)."""

    component_id: str
    choice: str | None
    """The chosen option's id; ``None``: no choice (the deadline passed, the run ended)."""
    label: str | None = None
    by: str | None = None
    """Who chose (``user:<id>``)."""
    reason: str | None = None
    """Why there is no choice."""


class Chooser(Protocol):
    """Shows one ``ask_choice`` call's options card and waits for the person's choice."""

    async def choose(self, call_id: str, props: dict[str, Any]) -> ChoiceAnswer:
        """Show the card (once per call: a re-run after a crash finds it again) and wait.

        ``HelixError`` explains a refusal (invalid props, nobody attends the run).
        """
        ...


@tool(read_only=True, idempotent=True, effect="none")
async def show_component(ctx: ToolContext, component: str, props: dict[str, Any]) -> ToolResult:
    """Show the person a UI component: a table, a diff, a chart, Markdown, or an options card.

    ``component`` is the kind: ``table`` (props ``columns``: [str], ``rows``: [[cell]]),
    ``diff`` (``diff``: unified diff text, ``path``), ``markdown`` (``text``), ``chart``
    (``kind``: line|bar, ``labels``: [str], ``series``: [{name, points: [number]}]) or
    ``options`` (``question``, ``choices``: [{id, label, description}]; shown only: use
    ask_choice to wait for the person's pick). Each may have a ``title``.
    """
    return ToolResult(ok=True, output=f"shown: {component}", ui=UiPart(component, props))


# Idempotent because the chooser finds the card a call already showed (by call id) and
# waits on it: re-running the call after a crash never shows a second card.
@tool(read_only=True, idempotent=True, effect="none", concurrent=False)
async def ask_choice(
    ctx: ToolContext,
    question: str,
    choices: list[dict[str, str]],
    title: str | None = None,
) -> ToolResult:
    """Ask the person to pick one of a few options, and wait for their choice.

    ``choices`` is a list of ``{"id", "label", "description"?}`` (ids unique: letters,
    digits, ``_.-``). Returns the chosen option as JSON ``{"choice", "label", "by"}``.
    Fails at once when nobody attends the run, and when no choice comes before the
    approvals deadline.
    """
    if ctx.chooser is None:
        return ToolResult(ok=False, output="asking a person is not available to this run")
    props: dict[str, Any] = {"question": question, "choices": choices}
    if title is not None:
        props["title"] = title
    answer = await ctx.chooser.choose(ctx.call_id, props)
    if answer.choice is None:
        return ToolResult(ok=False, output=f"no choice was made: {answer.reason or 'closed'}")
    chosen = {"choice": answer.choice, "label": answer.label, "by": answer.by}
    return ToolResult(ok=True, output=json.dumps(chosen, ensure_ascii=False))
