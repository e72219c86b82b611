"""The approval gate: which calls go ahead, and which a person is asked about."""

from __future__ import annotations

from helix.gates._gate import Decision, GateCall, GateContext

from ._arguments import arguments_with_defaults
from ._commands import dangerous, git_doubt
from ._read_only import reads_only

_WORLD_EDITS = frozenset({"write_file", "edit_file"})
_SHOWN = 200
"""Characters of a command quoted in a reason."""


class ApprovalGate:
    """Applies the run's approval rules (first match wins), else the defaults.

    Defaults: read-only tools, file edits (inside the world, revertible by snapshots),
    read-only commands and delegation (each of the child's calls meets these gates
    itself) go ahead; other commands, fetches and any other tool ask.
    """

    name: str = "approval"

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        """Decide on ``call``."""
        if ctx.approvals:
            args = arguments_with_defaults(call)
            for number, rule in enumerate(ctx.approvals, start=1):
                if rule.matches(call.name, args):
                    described = _describe(rule.tool, rule.when)
                    return Decision(
                        rule.action, f"approval rule {number} ({described}) says {rule.action}"
                    )
        return _default(call, ctx)


def _default(call: GateCall, ctx: GateContext) -> Decision:
    if call.tool is not None and call.tool.read_only:
        return Decision("allow", f"{call.name} is read-only")
    if call.name in _WORLD_EDITS:
        return Decision("allow", "file edits stay in the world and can be rolled back")
    if call.name == "run_command":
        command = call.args.get("command")
        doubt = None
        if isinstance(command, str) and reads_only(command) and dangerous(command) is None:
            doubt = git_doubt(command, ctx.world)
            if doubt is None:
                return Decision("allow", "read-only command")
        shown = str(command)
        if len(shown) > _SHOWN:
            shown = shown[:_SHOWN] + "…"
        why = "" if doubt is None else f" ({doubt})"
        return Decision("ask", f"the command may change things{why}: {shown}")
    if call.name == "delegate":
        return Decision("allow", "each of the child run's calls passes its own gates")
    if call.name == "http_fetch":
        return Decision("ask", f"fetching {call.args.get('url')} reaches outside the world")
    return Decision("ask", f"{call.name} may have effects, so it needs approval")


def _describe(tool: str, when: dict[str, str]) -> str:
    if not when:
        return tool
    return f"{tool} when " + ", ".join(f"{arg} ~ {pattern!r}" for arg, pattern in when.items())
