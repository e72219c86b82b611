"""The process tier's box: a live world on the host itself, as weak as the tier.

Commands run as the process tier runs them (scrubbed environment, limits, their own
process group, killed at the end). What a command starts in a session of its own
(``setsid``: how ``LiveWorld`` starts background processes) keeps running until the
box is closed, which kills every session whose leader's pid is recorded in the
box's state folder. The tier confines nothing: a process that leaves its session
again escapes the kill, and nothing stops it from reading the host.

A Helix killed with ``kill -9`` closes nothing: its boxes' sessions run on. The state
folder names its Helix (``owner``), so the next Helix process to open a box kills the
recorded sessions of every folder whose owner has ended, and removes the folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from helix._util import boot_time, start_ticks

from ._box import Box
from ._egress import EgressHook
from ._orphans import mark_owner, reap_once
from ._proxy import proxy_environment
from ._sandbox import DEFAULT_MAX_OUTPUT, CommandResult
from ._serve import running
from ._supervise import Launch, _require_directory, _supervise

if TYPE_CHECKING:
    from ._process import ProcessSandbox


STATE_PREFIX = "helix-live-"
"""A process-tier box's state folder in the temporary directory starts so."""


class ProcessBox(Box):
    """A live world whose box is the host (the ``process`` tier)."""

    tier = "process"

    def __init__(self, sandbox: ProcessSandbox, world: Path, env: dict[str, str]) -> None:
        self.world = world
        self.state_dir = tempfile.mkdtemp(prefix=STATE_PREFIX)
        mark_owner(Path(self.state_dir))
        self._sandbox = sandbox
        self._env = env
        self._exits = AsyncExitStack()
        self._closed = False

    @classmethod
    async def open(
        cls, sandbox: ProcessSandbox, world: Path, egress: EgressHook | None
    ) -> ProcessBox:
        """A box in ``world``, its connections through ``egress`` while it lives."""
        _require_directory(world)
        await asyncio.to_thread(reap_once, STATE_PREFIX, _kill_sessions)
        env = sandbox.environment()
        box = cls(sandbox, world, env)
        if egress is not None:
            port = await box._exits.enter_async_context(sandbox._proxy().tcp_channel(egress))
            env.update(proxy_environment(f"http://127.0.0.1:{port}"))
        return box

    async def exec(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float,
        max_output: int = DEFAULT_MAX_OUTPUT,
    ) -> CommandResult:
        started = time.monotonic()
        launch = Launch(list(argv), dict(self._env), self._sandbox._limit_setter())
        result = await _supervise(launch, self.world, timeout_s, max_output)
        return replace(result, duration_ms=(time.monotonic() - started) * 1000)

    @contextlib.asynccontextmanager
    async def stream(self, argv: Sequence[str]) -> AsyncIterator[asyncio.subprocess.Process]:
        async with running(
            list(argv), cwd=self.world, env=dict(self._env), preexec=None
        ) as process:
            yield process

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await asyncio.to_thread(_kill_sessions, Path(self.state_dir))
        finally:
            await self._exits.aclose()
            shutil.rmtree(self.state_dir, ignore_errors=True)


def _kill_sessions(state: Path) -> None:
    """Kill the process group of every session recorded in ``state`` (``*.pid`` files).

    A pid outlives its process only while its group does, so a recorded leader that is
    gone leaves at most its own group behind (killed too: a daemon it forked). A
    recorded pid that runs again but started after its file was written is another
    program's: left alone.
    """
    booted = boot_time()
    for pid_file in state.glob("*.pid"):
        with contextlib.suppress(OSError, ValueError):
            pid = int(pid_file.read_text().strip())
            if pid > 1 and _still_recorded(pid, pid_file.stat().st_mtime, booted):
                os.killpg(pid, signal.SIGKILL)


def _still_recorded(pid: int, written: float, booted: float) -> bool:
    """Whether group ``pid`` is the session whose leader wrote its pid at ``written``."""
    ticks = start_ticks(pid)
    if ticks is None:
        return True  # the leader is gone: the group, if any is left, is its own
    started = booted + ticks / os.sysconf("SC_CLK_TCK")
    return started <= written + 1.0 and os.getpgid(pid) == pid  # btime: whole seconds
