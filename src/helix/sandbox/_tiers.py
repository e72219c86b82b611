"""Choosing a sandbox tier: the strongest this host can give, and why.

Tiers from weakest to strongest: ``process`` (always there), ``bwrap`` (bubblewrap
can create namespaces here), ``docker`` (a Docker engine answers). A blueprint's
``sandbox.kind`` is a minimum: a run refuses to start on a host that cannot give it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from helix.errors import ConfigError

from . import _bwrap, _docker
from ._bwrap import BwrapSandbox
from ._cgroup import pids_parent
from ._docker import DockerSandbox
from ._egress import EgressHook
from ._process import ProcessSandbox
from ._sandbox import DEFAULT_MAX_OUTPUT, CommandResult, Sandbox
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
    return [tier_status(tier) for tier in TIERS]


def tier_status(tier: str) -> TierStatus:
    """One tier's availability here, probing only that tier (once per process)."""
    probes = {"bwrap": _bwrap.probe, "docker": _docker.probe}
    if check_tier(tier) not in probes:
        return TierStatus(tier, True, "always available")
    problem = probes[tier]()
    return TierStatus(tier, problem is None, problem or "available")


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


def require_sandbox(sandbox: Sandbox, minimum: str) -> None:
    """``require_tier`` of a sandbox, without asking its tier when any tier will do.

    The weakest minimum (``process``) is met everywhere, so a run that asks no more
    never makes a ``StrongestSandbox`` probe the host.
    """
    if check_tier(minimum) != TIERS[0]:
        require_tier(sandbox.tier, minimum)


class StrongestSandbox(Sandbox):
    """The strongest tier this host has, chosen on first use (``resolve_sandbox``).

    Probing starts a process or two (``bwrap``, ``docker version``: tens of
    milliseconds, more where Docker hangs), once per process; a process that runs no
    command (most runs' turns, ``helix runs``, a server resuming paused runs) never
    pays it.
    """

    def __init__(self) -> None:
        self._chosen: Sandbox | None = None

    def chosen(self) -> Sandbox:
        """The tier's sandbox, probing for it the first time."""
        if self._chosen is None:
            self._chosen = resolve_sandbox()
        return self._chosen

    @property
    def tier(self) -> str:
        return self.chosen().tier

    @tier.setter
    def tier(self, value: str) -> None:
        raise AttributeError("a StrongestSandbox's tier is the one it finds")

    @property
    def reason(self) -> str:
        return self.chosen().reason

    @reason.setter
    def reason(self, value: str) -> None:
        self.chosen().reason = value

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        timeout_s: float,
        max_output: int = DEFAULT_MAX_OUTPUT,
        egress: EgressHook | None = None,
        tmp_bytes: int | None = None,
    ) -> CommandResult:
        if self._chosen is None:
            await asyncio.to_thread(self.chosen)  # the probe blocks: not on the loop
        return await self.chosen().run(
            command,
            cwd=cwd,
            timeout_s=timeout_s,
            max_output=max_output,
            egress=egress,
            tmp_bytes=tmp_bytes,
        )

    def serve(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        egress: EgressHook | None = None,
        read_only: Sequence[Path] = (),
        tmp_bytes: int | None = None,
    ) -> AbstractAsyncContextManager[asyncio.subprocess.Process]:
        return self._serve(argv, cwd, env, egress, read_only, tmp_bytes)

    @asynccontextmanager
    async def _serve(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        egress: EgressHook | None,
        read_only: Sequence[Path],
        tmp_bytes: int | None,
    ) -> AsyncIterator[asyncio.subprocess.Process]:
        if self._chosen is None:
            await asyncio.to_thread(self.chosen)  # the probe blocks: not on the loop
        serving = self.chosen().serve(
            argv, cwd=cwd, env=env, egress=egress, read_only=read_only, tmp_bytes=tmp_bytes
        )
        async with serving as process:
            yield process


def _make(tier: str) -> Sandbox:
    if tier == "bwrap":
        return BwrapSandbox()
    if tier == "docker":
        return DockerSandbox()
    return ProcessSandbox()
