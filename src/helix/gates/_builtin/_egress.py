"""The egress gate: ``http_fetch`` reaches only the hosts the run may reach."""

from __future__ import annotations

from helix.gates._gate import Decision, GateCall, GateContext
from helix.sandbox import url_host


class EgressGate:
    """Applies the run's egress lists to ``http_fetch``; other tools pass.

    The deny list wins; a listed host is allowed; an unlisted one is asked about
    when someone is attending the run, and refused when nobody is.
    """

    name: str = "egress"

    tools = frozenset({"http_fetch"})
    """The only tool this gate rules on (see ``Gate.tools``)."""

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        """Decide on ``call``."""
        if call.name != "http_fetch":
            return Decision("allow", "no network access")
        url = call.args.get("url")
        if not isinstance(url, str):
            return Decision("deny", "url must be a string")
        host, problem = url_host(url)
        if host is None:
            return Decision("deny", problem)
        match ctx.egress.decide(host):
            case "deny":
                return Decision("deny", f"{host} is in the egress deny list")
            case "allow":
                return Decision("allow", f"{host} is in the egress allowlist")
            case _ if ctx.attended:
                return Decision("ask", f"{host} is not in the egress allowlist")
            case _:
                return Decision("deny", f"{host} is not in the egress allowlist (unattended)")
