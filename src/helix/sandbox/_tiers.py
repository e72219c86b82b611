"""Choosing a sandbox tier: the strongest this host can give, and why.

Tiers from weakest to strongest: ``process`` (always there), ``bwrap`` (bubblewrap
can create namespaces here), ``docker`` (a Docker engine answers), ``podman`` (podman
and runc run a container here), ``gvisor`` (``runsc`` starts a sandbox here), ``microvm``
(a QEMU microVM with its own kernel boots here: the strongest). The last three are
chosen only when asked for, and ``microvm`` only when a run names it, even for a live
world (``ASKED_FOR_ONLY``). A blueprint's ``sandbox.kind`` is a minimum: a run refuses
to start on a host that cannot give it. Left to choose, Helix takes the strongest of
the ``AUTOMATIC`` tiers (those cheap enough for every command); a stronger tier is used
when a run asks for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from helix.errors import ConfigError

from . import _bwrap, _docker, _gvisor, _microvm, _microvm_accel, _podman
from ._bwrap import BwrapSandbox
from ._cgroup import pids_parent
from ._docker import DockerSandbox
from ._egress import EgressHook
from ._gvisor import GvisorSandbox
from ._microvm import MicrovmSandbox
from ._podman import PodmanSandbox
from ._process import ProcessSandbox
from ._sandbox import DEFAULT_MAX_OUTPUT, CommandResult, Sandbox
from ._seccomp import program

TIERS = ("process", "bwrap", "docker", "podman", "gvisor", "microvm")
"""Every tier, weakest first."""
AUTOMATIC = ("process", "bwrap", "docker")
"""The tiers chosen without being asked for (the strongest available of them)."""
ASKED_FOR_ONLY = frozenset({"microvm"})
"""Tiers never chosen for a run that does not name them (as its ``sandbox.kind``), not
even for a live world: a microVM costs seconds to start under emulation."""


@dataclass(frozen=True, slots=True)
class TierStatus:
    """Whether a tier is available on this host, and if not, why."""

    tier: str
    available: bool
    reason: str
    live: bool = False
    """Whether the tier keeps live worlds (``Sandbox.can_keep_live``)."""
    checkpoints: bool = False
    """Whether its live worlds can be checkpointed (``Sandbox.can_checkpoint``)."""


def tier_statuses() -> list[TierStatus]:
    """Each tier's availability here (probes are run once per process)."""
    return [tier_status(tier) for tier in TIERS]


def tier_status(tier: str) -> TierStatus:
    """One tier's availability here, probing only that tier (once per process)."""
    kind = _MAKERS[check_tier(tier)]
    abilities = {"live": kind.can_keep_live, "checkpoints": kind.can_checkpoint}
    if tier not in _PROBES:
        return TierStatus(tier, True, "always available", **abilities)
    problem = _PROBES[tier]()
    if problem is None and tier in _DETAILS:
        return TierStatus(tier, True, f"available: {_DETAILS[tier]()}", **abilities)
    return TierStatus(tier, problem is None, problem or "available", **abilities)


def sandbox_facts() -> dict[str, bool]:
    """Host features the stronger tiers use: the seccomp filter, a pids cgroup."""
    return {"seccomp": program() is not None, "pids_cgroup": pids_parent() is not None}


def check_tier(name: str) -> str:
    """``name`` if it is a tier, else ``ConfigError`` listing the tiers."""
    if name not in TIERS:
        raise ConfigError(f"unknown sandbox tier {name!r}: choose from {', '.join(TIERS)}")
    return name


def resolve_sandbox(
    tier: str | None = None, *, minimum: str = "process", live: bool = False
) -> Sandbox:
    """A sandbox of ``tier``, or of the strongest tier available; ``reason`` says why.

    ``live`` asks for a tier that keeps boxes (``Sandbox.can_keep_live``): the strongest
    available such tier of at least ``minimum``.

    ``ConfigError`` if the tier asked for (or ``minimum``) is unknown or not available.
    """
    wanted = check_tier(tier) if tier is not None else None
    if wanted is not None:
        status = tier_status(wanted)
        if not status.available:
            raise ConfigError(f"the {wanted} sandbox tier is not available here: {status.reason}")
        chosen, reason = wanted, "asked for"
    elif live:
        able = [
            t
            for t in TIERS[TIERS.index(check_tier(minimum)) :]
            if (t not in ASKED_FOR_ONLY or t == minimum)
            and _MAKERS[t].can_keep_live
            and tier_status(t).available
        ]
        if not able:
            raise ConfigError(f"no sandbox tier of at least {minimum!r} keeps a live world here")
        chosen, reason = able[-1], "the strongest available tier that keeps a live world"
    else:
        chosen, reason = _choose(minimum)
    require_tier(chosen, minimum)
    sandbox = _make(chosen)
    sandbox.reason = reason
    return sandbox


def _choose(minimum: str) -> tuple[str, str]:
    """The tier to use, and why, when none was asked for.

    The strongest available automatic tier, or, when none meets ``minimum``, the
    weakest available tier that does. Only the automatic tiers are probed unless the
    minimum asks for more (a podman probe starts a container).
    """
    floor = TIERS.index(check_tier(minimum))
    statuses = {tier: tier_status(tier) for tier in AUTOMATIC}
    automatic = [s.tier for s in statuses.values() if s.available]
    chosen = max(automatic, key=TIERS.index)
    if TIERS.index(chosen) < floor:
        stronger = [t for t in TIERS[floor:] if tier_status(t).available]
        if stronger:
            return stronger[0], f"the weakest available tier of at least {minimum}"
    passed = [
        f"{s.tier}: {s.reason}"
        for s in statuses.values()
        if TIERS.index(s.tier) > TIERS.index(chosen)
    ]
    return chosen, "strongest available" + (f" ({'; '.join(passed)})" if passed else "")


def require_tier(tier: str, minimum: str) -> None:
    """``ConfigError`` unless ``tier`` is at least as strong as ``minimum``."""
    check_tier(minimum)
    if TIERS.index(check_tier(tier)) < TIERS.index(minimum):
        status = tier_status(minimum)  # only that tier probed: another may boot a VM
        why = "" if status.available else f": {status.reason}"
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


_PROBES: dict[str, Callable[[], str | None]] = {
    "bwrap": _bwrap.probe,
    "docker": _docker.probe,
    "podman": _podman.probe,
    "gvisor": _gvisor.probe,
    "microvm": _microvm.probe,
}
"""Each tier's probe (``None``: available here, else why not); ``process`` needs none."""
_DETAILS: dict[str, Callable[[], str]] = {"microvm": _microvm_accel.detail}
"""How an available tier runs here, where that varies (the microvm tier's acceleration)."""
_MAKERS: dict[str, type[Sandbox]] = {
    "process": ProcessSandbox,
    "bwrap": BwrapSandbox,
    "docker": DockerSandbox,
    "podman": PodmanSandbox,
    "gvisor": GvisorSandbox,
    "microvm": MicrovmSandbox,
}


def _make(tier: str) -> Sandbox:
    return _MAKERS[tier]()
