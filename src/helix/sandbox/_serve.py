"""Long-lived programs in a sandbox tier: started with pipes, ended with their group.

A command (``Sandbox.run``) is started, waited for and killed in one call. An MCP
server lives as long as the run that uses it and talks over its stdin and stdout, so
``Sandbox.serve`` hands back the running process instead; this module starts it (in
its own session, as commands are) and ends it: stdin closed first, as the MCP
specification asks, then, if it has not exited within a moment, its whole process
group killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path

from helix._util import close_fully

LINE_LIMIT = 8 << 20
"""The longest line a server may write (a JSON-RPC message): 8 MiB; past it, reading fails."""
STOP_GRACE_S = 2.0
"""How long a server may take to exit once its stdin is closed before it is killed."""


@contextlib.asynccontextmanager
async def running(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    preexec: Callable[[], None] | None = None,
    pass_fds: Sequence[int] = (),
) -> AsyncIterator[asyncio.subprocess.Process]:
    """Run ``argv`` with piped stdin, stdout and stderr until the context is left."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=preexec,
        pass_fds=tuple(pass_fds),
        limit=LINE_LIMIT,
    )
    try:
        yield process
    finally:
        # To its end: a cancelled caller must not leave the server running.
        await close_fully(_stop(process))


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.stdin is not None and not process.stdin.is_closing():
        process.stdin.close()
    if process.returncode is None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), STOP_GRACE_S)
    # The server leads its own session: its pid is the group of all it started.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), STOP_GRACE_S)
    # Read what is left to the end, so the pipes close (a pipe read to its end is closed).
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(TimeoutError, ValueError, OSError):
                await asyncio.wait_for(stream.read(), STOP_GRACE_S)
