"""The sandbox interface: where a command runs, and what comes back."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from helix.errors import ConfigError

from ._egress import EgressHook

if TYPE_CHECKING:
    from ._box import Box

DEFAULT_MAX_OUTPUT = 64 * 1024
"""Bytes of a command's output kept by default; the rest is cut with a marker."""

DEFAULT_TMP_BYTES = 512 << 20
"""The size of a command's private ``/tmp`` (``bwrap``, ``docker``) unless a call asks
for another: 512 MiB (a blueprint's ``sandbox.tmp_mb``)."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """How a command ended and what it printed (stdout and stderr, interleaved)."""

    exit_code: int | None
    """``None`` when the command was killed (timeout or cancellation)."""
    output: str
    truncated: bool
    timed_out: bool
    duration_ms: float
    tmp_full: bool = False
    """The command's private ``/tmp`` was full (its cap reached) when its shell exited;
    only the ``bwrap`` tier can tell."""
    node: str | None = None
    """The cluster node the command ran on, for a tier that runs it on another node
    (``helix.distributed.RayNodeSandbox``); ``None``: on this host."""


class Sandbox(ABC):
    """Runs shell commands for a run, confined to its world as far as the tier allows.

    Cancelling the awaiting task kills the command and everything it started.
    """

    tier: str
    """The isolation tier, named in ``tool.started`` events (``process``, ``bwrap``…)."""
    reason: str = ""
    """Why this tier was chosen (set by ``resolve_sandbox``; empty when chosen directly)."""

    @abstractmethod
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
        """Run ``command`` with a shell in ``cwd``; kill it after ``timeout_s`` seconds.

        ``egress``, when given, decides each connection the command attempts through
        the filtering proxy; without it the command is given no proxy. ``tmp_bytes``
        sizes the command's private ``/tmp`` where the tier makes one (``None``:
        ``DEFAULT_TMP_BYTES``); writes past it fail with ``ENOSPC``.
        """

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
        """Start a long-lived program (an MCP server) with piped stdin, stdout, stderr.

        The program runs confined as a command would (``cwd`` the world, the tier's
        environment plus ``env``, connections through ``egress`` or none); leaving the
        context closes its stdin, waits a moment, then kills it and everything it
        started. ``read_only`` are host folders it needs (its installation), shown to it
        read-only where the tier hides the host. A tier that cannot keep a program
        running raises ``ConfigError``.
        """
        raise ConfigError(
            f"the {self.tier} sandbox cannot run a long-lived server (an MCP server over"
            " stdio): use the bwrap or process tier for runs that declare one"
        )

    can_keep_live: bool = False
    """Whether ``open_box`` gives a box (a live world) on this tier."""
    can_checkpoint: bool = False
    """Whether this tier's boxes can be checkpointed and restored (``Box.checkpoint``)."""

    async def open_box(
        self,
        *,
        cwd: Path,
        egress: EgressHook | None = None,
        tmp_bytes: int | None = None,
        restore: Path | None = None,
    ) -> Box:
        """Start a long-lived box for a live world in ``cwd`` (``helix.sandbox.Box``).

        ``egress`` decides every connection anything in the box attempts, for as long
        as it lives; ``restore`` is a checkpoint image (``Box.checkpoint``) to start it
        from instead, memory and processes as they were. A tier that cannot keep a
        world alive raises ``ConfigError``.
        """
        raise ConfigError(
            f"the {self.tier} sandbox cannot keep a live world: use the process, podman"
            " or gvisor tier for a blueprint with sandbox.live"
        )
