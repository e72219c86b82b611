"""A live world in one gVisor sandbox: commands ``runsc exec``'d in, checkpoint, restore.

The box's first process is a tiny reaper (it reaps what commands leave behind, as an
init does); every command is a ``runsc exec`` of a process spec as hardened as the
one-shot tier's, in the world, as its own session. A timeout or a cancellation kills
that session inside the box (``kill -KILL -PGID`` executed in it); what a command
leaves running in the background lives on until ``close``. ``state_dir`` is in the
box's ``/tmp``, which lives in its memory and so is checkpointed with it.

``checkpoint`` writes the whole sandbox (memory, processes, ``/tmp``) with ``runsc
checkpoint`` into an image directory, which may be moved anywhere: ``open_box(restore=)``
writes a fresh bundle for the same world and ``runsc restore``s it. A run's egress
is a Unix socket bound into the box, which a checkpoint cannot carry: the restored box
is given a new channel bound at the same place, and the bridge inside (a process of
the box, restored with it) connects to it from the next connection on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import subprocess
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from helix._util import close_fully

from ._box import Box, CheckpointImage
from ._bridge import BRIDGE_PORT
from ._egress import EgressHook
from ._gvisor_spec import BRIDGE, PROXY_SOCKET, box_user, process
from ._sandbox import DEFAULT_MAX_OUTPUT, DEFAULT_TMP_BYTES, CommandResult
from ._supervise import _DRAIN_GRACE_S, OutputPipe, _Capture, decode_capped

if TYPE_CHECKING:
    from ._gvisor import GvisorSandbox

STATE_DIR = "/tmp/.helix-box"
_REAPER = (
    "import os, signal\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})\n"
    "while True:\n"
    "    signal.sigwait({signal.SIGCHLD})\n"
    "    try:\n"
    "        while os.waitpid(-1, os.WNOHANG)[0]:\n"
    "            pass\n"
    "    except ChildProcessError:\n"
    "        pass\n"
)
"""The box's first process: reaps every orphan (they are re-parented to it)."""
_RUNSC_TIMEOUT_S = 60.0


