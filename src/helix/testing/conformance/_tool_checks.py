"""The judgements ``ToolConformance`` makes, as functions of what a tool did."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Mapping
from typing import Any

from helix.errors import InvalidToolArgumentsError
from helix.tools import ToolDef, ToolResult

from ._tool_samples import WorldState, world_changes


def judge_call(
    tool: ToolDef, before: WorldState, after: WorldState, result: ToolResult, what: str
) -> None:
    """What a call did to the world and registered must be what its tool declares."""
    changes = world_changes(before, after)
    if tool.effect not in ("world", "external"):  # external: anything, the world included
        assert not changes, (
            f"{tool.name} declares effect {tool.effect!r}, but {what} changed the world: {changes}"
        )
        assert not result.files, f"{tool.name}: effect {tool.effect!r} but it reports files"
    if tool.reports_changes:
        files = {p: op for p, op in changes.items() if "dir" not in (before.get(p), after.get(p))}
        reported = {f.path: f.op for f in result.files}
        assert reported == files, (
            f"{tool.name} says it reports its changes, but {what} reported {reported} for {files}"
        )
        for change in result.files:
            hashes = (change.before, change.after)
            assert hashes == (before.get(change.path), after.get(change.path)), (
                f"{tool.name}: the hashes reported for {change.path} are not its content's"
            )
    for effect in result.effects:
        wanted = {"withheld": "external-withhold", "compensable": "external-compensate"}
        if effect.kind in wanted:
            assert tool.effect == wanted[effect.kind], (
                f"{tool.name} registered a {effect.kind} effect but declares effect"
                f" {tool.effect!r}, so no hook of it would settle the effect"
            )
        else:
            assert not tool.read_only, f"{tool.name} is read-only but registered {effect}"
        wire = json.loads(json.dumps(effect.args))
        assert wire == effect.args, f"{tool.name}: effect args are not plain JSON: {effect}"


def refusal(tool: ToolDef, args: Mapping[str, Any]) -> str | None:
    """Why ``tool.validate`` refuses ``args`` (``None``: it takes them)."""
    try:
        tool.validate(args)
    except InvalidToolArgumentsError as error:
        return str(error)
    return None


async def settled(call: Awaitable[ToolResult]) -> ToolResult | Exception:
    """A call's result, or the exception it raised (a cancellation goes through)."""
    try:
        return await call
    except Exception as error:
        return error


def outcome(task: asyncio.Task[ToolResult | Exception]) -> str:
    """How a call ended, for a failure message."""
    if not task.done():
        return "nothing yet"
    return "a cancellation" if task.cancelled() else repr(task.result())


def takes_strings(schema: Any, *, lists: bool) -> bool:
    """Whether a property's schema takes a string (or, with ``lists``, a list of strings).

    A union with ``null`` (an optional argument) counts.
    """
    if not isinstance(schema, dict):
        return False
    if schema.get("type") == "string":
        return True
    if lists and schema.get("type") == "array":
        return takes_strings(schema.get("items"), lists=False)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list):
        typed = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
        return bool(typed) and all(takes_strings(b, lists=lists) for b in typed)
    return False
