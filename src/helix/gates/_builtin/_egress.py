"""The egress gate: a tool reaching a URL reaches only the hosts the run may reach."""

from __future__ import annotations

from helix.gates._gate import Decision, GateCall, GateContext
from helix.sandbox import WORLD_HOST, url_host

from ._arguments import arguments_with_defaults


class EgressGate:
    """Applies the run's egress lists to the URL of tools declaring a ``url``.

    The deny list wins; a listed host is allowed; an unlisted one is asked about
    when someone is attending the run, and refused when nobody is. (Connections a
    command makes in the sandbox are decided by the same lists, in the sandbox's
    egress proxy.)
    """

    name: str = "egress"

    facets = frozenset({"url"})
    """The only tools this gate rules on (see ``Gate.facets``)."""

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        """Decide on ``call``."""
        argument = call.tool.facets.url if call.tool is not None else None
        if argument is None:
            return Decision("allow", "no network access")
        url = arguments_with_defaults(call).get(argument)
        if not isinstance(url, str):
            return Decision("deny", f"{argument} must be a string")
        host, problem = url_host(url)
        if host is None:
            return Decision("deny", problem)
        if host == WORLD_HOST:
            if ctx.live:
                return Decision("allow", "world is the run's own live world")
            return Decision("deny", "world names a live world's ports, and this run's is not live")
        match ctx.egress.decide(host):
            case "deny":
                return Decision("deny", f"{host} is in the egress deny list")
            case "allow":
                return Decision("allow", f"{host} is in the egress allowlist")
            case _ if ctx.attended:
                return Decision("ask", f"{host} is not in the egress allowlist")
            case _:
                return Decision("deny", f"{host} is not in the egress allowlist (unattended)")