class GvisorBox(Box):
    """One running gVisor sandbox for a world (open it with ``GvisorSandbox.open_box``)."""

    tier = "gvisor"
    state_dir = STATE_DIR
    can_checkpoint = True

    def __init__(self, sandbox: GvisorSandbox, world: Path, name: str, bundle: Path) -> None:
        self._sandbox = sandbox
        self.world = world
        self.name = name
        self._bundle = bundle
        self._env: dict[str, str] = {}
        self._channel = contextlib.AsyncExitStack()
        self._closed = False
        self._calls = 0

    @classmethod
    async def open(
        cls,
        sandbox: GvisorSandbox,
        *,
        cwd: Path,
        egress: EgressHook | None,
        tmp_bytes: int | None,
        restore: Path | None,
    ) -> GvisorBox:
        world = _world(cwd)
        channel = contextlib.AsyncExitStack()
        socket_path = await channel.enter_async_context(sandbox.proxy_socket(egress))
        tmp = DEFAULT_TMP_BYTES if tmp_bytes is None else tmp_bytes
        args = ["/usr/bin/python3", "-S", "-I", "-c", _REAPER]
        name, bundle = sandbox.bundle(args, world, tmp_bytes=tmp, proxy=socket_path)
        box = cls(sandbox, world, name, bundle)
        box._channel = channel
        box._env = json_env(bundle)
        try:
            if restore is None:
                await box._runsc("run", "-detach", "--bundle", str(bundle), name)
                made = await box.exec(["/bin/mkdir", "-p", "-m", "700", STATE_DIR], timeout_s=30)
                if made.exit_code != 0:
                    raise RuntimeError(f"the gvisor box could not make its state: {made.output}")
                if socket_path is not None:
                    await box._start_bridge()
            else:
                image = str(restore)
                await box._runsc("restore", f"--image-path={image}", "--bundle", str(bundle),
                                 "-detach", name)  # fmt: skip
        except BaseException:
            await box.close()
            raise
        return box

    async def _start_bridge(self) -> None:
        """The egress bridge, a process of the box: ``127.0.0.1:3128`` to the proxy.

        Started in the background by a command (``runsc exec -detach`` refuses a
        process file in this build), it outlives it, as a command's background does.
        """
        bridge = shlex.join(["/usr/bin/python3", "-S", "-I", BRIDGE, str(BRIDGE_PORT)])
        script = f"{bridge} {PROXY_SOCKET} /bin/sleep infinity </dev/null >/dev/null 2>&1 &"
        port = f":{BRIDGE_PORT:04X} "  # listening, as /proc/net/tcp shows it
        script += f" for i in $(seq 200); do grep -q '{port}' /proc/net/tcp && exit 0; sleep 0.05;"
        script += " done; exit 1"
        started = await self.exec(["/bin/sh", "-c", script], timeout_s=_RUNSC_TIMEOUT_S)
        if started.exit_code != 0:
            raise RuntimeError(f"the gvisor box could not start its egress bridge: {started}")

    def _process_file(self, argv: Sequence[str]) -> Path:
        self._calls += 1
        path = self._bundle / f"process-{self._calls}.json"
        user = box_user(self.world)
        limits = self._sandbox._limits
        path.write_text(json.dumps(process(argv, self._env, cwd=self.world, user=user,
                                           limits=limits)))  # fmt: skip
        return path

    async def _runsc(self, *args: str) -> str:
        """Run ``runsc`` to its end; a failure raises ``RuntimeError`` with what it said.

        Its output goes to a file, not a pipe: a detached container inherits it, and a
        pipe would stay open for as long as the box lives.
        """
        log = self._bundle / "runsc.log"
        with log.open("wb") as sink:
            process = await asyncio.create_subprocess_exec(
                *self._sandbox.runsc_argv(),
                *args,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=sink,
            )
        try:
            await asyncio.wait_for(process.wait(), _RUNSC_TIMEOUT_S)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            raise
        text = log.read_text(errors="replace").strip() if log.exists() else ""
        if process.returncode != 0:
            raise RuntimeError(f"runsc {args[0]} failed ({process.returncode}): {text[-500:]}")
        return text

    def _require_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"the gvisor box {self.name} is closed")

    async def exec(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float,
        max_output: int = DEFAULT_MAX_OUTPUT,
    ) -> CommandResult:
        self._require_open()
        started = time.monotonic()
        capture = _Capture(max_output)
        with OutputPipe() as pipe:
            async with self._exec(argv, stdout=pipe.stdout, stderr=pipe.stderr) as (
                client,
                pid_file,
            ):
                output, stream = await pipe.started()
                try:
                    timed_out = await self._watch(client, pid_file, stream, capture, timeout_s)
                finally:
                    output.close()
        return CommandResult(
            exit_code=None if timed_out else client.returncode,
            output=decode_capped(bytes(capture.kept), capture.dropped),
            truncated=capture.dropped > 0,
            timed_out=timed_out,
            duration_ms=(time.monotonic() - started) * 1000,
        )

    async def _watch(
        self,
        client: asyncio.subprocess.Process,
        pid_file: Path,
        stream: asyncio.StreamReader,
        capture: _Capture,
        timeout_s: float,
    ) -> bool:
        """Read an exec'd command's output until it ends; whether it timed out."""
        timed_out = False
        async with asyncio.TaskGroup() as group:  # leaving it cancels the reader
            reader = group.create_task(capture.read(stream))
            try:
                await asyncio.wait_for(client.wait(), timeout_s)
            except TimeoutError:
                timed_out = True
                await self._kill_session(pid_file)
            done, _ = await asyncio.wait({reader}, timeout=_DRAIN_GRACE_S)
            if not done:
                reader.cancel()  # a background process holds the output: keep what came
        return timed_out

    @contextlib.asynccontextmanager
    async def _exec(
        self,
        argv: Sequence[str],
        *,
        stdin: int = subprocess.DEVNULL,
        stdout: int = subprocess.PIPE,
        stderr: int = subprocess.DEVNULL,
    ) -> AsyncIterator[tuple[asyncio.subprocess.Process, Path]]:
        """A ``runsc exec`` client of ``argv``; leaving kills the session inside if it lives.

        A command's stdout and stderr are the two ends ``OutputPipe`` makes, never one
        descriptor twice (its docstring says why).
        """
        spec = self._process_file(argv)
        pid_file = spec.with_suffix(".pid")
        client = await asyncio.create_subprocess_exec(
            *self._sandbox.runsc_argv(),
            "exec",
            "--process",
            str(spec),
            "--internal-pid-file",
            str(pid_file),
            self.name,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        try:
            yield client, pid_file
        finally:
            if client.returncode is None:
                await close_fully(self._end(client, pid_file))
            spec.unlink(missing_ok=True)
            pid_file.unlink(missing_ok=True)

    async def _end(self, client: asyncio.subprocess.Process, pid_file: Path) -> None:
        await self._kill_session(pid_file)
        with contextlib.suppress(ProcessLookupError):
            client.kill()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(client.wait(), 5)

    async def _kill_session(self, pid_file: Path) -> None:
        """Kill the exec'd command's session (its group) inside the box."""
        for _ in range(100):  # runsc writes the file once the process runs: moments
            pgid = _read_pid(pid_file)
            if pgid is not None:
                break
            await asyncio.sleep(0.02)
        else:
            return
        spec = self._process_file(["/bin/kill", "-KILL", "--", f"-{pgid}"])
        try:
            with contextlib.suppress(RuntimeError, TimeoutError):
                await self._runsc("exec", "--process", str(spec), self.name)
        finally:
            spec.unlink(missing_ok=True)

    def stream(
        self, argv: Sequence[str]
    ) -> contextlib.AbstractAsyncContextManager[asyncio.subprocess.Process]:
        self._require_open()
        return self._stream(list(argv))

    @contextlib.asynccontextmanager
    async def _stream(self, argv: list[str]) -> AsyncIterator[asyncio.subprocess.Process]:
        async with self._exec(argv, stdin=subprocess.PIPE) as (client, _pid_file):
            yield client

    async def checkpoint(self, image: Path) -> CheckpointImage:
        """``runsc checkpoint`` into ``image`` (an empty directory); the box is then gone."""
        self._require_open()
        _require_empty(image)
        started = time.monotonic()
        await self._runsc("checkpoint", f"--image-path={image}", self.name)
        seconds = time.monotonic() - started
        await self.close()
        size = _size(image)
        return CheckpointImage(self.tier, image, size, seconds)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self._sandbox.remove(self.name)
        finally:
            await self._channel.aclose()


def _world(cwd: Path) -> Path:
    world = Path(os.path.abspath(cwd))
    if not world.is_dir():
        raise FileNotFoundError(f"no such directory: {world}")
    return world


def _read_pid(path: Path) -> int | None:
    """The pid ``runsc`` wrote to ``path``, or ``None`` while it has not yet."""
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return None


def _require_empty(image: Path) -> None:
    image.mkdir(parents=True, exist_ok=True)
    if any(image.iterdir()):
        raise FileExistsError(f"the checkpoint image directory is not empty: {image}")


def _size(image: Path) -> int:
    """The bytes of the files in ``image`` (symlinks not followed)."""
    return sum(p.lstat().st_size for p in image.rglob("*") if p.is_file() and not p.is_symlink())


def json_env(bundle: Path) -> dict[str, str]:
    """The environment written into a bundle's spec (the box's commands get the same)."""
    config = json.loads((bundle / "config.json").read_text())
    return dict(item.split("=", 1) for item in config["process"]["env"])
