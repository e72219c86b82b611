"""A box: one long-lived sandbox that commands are executed into, for a live world.

A tier that can keep a world alive between commands (``Sandbox.open_box``) gives a
``Box``: started once for a run, every command then ``exec``'d into it, background
processes kept running in it between turns, and everything in it killed on ``close``.
A tier that can also freeze a box (gVisor) writes its memory and processes to a
checkpoint image, and opens a box again from that image.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

from helix.errors import ConfigError

from ._sandbox import DEFAULT_MAX_OUTPUT, CommandResult


@dataclass(frozen=True, slots=True)
class CheckpointImage:
    """A frozen box on the host: its memory, processes and private files."""

    tier: str
    path: Path
    """A directory on the host holding the image (the tier's own format)."""
    size_bytes: int
    seconds: float


class Box(ABC):
    """A running sandbox a run keeps: commands are executed into it, not started anew.

    Commands run as ``/bin/sh -c`` would run them, in the world directory, with the
    tier's environment, confined as the tier's one-shot commands are. A process a
    command leaves behind keeps running until ``close`` (or ``checkpoint``).
    """

    tier: str
    world: Path
    state_dir: str
    """A directory inside the box, outside the world, that only Helix uses (background
    processes' logs and exit codes); on a tier whose box is the host, a host folder."""
    can_checkpoint: bool = False

    @abstractmethod
    async def exec(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float,
        max_output: int = DEFAULT_MAX_OUTPUT,
    ) -> CommandResult:
        """Run ``argv`` in the box (cwd the world); kill it after ``timeout_s``.

        Cancelling the awaiting task kills the command (and its process group).
        """

    @abstractmethod
    def stream(
        self, argv: Sequence[str]
    ) -> AbstractAsyncContextManager[asyncio.subprocess.Process]:
        """Run ``argv`` in the box with piped stdin and stdout; leaving the context kills it.

        A relay to a port inside the box is one: its stdin and stdout the connection.
        """

    async def checkpoint(self, image: Path) -> CheckpointImage:
        """Freeze the box into the empty directory ``image``; the box is then gone.

        ``ConfigError`` on a tier that cannot (``can_checkpoint`` is false).
        """
        raise ConfigError(f"the {self.tier} sandbox cannot checkpoint a live world")

    @abstractmethod
    async def close(self) -> None:
        """Kill everything in the box and remove it; safe to call twice."""
