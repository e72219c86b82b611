"""A podman box: one container kept running for a live world, commands exec'd into it.

The container (``PodmanSandbox.open_box``) has the one-shot commands' profile; its init
(``--init``: podman's ``catatonit``) waits on ``sleep infinity`` (behind the proxy's
bridge when the run may reach hosts), and adopts whatever the commands leave running.
Each ``exec`` is a ``podman exec`` in the world directory, under ``setsid -w`` and a
small shell that writes its session's id into the box's state folder first: a timeout
or a cancellation kills that session inside the box (by another exec of ``kill``), not
only the client on the host. A process a command started in a session of its own
(``setsid cmd &``) keeps running until ``close``, which kills the container and
everything in it. Checkpoints are not supported (``NO_CHECKPOINT`` in ``_podman``).
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from helix._util import close_fully
from helix.errors import ConfigError

from ._box import Box
from ._podman_home import PodmanHome
from ._sandbox import DEFAULT_MAX_OUTPUT, CommandResult
from ._serve import LINE_LIMIT
from ._supervise import Launch, _supervise

BOX_STATE = "/tmp/.helix-box"
"""The box's state folder: a tmpfs of its own inside the box, private to its user."""
BOX_STATE_BYTES = 64 << 20
_EXEC_WRAPPER = 'f=$1; shift; echo $$ > "$f"; "$@"; code=$?; rm -f "$f"; exit $code'
"""Started under ``setsid -w``: writes its pid (the session's, the group to kill) to
``$1``, runs the command as its child, and removes the note when it ends."""
_KILL_SESSION = (
    'for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$1" ] && break; sleep 0.1; done; '
    'p=$(cat "$1" 2>/dev/null) && kill -9 "-$p" 2>/dev/null; rm -f "$1"'
)
"""Kills the session noted in ``$1`` (waiting up to a second for a command that has not
yet written its note: its client was killed as it started)."""


async def podman_output(
    argv: Sequence[str], env: Mapping[str, str], timeout_s: float
) -> tuple[int | None, str]:
    """Run a podman client to its end: its exit code (``None``: killed) and output."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(), timeout_s)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await close_fully(process.wait())  # reaped, even if cancelled again
        raise
    return process.returncode, out.decode(errors="replace")


async def remove(home: PodmanHome, env: Mapping[str, str], name: str) -> None:
    """Kill a container and everything in it, and remove it (nothing if it is gone).

    Checked, and tried again: a removal racing ``conmon``'s own clean-up of the
    container it just killed can leave its record behind.
    """
    with contextlib.suppress(OSError, TimeoutError):
        for _ in range(3):
            await podman_output([home.binary, "rm", "--force", "--time", "0", name], env, 60)
            exists, _ = await podman_output([home.binary, "container", "exists", name], env, 60)
            if exists != 0:
                return


class PodmanBox(Box):
    """A running podman container that commands are exec'd into (see the module)."""

    tier = "podman"
    state_dir = BOX_STATE
    can_checkpoint = False

    def __init__(
        self,
        home: PodmanHome,
        env: Mapping[str, str],
        name: str,
        world: Path,
        stack: contextlib.AsyncExitStack,
    ) -> None:
        self.home = home
        self.name = name
        """The container's name (``podman ps`` with Helix's configuration shows it)."""
        self.world = world
        self._env = dict(env)
        self._stack = stack
        self._closed = False

    def _exec_argv(self, argv: Sequence[str], note: str, *, interactive: bool) -> list[str]:
        if self._closed:
            raise ConfigError(f"the podman box {self.name} is closed")
        args = [self.home.binary, "exec", *(["--interactive"] if interactive else [])]
        args += ["--workdir", str(self.world), self.name]
        return [*args, "setsid", "-w", "/bin/sh", "-c", _EXEC_WRAPPER, "helix-exec", note, *argv]

    @staticmethod
    def _note() -> str:
        return f"{BOX_STATE}/exec-{uuid.uuid4().hex[:16]}.pid"

    async def exec(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float,
        max_output: int = DEFAULT_MAX_OUTPUT,
    ) -> CommandResult:
        started = time.monotonic()
        note = self._note()
        launch = Launch(self._exec_argv(argv, note, interactive=False), self._env, None)
        try:
            result = await _supervise(launch, self.world, timeout_s, max_output)
        except BaseException:
            await close_fully(self._kill_session(note))
            raise
        if result.timed_out:
            await close_fully(self._kill_session(note))
        return replace(result, duration_ms=(time.monotonic() - started) * 1000)

    async def _kill_session(self, note: str) -> None:
        """Kill, inside the box, the session an exec wrote down in ``note``."""
        if self._closed:
            return  # the container, and everything in it, is gone
        argv = [self.home.binary, "exec", self.name, "/bin/sh", "-c", _KILL_SESSION, "kill", note]
        with contextlib.suppress(OSError, TimeoutError):
            await podman_output(argv, self._env, 30)

    def stream(
        self, argv: Sequence[str]
    ) -> contextlib.AbstractAsyncContextManager[asyncio.subprocess.Process]:
        return self._stream(list(argv))

    @contextlib.asynccontextmanager
    async def _stream(self, argv: list[str]) -> AsyncIterator[asyncio.subprocess.Process]:
        note = self._note()
        process = await asyncio.create_subprocess_exec(
            *self._exec_argv(argv, note, interactive=True),
            cwd=self.world,
            env=self._env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            limit=LINE_LIMIT,
        )
        try:
            yield process
        finally:
            await close_fully(self._end(process, note))

    async def _end(self, process: asyncio.subprocess.Process, note: str) -> None:
        await self._kill_session(note)
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await close_fully(remove(self.home, self._env, self.name))
        finally:
            await self._stack.aclose()
