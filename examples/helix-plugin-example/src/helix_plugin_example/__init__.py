"""An example Helix plugin: one tool, one gate, one UI component (see README.md)."""

from __future__ import annotations

import re
from typing import Any

from helix.gates import Decision, GateCall, GateContext
from helix.plugins import Plugin, PluginComponent
from helix.tools import ToolContext, ToolResult, UiPart, tool

__version__ = "0.1.0"

_SECRET = re.compile(r"\b(sk-[A-Za-z0-9]{16,}|ghp_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16})\b")


@tool(read_only=True, idempotent=True, effect="none", paths={"path": "read"})
async def count_words(ctx: ToolContext, path: str) -> ToolResult:
    """Count the lines, words and characters of a text file in the world."""
    target = (ctx.world / path).resolve()
    if not target.is_relative_to(ctx.world):  # the boundary gate refuses this first
        return ToolResult(ok=False, output=f"{path}: outside the world")
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return ToolResult(ok=False, output=f"{path}: cannot read it: {error}")
    lines, words = len(text.splitlines()), len(text.split())
    return ToolResult(
        ok=True,
        output=f"{path}: {lines} lines, {words} words, {len(text)} characters",
        ui=UiPart("example.counts", {"path": path, "lines": lines, "words": words}),
    )


class NoSecretsGate:
    """Refuses a call whose arguments hold something shaped like an API key."""

    name = "example.no-secrets"

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        """Deny when any argument's text matches a known key shape."""
        if _SECRET.search(repr(call.args)):
            return Decision("deny", "the arguments carry what looks like an API key")
        return Decision("allow", "no key-shaped text in the arguments")


COUNTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "lines": {"type": "integer", "minimum": 0},
        "words": {"type": "integer", "minimum": 0},
    },
    "required": ["path", "lines", "words"],
    "additionalProperties": False,
}


def render_counts(props: dict[str, Any]) -> str:
    """The component as a terminal shows it."""
    return f"{props['path']}: {props['lines']} lines, {props['words']} words"


plugin = Plugin(
    name="example",
    version=__version__,
    helix=">=0.1",
    tools=(count_words,),
    gates=(NoSecretsGate(),),
    components=(PluginComponent("example.counts", COUNTS_SCHEMA, render_counts),),
)
