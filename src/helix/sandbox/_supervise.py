"""Supervising one command: start it in its own session, capture its output, kill its group.

Shared by the process tier (and the tiers built on it) and the process tier's box.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ._sandbox import CommandResult

_CHUNK = 64 * 1024
_DRAIN_GRACE_S = 1.0
"""How long to wait for the output pipe to close once every process in the group
is dead; only a process that left the group can hold it open longer."""


def truncation_marker(more_bytes: int) -> str:
    """The line appended to output that was cut: ``[output truncated: N more bytes]``."""
    return f"[output truncated: {more_bytes} more bytes]"


def decode_capped(data: bytes, more_bytes: int) -> str:
    """Decode ``data`` as UTF-8, adding the truncation marker when ``more_bytes > 0``.

    A multi-byte character split by the cap is dropped rather than shown as ``�``.
    """
    if more_bytes <= 0:
        return data.decode("utf-8", errors="replace")
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data, final=False)
    separator = "" if not text or text.endswith("\n") else "\n"
    return f"{text}{separator}{truncation_marker(more_bytes)}"


def _require_directory(cwd: Path) -> None:
    # One stat of a local path: cheaper inline than a thread hop. Wrappers such as
    # bwrap would otherwise report a missing world as the command's own failure.
    if not cwd.is_dir():
        raise FileNotFoundError(f"no such directory: {cwd}")


class OutputPipe:
    """A pipe for a command's output: a write end each for its stdout and its stderr.

    The write ends are two open file descriptions of the one pipe, not one duplicated:
    gVisor's sentry takes the blocking mode of each stdio descriptor it is handed from
    its host file description, then makes that description non-blocking for itself. One
    description shared by stdout and stderr left the second of them non-blocking inside
    the sandbox, so a command writing to a full pipe failed (``tr: write error: Resource
    temporarily unavailable``) whenever Helix read its output more slowly than it wrote.

    Once the command has started, ``started`` closes Helix's write ends (so the reader
    sees the end once the command's are closed) and gives the read end as a stream.
    Leaving the context closes whatever was not handed on.
    """

    def __init__(self) -> None:
        self._read_end, self.stdout = os.pipe()
        self.stderr = -1
        try:
            self.stderr = os.open(f"/proc/self/fd/{self.stdout}", os.O_WRONLY | os.O_CLOEXEC)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> OutputPipe:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    async def started(self) -> tuple[asyncio.ReadTransport, asyncio.StreamReader]:
        """Close the write ends; the read end as a stream (its transport closes it)."""
        _close(self.stdout, self.stderr)
        self.stdout = self.stderr = -1
        pipe = os.fdopen(self._read_end, "rb", buffering=0)  # it owns the read end now
        self._read_end = -1
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_CHUNK, loop=loop)
        try:
            transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe
            )
        except BaseException:
            pipe.close()
            raise
        return transport, reader

    def close(self) -> None:
        """Close what was not handed on (a second call closes nothing)."""
        _close(self._read_end, self.stdout, self.stderr)
        self._read_end = self.stdout = self.stderr = -1


def _close(*descriptors: int) -> None:
    for descriptor in descriptors:
        if descriptor >= 0:
            os.close(descriptor)


@dataclass(frozen=True, slots=True)
class Launch:
    """A prepared command: what to execute, with which environment and child setup."""

    argv: list[str]
    env: dict[str, str]
    preexec: Callable[[], None] | None
    """Run in the child before it executes; ``None`` lets ``subprocess`` use ``vfork``."""
    pass_fds: tuple[int, ...] = ()
    finish: Callable[[CommandResult], CommandResult] | None = None
    """Completes the result once the command has ended (what the tier saw of it)."""


async def _supervise(launch: Launch, cwd: Path, timeout_s: float, max_output: int) -> CommandResult:
    """Start ``launch`` in a new session, capture its output, kill its group at the end."""
    with OutputPipe() as pipe:
        transport, protocol = await _spawn(launch, cwd, pipe.stdout, pipe.stderr)
        try:
            output, stream = await pipe.started()
        except BaseException:
            _kill_group(transport.get_pid())
            transport.close()
            raise
    try:
        return await _watch(transport, protocol, stream, timeout_s, max_output)
    finally:
        output.close()


async def _spawn(
    launch: Launch, cwd: Path, stdout: int, stderr: int
) -> tuple[asyncio.SubprocessTransport, _Protocol]:
    loop = asyncio.get_running_loop()
    spawn = asyncio.ensure_future(
        loop.subprocess_exec(
            lambda: _Protocol(loop),
            *launch.argv,
            cwd=cwd,
            env=launch.env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=launch.preexec,
            pass_fds=launch.pass_fds,
        )
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # Cancelled while the transport was being set up: the command may already
        # run and have started others. asyncio would kill only the shell; kill its group.
        with contextlib.suppress(BaseException):
            started, _ = await spawn
            _kill_group(started.get_pid())
            started.close()
        raise


async def _watch(
    transport: asyncio.SubprocessTransport,
    protocol: _Protocol,
    stream: asyncio.StreamReader,
    timeout_s: float,
    max_output: int,
) -> CommandResult:
    pgid = transport.get_pid()
    capture = _Capture(max_output)
    reader = asyncio.create_task(capture.read(stream))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(asyncio.shield(protocol.exited), timeout_s)
        except TimeoutError:
            timed_out = True
        _kill_group(pgid)
        await protocol.exited
        # Every writer in the group is dead; only an escaped process keeps the pipe.
        done, _ = await asyncio.wait({reader}, timeout=_DRAIN_GRACE_S)
        if not done:
            reader.cancel()
    except BaseException:
        # Cancellation (or anything unexpected): leave no process behind.
        _kill_group(pgid)
        reader.cancel()
        with contextlib.suppress(BaseException):  # a second cancel must not skip this
            await asyncio.wait_for(asyncio.shield(protocol.exited), 5)
        raise
    finally:
        transport.close()
    return CommandResult(
        exit_code=None if timed_out else transport.get_returncode(),
        output=decode_capped(bytes(capture.kept), capture.dropped),
        truncated=capture.dropped > 0,
        timed_out=timed_out,
        duration_ms=0.0,
    )


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The stream protocol of ``create_subprocess_exec``, plus a future set on exit.

    On Python 3.11, ``Process.wait()`` returns only once the output pipe is closed
    too, so a background child holding it would hide the shell's exit until the
    timeout. ``exited`` is set as soon as the shell itself exits.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=_CHUNK, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


class _Capture:
    """Keeps the first ``limit`` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 0)
        self.kept = bytearray()
        self.dropped = 0

    async def read(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            room = self.limit - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            self.dropped += max(len(chunk) - max(room, 0), 0)


def _kill_group(pgid: int) -> None:
    # The shell leads its own session, so its pid is the group id of all it started.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
