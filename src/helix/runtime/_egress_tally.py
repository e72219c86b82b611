"""One command's connection attempts, decided once per host and counted.

A command may try the same host thousands of times (a retry loop, a scanner). Only its
first attempt at a host is decided in full (logged, asked about in an attended run);
every later attempt at that host, on any port, waits for and reuses that decision, so
a repeat costs neither an event nor a question. Past ``MAX_LOGGED_HOSTS`` distinct
hosts, new hosts are decided by the egress lists alone (an unlisted host is refused,
not asked about) and only counted. ``counted`` sums it all up when the command ends.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Literal

from helix.kernel.events import EgressAttempts, EgressCounted
from helix.sandbox import EgressDecision, EgressHook, normal_host

MAX_LOGGED_HOSTS = 32
"""Distinct hosts per command whose first attempt is logged (and may be asked about)."""


@dataclass
class _Host:
    decision: asyncio.Future[EgressDecision]
    attempts: int = 1


@dataclass
class EgressTally:
    """The attempts of one command, per host (the host's normal form)."""

    hosts: dict[str, _Host] = field(default_factory=dict[str, _Host])
    other_attempts: int = 0
    """Attempts at hosts past ``MAX_LOGGED_HOSTS`` (decided quietly)."""
    questions: int = 0
    """Approval requests this command has raised."""

    def hook(self, decide: EgressHook, quiet: EgressHook) -> EgressHook:
        """A hook that asks ``decide`` once per host, and ``quiet`` past the logged hosts."""

        async def tallied(host: str, port: int) -> EgressDecision:
            key = normal_host(host) or host[:200]
            known = self.hosts.get(key)
            if known is not None:
                known.attempts += 1
                first = await asyncio.shield(known.decision)
                return replace(first, port=port)
            if len(self.hosts) >= MAX_LOGGED_HOSTS:
                self.other_attempts += 1
                decision = await quiet(host, port)
                note = f"decided by the lists alone: this command already tried {MAX_LOGGED_HOSTS}"
                return replace(decision, reason=f"{decision.reason} ({note} hosts)")
            entry = _Host(asyncio.get_running_loop().create_future())
            self.hosts[key] = entry
            try:
                decision = await decide(host, port)
            except BaseException:
                entry.decision.cancel()  # repeats waiting on it end with the command
                raise
            entry.decision.set_result(decision)
            return decision

        return tallied

    @property
    def attempts(self) -> int:
        return sum(h.attempts for h in self.hosts.values()) + self.other_attempts

    def counted(self, call_id: str) -> EgressCounted:
        """The summary event (a host still undecided when the command ended was refused)."""
        hosts = [
            EgressAttempts(host=key, verdict=_verdict(entry.decision), attempts=entry.attempts)
            for key, entry in self.hosts.items()
        ]
        return EgressCounted(call_id=call_id, hosts=hosts, other_attempts=self.other_attempts)


def _verdict(decision: asyncio.Future[EgressDecision]) -> Literal["allow", "deny"]:
    if decision.done() and not decision.cancelled() and decision.exception() is None:
        return decision.result().verdict
    return "deny"
