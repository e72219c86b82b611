"""The arguments gate: the tool exists and the call's arguments fit its schema."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from helix.errors import InvalidToolArgumentsError
from helix.gates._gate import Decision, GateCall, GateContext


class ArgumentsGate:
    """Refuses unknown tools, arguments that did not parse, arguments the schema rejects.

    And, while the run's tool choice names a tool (``GateContext.forced_tool``), a call
    of any other. The reason goes back to the model, so it says what exists or what is
    wrong.
    """

    name: str = "arguments"

    def __init__(self, available_tools: Iterable[str] = ()) -> None:
        """Name ``available_tools`` when refusing an unknown tool."""
        self._available = tuple(sorted(available_tools))

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        """Decide on ``call``."""
        if call.tool is None:
            return Decision("deny", self._unknown(call.name, ctx))
        if call.malformed is not None:
            return Decision("deny", f"malformed arguments: {call.malformed}")
        forced = ctx.forced_tool
        if forced is not None and call.name != forced:
            told = f"you were asked to call {forced!r}, not {call.name!r}: call {forced!r} now"
            return Decision("deny", told)
        if call.parsed is not None:
            return Decision("allow", "arguments match the tool's schema")
        try:
            call.tool.validate(call.args)
        except InvalidToolArgumentsError as error:
            return Decision("deny", f"invalid arguments: {error}")
        return Decision("allow", "arguments match the tool's schema")

    def _unknown(self, name: str, ctx: GateContext) -> str:
        available = self._available
        if not available and ctx.policy.tools is not None:
            # Without a list from the run, the ceiling's list is the best hint there is.
            available = tuple(sorted(ctx.policy.tools - ctx.policy.deny_tools))
        if not available:
            return f"unknown tool {name!r}"
        return f"unknown tool {name!r}; available: {', '.join(available)}"


def arguments_with_defaults(call: GateCall) -> Mapping[str, Any]:
    """The call's arguments, with the tool's defaults for those it left out.

    Gates that run before (or without) validation judge what the tool will really
    get: a limit on ``path`` must also hold for the ``"."`` a call left implicit.
    """
    if call.tool is None:
        return call.args
    missing = {
        name: info.get_default(call_default_factory=True)
        for name, info in call.tool.arguments.model_fields.items()
        if name not in call.args and not info.is_required()
    }
    return {**missing, **call.args} if missing else call.args
