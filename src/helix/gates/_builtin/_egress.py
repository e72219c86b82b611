"""The egress gate: ``http_fetch`` reaches only the hosts the run may reach."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from helix.gates._gate import Decision, GateCall, GateContext

_SUSPECT = re.compile(r"[\\\s\x00-\x1f\x7f]")
"""Backslashes, spaces and control characters: parsers disagree on URLs holding them
(``http://evil.test\\@good.test`` is good.test to Python, evil.test to a browser), so
such a URL is refused rather than guessed at."""


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
        host, problem = _host(url)
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


def _host(url: str) -> tuple[str | None, str]:
    """The URL's host in its ASCII form, or ``None`` and why the URL is refused."""
    if _SUSPECT.search(url.strip()):
        return (
            None,
            f"malformed URL {url[:200]!r}: it holds spaces, backslashes or control characters",
        )
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError as error:
        return None, f"malformed URL {url[:200]!r}: {error}"
    if parts.scheme.lower() not in ("http", "https"):
        scheme = parts.scheme or "none"
        return None, f"only http and https URLs may be fetched (scheme: {scheme})"
    if not host:
        return None, f"the URL {url[:200]!r} has no host"
    try:
        # What the client will connect to: full-width and other Unicode spellings of a
        # listed name must meet the same list entry as its ASCII form.
        return host.encode("idna").decode("ascii").lower(), ""
    except UnicodeError:
        return None, f"the URL's host {host!r} is not a valid domain name"
