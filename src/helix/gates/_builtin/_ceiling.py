"""The ceiling gate: the run's policy allows this tool, with these arguments."""

from __future__ import annotations

from helix.gates._gate import Decision, GateCall, GateContext
from helix.gates._policy import argument_text

from ._arguments import arguments_with_defaults

_SHOWN = 80
"""Characters of a refused value quoted back (values can be whole files)."""


class CeilingGate:
    """Refuses tools outside the effective ceiling and arguments over its limits.

    It checks names only: whether the tool exists is the arguments gate's question.
    """

    name: str = "ceiling"

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        """Decide on ``call``."""
        policy = ctx.policy
        if call.name in policy.deny_tools:
            return Decision("deny", f"the policy refuses the tool {call.name!r}")
        if policy.tools is not None and call.name not in policy.tools:
            allowed = ", ".join(sorted(policy.tools - policy.deny_tools)) or "none"
            return Decision(
                "deny", f"the tool {call.name!r} is above the policy ceiling (allowed: {allowed})"
            )
        limits = policy.arguments.get(call.name)
        if limits:
            args = arguments_with_defaults(call)
            for arg, constraints in limits.items():
                if arg not in args:
                    continue  # nothing to limit; a required one is the arguments gate's
                for constraint in constraints:
                    if not constraint.allows(args[arg]):
                        value = argument_text(args[arg])
                        if len(value) > _SHOWN:
                            value = value[:_SHOWN] + "…"
                        return Decision(
                            "deny",
                            f"{call.name}: {arg}={value!r} is outside the policy"
                            f" (it must match {constraint.pattern!r})",
                        )
        return Decision("allow", f"{call.name!r} is within the policy ceiling")
