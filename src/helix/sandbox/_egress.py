"""Egress policy: which hosts a run may reach, decided in one place.

Tools reaching a URL (through the egress gate) and commands (through the filtering proxy)
both ask ``EgressPolicy.decide`` and normalise hosts with ``normal_host``, so a name
the gate refuses the proxy refuses too.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

_SUSPECT = re.compile(r"[\\\s\x00-\x1f\x7f]")
"""Backslashes, spaces and control characters: parsers disagree on URLs holding them
(``http://evil.test\\@good.test`` is good.test to Python, evil.test to a browser), so
such a URL is refused rather than guessed at."""


class EgressPolicy(BaseModel):
    """Domains a run may reach: ``*.example.com`` matches subdomains; deny wins."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def decide(self, host: str) -> Literal["allow", "deny", "unlisted"]:
        """Where ``host`` stands: on the deny list (which wins), the allow list, or neither.

        Patterns are an exact host, ``*.example.com`` (its subdomains, not
        ``example.com`` itself), or ``*`` (every host). Case and a trailing dot are
        ignored, as DNS ignores them.
        """
        host = _plain(host)
        if any(_host_matches(pattern, host) for pattern in self.deny):
            return "deny"
        if any(_host_matches(pattern, host) for pattern in self.allow):
            return "allow"
        return "unlisted"


def normal_host(host: str) -> str | None:
    """``host`` as a client connects to it (IDNA ASCII, lower case), or ``None`` if invalid.

    Full-width and other Unicode spellings of a listed name must meet the same list
    entry as its ASCII form. IPv6 literals keep their brackets off.
    """
    host = host.strip().strip("[]")
    if not host or _SUSPECT.search(host):
        return None
    if ":" in host:  # an IPv6 literal: compared as written, in lower case
        return host.lower()
    try:
        return host.encode("idna").decode("ascii").lower().rstrip(".") or None
    except UnicodeError:
        return None


def url_host(url: str) -> tuple[str | None, str]:
    """An http(s) URL's host in its ASCII form, or ``None`` and why the URL is refused."""
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
    normal = normal_host(host)
    if normal is None:
        return None, f"the URL's host {host!r} is not a valid domain name"
    return normal, ""


@dataclass(frozen=True, slots=True)
class EgressDecision:
    """Whether one connection a command attempted may go out, and why."""

    host: str
    port: int
    verdict: Literal["allow", "deny"]
    reason: str


EgressHook = Callable[[str, int], Awaitable[EgressDecision]]
"""Asked by the proxy for each connection a command attempts (``host``, ``port``)."""


def policy_hook(
    policy: EgressPolicy,
    record: Callable[[EgressDecision], Awaitable[None]] | None = None,
    ask: Callable[[EgressDecision], Awaitable[EgressDecision]] | None = None,
) -> EgressHook:
    """A hook applying ``policy``; each decision is passed to ``record`` (to be logged).

    An unlisted host is refused, unless ``ask`` is given: then it is handed the refusal
    and its answer (a person's, in an attended run) is the decision, and ``record`` is
    not called (``ask`` logs what it asks and what was answered).
    """

    async def decide(host: str, port: int) -> EgressDecision:
        normal = normal_host(host)
        if normal is None:
            decision = EgressDecision(host[:200], port, "deny", "not a valid host name")
        else:
            match policy.decide(normal):
                case "deny":
                    decision = EgressDecision(
                        normal, port, "deny", f"{normal} is in the egress deny list"
                    )
                case "allow":
                    decision = EgressDecision(
                        normal, port, "allow", f"{normal} is in the egress allowlist"
                    )
                case _:
                    decision = EgressDecision(
                        normal, port, "deny", f"{normal} is not in the egress allowlist"
                    )
                    if ask is not None:
                        return await ask(decision)
        if record is not None:
            await record(decision)
        return decision

    return decide


def _plain(host: str) -> str:
    return host.strip().lower().rstrip(".")


def _host_matches(pattern: str, host: str) -> bool:
    pattern = _plain(pattern)
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        suffix = pattern[1:]
        return host.endswith(suffix) and len(host) > len(suffix)
    return host == pattern
