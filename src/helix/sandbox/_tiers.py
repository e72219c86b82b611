"""Choosing a sandbox tier: the strongest this host can give, and why.

Tiers from weakest to strongest: ``process`` (always there), ``bwrap`` (bubblewrap
can create namespaces here), ``docker`` (a Docker engine answers). A blueprint's
``sandbox.kind`` is a minimum: a run refuses to start on a host that cannot give it.
"""

from __future__ import annotations

from dataclasses import dataclass

from helix.errors import ConfigError

from . import _bwrap, _docker
from ._bwrap import BwrapSandbox
from ._cgroup import pids_parent
from ._docker import DockerSandbox
from ._process import ProcessSandbox
from ._sandbox import Sandbox
from ._seccomp import program

TIERS = ("process", "bwrap", "docker")
"""Every tier, weakest first."""


@dataclass(frozen=True, slots=True)
class TierStatus:
    """Whether a tier is available on this host, and if not, why."""

    tier: str
    available: bool
    reason: str


def tier_statuses() -> list[TierStatus]:
    """Each tier's availability here (probes are run once per process)."""
    statuses = [TierStatus("process", True, "always available")]
    for tier, probe in (("bwrap", _bwrap.probe), ("docker", _docker.probe)):
        problem = probe()
        statuses.append(TierStatus(tier, problem is None, problem or "available"))
    return statuses


def sandbox_facts() -> dict[str, bool]:
    """Host features the stronger tiers use: the seccomp filter, a pids cgroup."""
    return {"seccomp": program() is not None, "pids_cgroup": pids_parent() is not None}


def check_tier(name: str) -> str:
    """``name`` if it is a tier, else ``ConfigError`` listing the tiers."""
    if name not in TIERS:
        raise ConfigError(f"unknown sandbox tier {name!r}: choose from {', '.join(TIERS)}")
    return name


def resolve_sandbox(tier: str | None = None, *, minimum: str = "process") -> Sandbox:
    """A sandbox of ``tier``, or of the strongest tier available; ``reason`` says why.

    ``ConfigError`` if the tier asked for (or ``minimum``) is unknown or not available.
    """
    wanted = check_tier(tier) if tier is not None else None
    statuses = {s.tier: s for s in tier_statuses()}
    if wanted is not None:
        status = statuses[wanted]
        if not status.available:
            raise ConfigError(f"the {wanted} sandbox tier is not available here: {status.reason}")
        chosen, reason = wanted, "asked for"
    else:
        chosen = max((s.tier for s in statuses.values() if s.available), key=TIERS.index)
        passed = [
            f"{s.tier}: {s.reason}"
            for s in statuses.values()
            if TIERS.index(s.tier) > TIERS.index(chosen)
        ]
        reason = "strongest available" + (f" ({'; '.join(passed)})" if passed else "")
    require_tier(chosen, minimum)
    sandbox = _make(chosen)
    sandbox.reason = reason
    return sandbox


def require_tier(tier: str, minimum: str) -> None:
    """``ConfigError`` unless ``tier`` is at least as strong as ``minimum``."""
    check_tier(minimum)
    if TIERS.index(check_tier(tier)) < TIERS.index(minimum):
        problems = {s.tier: s.reason for s in tier_statuses() if not s.available}
        why = f": {problems[minimum]}" if minimum in problems else ""
        raise ConfigError(
            f"the sandbox must be at least {minimum!r} but this host gives {tier!r}{why}"
        )


def _make(tier: str) -> Sandbox:
    if tier == "bwrap":
        return BwrapSandbox()
    if tier == "docker":
        return DockerSandbox()
    return ProcessSandbox()
