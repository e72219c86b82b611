"""The approval gate: which calls go ahead, and which a person is asked about."""

from __future__ import annotations

from helix.gates._gate import Decision, GateCall, GateContext

from ._arguments import arguments_with_defaults
from ._commands import dangerous, git_doubt
from ._read_only import reads_only

_SHOWN = 200
"""Characters of a command quoted in a reason."""


class ApprovalGate:
    """Applies the run's approval rules (first match wins), else the defaults.

    The defaults read what a tool declares (``Facets``), never its name. A command
    line goes ahead if it only reads and runs in the sandbox, and is asked about
    otherwise; reaching a URL is asked about. Then a read-only tool, a tool declaring
    no effect, a tool handing its work to a child run (each of the child's calls
    meets these gates itself) and a tool whose changes are the world paths it writes
    (revertible by snapshots, inside the world by the boundary gate) go ahead; any
    other tool is asked about.
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
    tool = call.tool
    if tool is None:
        return Decision("ask", f"{call.name} may have effects, so it needs approval")
    facets = tool.facets
    args = arguments_with_defaults(call)
    if facets.command is not None:
        return _command(args.get(facets.command), sandboxed=facets.sandboxed, ctx=ctx)
    if facets.url is not None:
        return Decision("ask", f"fetching {args.get(facets.url)} reaches outside the world")
    if facets.read_only:
        return Decision("allow", f"{call.name} is read-only")
    if facets.effect == "none":
        return Decision("allow", f"{call.name} declares no effect")
    if facets.delegates:
        return Decision("allow", "each of the child run's calls passes its own gates")
    if facets.writes and not facets.sandboxed:
        return Decision("allow", "file edits stay in the world and can be rolled back")
    return Decision("ask", f"{call.name} may have effects, so it needs approval")


def _command(command: object, *, sandboxed: bool, ctx: GateContext) -> Decision:
    doubt = None
    if not sandboxed:
        doubt = "it runs outside the sandbox"
    elif isinstance(command, str) and reads_only(command) and dangerous(command) is None:
        doubt = git_doubt(command, ctx.world)
        if doubt is None:
            return Decision("allow", "read-only command")
    shown = str(command)
    if len(shown) > _SHOWN:
        shown = shown[:_SHOWN] + "…"
    why = "" if doubt is None else f" ({doubt})"
    return Decision("ask", f"the command may change things{why}: {shown}")


def _describe(tool: str, when: dict[str, str]) -> str:
    if not when:
        return tool
    return f"{tool} when " + ", ".join(f"{arg} ~ {pattern!r}" for arg, pattern in when.items())
