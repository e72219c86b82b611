"""A microVM box: one QEMU ``microvm`` kept running, commands sent to its guest agent.

The host end of the agent's virtio-serial port (a Unix socket QEMU listens on, in a
private folder of the box's) is ``_microvm_agent.Agent``. ``exec`` opens a channel for one command
and waits for its end; a timeout or a cancellation sends ``K`` (the guest kills the
command's process group) and waits a moment for the end. ``stream`` opens a channel
whose stdin and stdout are a pipe pair, shaped as a process. ``close`` kills QEMU
(the whole guest with it) and removes the box's folder. ``checkpoint`` writes the
guest into an image (``MEMORY``, QEMU's migration stream; ``BOX_FILE``, ``Saved``: the
machine's shape and the shares' state) and closes the box; ``MicrovmSandbox.open_box``
restores one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import stat
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from helix._util import close_fully
from helix.errors import ConfigError

from ._box import Box, CheckpointImage
from ._microvm_agent import Agent, _Channel
from ._microvm_guest import BOX_STATE
from ._microvm_qmp import Qmp, until_migrated
from ._sandbox import DEFAULT_MAX_OUTPUT, CommandResult
from ._supervise import decode_capped

if TYPE_CHECKING:
    from ._microvm_shares import Shares

MEMORY, BOX_FILE = "memory", "box.json"
"""A checkpoint image's two files."""
_FORMAT = 1
_MAX_BOX_FILE = 16 << 20
_CHECKPOINT_TIMEOUT_S = 600.0
"""How long freezing and writing out a guest may take (its memory, under emulation)."""


@dataclass(frozen=True, slots=True)
class Saved:
    """What a checkpoint keeps beside the guest's memory (``BOX_FILE``)."""

    shape: str
    """The machine's shape (``_microvm_template.template_key``)."""
    shares: dict[str, Any]
    """``Shares.dump()``: the guest's fids on its ``/usr`` and world."""

    def write(self, image: Path) -> None:
        text = json.dumps({"format": _FORMAT, "shape": self.shape, "shares": self.shares})
        (image / BOX_FILE).write_text(text)

    @classmethod
    def read(cls, image: Path) -> Saved:
        """The image's ``BOX_FILE``, checked (it was on disk: anything could be there)."""
        try:
            descriptor = os.open(image / BOX_FILE, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(descriptor, "rb") as handle:
                text = handle.read(_MAX_BOX_FILE + 1)
            memory = os.lstat(image / MEMORY)
        except OSError as error:
            raise ConfigError(f"not a microvm checkpoint image: {image}: {error}") from None
        if len(text) > _MAX_BOX_FILE or not stat.S_ISREG(memory.st_mode):
            raise ConfigError(f"not a microvm checkpoint image: {image}")
        try:
            found = json.loads(text)
        except ValueError:
            found = None
        if (
            not isinstance(found, dict)
            or found.get("format") != _FORMAT
            or not isinstance(found.get("shape"), str)
            or not isinstance(found.get("shares"), dict)
        ):
            raise ConfigError(f"the microvm checkpoint's {BOX_FILE} is damaged: {image}")
        return cls(found["shape"], found["shares"])


_KILL_WAIT_S = 10.0
"""How long a killed command's end is waited for before the box is judged broken."""


class _Stdin:
    """A stream channel's stdin, shaped as the ``StreamWriter`` a process has."""

    def __init__(self, agent: Agent, number: int) -> None:
        self._agent, self._number, self._closed = agent, number, False

    def write(self, data: bytes) -> None:
        if not self._closed and data:
            self._agent.send(b"I", self._number, bytes(data))

    async def drain(self) -> None:
        await self._agent.drain()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            with contextlib.suppress(ConfigError):
                self._agent.send(b"E", self._number)

    def is_closing(self) -> bool:
        return self._closed

    async def wait_closed(self) -> None:
        await self._agent.drain()


class _StreamProcess:
    """A stream channel shaped as an ``asyncio.subprocess.Process`` (stdin, stdout, wait)."""

    def __init__(self, agent: Agent, number: int, channel: _Channel) -> None:
        self.stdin = _Stdin(agent, number)
        self.stdout = channel.reader
        self.stderr = None
        self.pid = -1
        self.returncode: int | None = None
        self._agent, self._number, self._channel = agent, number, channel

    async def wait(self) -> int:
        code, _ = await self._channel.ended
        self.returncode = -9 if code is None else code
        return self.returncode

    def kill(self) -> None:
        with contextlib.suppress(ConfigError):
            self._agent.send(b"K", self._number)

    terminate = kill


class MicrovmBox(Box):
    """A running microVM that commands are sent into (see the module)."""

    tier = "microvm"
    state_dir = BOX_STATE
    can_checkpoint = True

    def __init__(
        self,
        qemu: asyncio.subprocess.Process,
        agent: Agent,
        world: Path,
        folder: Path,
        stack: contextlib.AsyncExitStack,
        console: asyncio.Task[bytes],
        shares: Shares,
        shape: str,
    ) -> None:
        self.qemu = qemu
        """The QEMU process (its pid names the box on the host)."""
        self.world = world
        self.folder = folder
        """The box's private host folder (the agent's and QMP's sockets)."""
        self._agent = agent
        self._stack = stack
        self._console = console
        self._shares = shares
        self._shape = shape
        self._closed = False

    def _check(self) -> None:
        if self._closed:
            raise ConfigError("the microvm box is closed")

    async def exec(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float,
        max_output: int = DEFAULT_MAX_OUTPUT,
    ) -> CommandResult:
        self._check()
        started = time.monotonic()
        cap = max(max_output, 0)
        number, channel = self._agent.open({"argv": list(argv), "mode": "exec", "max": cap}, cap)
        timed_out = False
        try:
            try:
                code, dropped = await asyncio.wait_for(asyncio.shield(channel.ended), timeout_s)
            except TimeoutError:
                timed_out = True
                await self._kill(number, channel)
                code, dropped = None, 0
        except BaseException:
            await close_fully(self._kill(number, channel))
            raise
        if code is None and not timed_out:
            raise ConfigError(f"the microvm box is broken: {self._agent.broken}")
        more = channel.dropped + dropped
        return CommandResult(
            exit_code=None if timed_out else code,
            output=decode_capped(bytes(channel.kept), more),
            truncated=more > 0,
            timed_out=timed_out,
            duration_ms=(time.monotonic() - started) * 1000,
        )

    async def _kill(self, number: int, channel: _Channel) -> None:
        """Kill a channel's process group in the guest and wait (a moment) for its end."""
        with contextlib.suppress(ConfigError, ConnectionError):
            self._agent.send(b"K", number)
            await self._agent.drain()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(channel.ended), _KILL_WAIT_S)
        self._agent.forget(number)

    def stream(
        self, argv: Sequence[str]
    ) -> contextlib.AbstractAsyncContextManager[asyncio.subprocess.Process]:
        return self._stream(list(argv))

    @contextlib.asynccontextmanager
    async def _stream(self, argv: list[str]) -> AsyncIterator[asyncio.subprocess.Process]:
        self._check()
        number, channel = self._agent.open({"argv": argv, "mode": "stream"}, None)
        process = _StreamProcess(self._agent, number, channel)
        try:
            yield cast(asyncio.subprocess.Process, process)
        finally:
            await close_fully(self._kill(number, channel))

    async def checkpoint(self, image: Path) -> CheckpointImage:
        """Freeze the box's commands, write the guest into ``image``; the box is then gone.

        ``image`` must be an empty directory (made if missing). On a failure the box is
        closed too (a half-frozen guest is not handed back).
        """
        self._check()
        await asyncio.to_thread(_require_empty, image)
        started = time.monotonic()
        try:
            async with asyncio.timeout(_CHECKPOINT_TIMEOUT_S):
                frozen = await self._agent.ask(b"F")
                if frozen.get("error"):
                    raise ConfigError(f"the microvm cannot checkpoint: {frozen['error']}")
                await self._shares.settled(timeout_s=30)
                await self._migrate(image / MEMORY)
            Saved(self._shape, self._shares.dump()).write(image)
        except TimeoutError:
            raise ConfigError("the microvm's checkpoint did not finish in time") from None
        finally:
            await self.close()
        seconds = time.monotonic() - started
        size = await asyncio.to_thread(lambda: sum(p.stat().st_size for p in image.iterdir()))
        return CheckpointImage(self.tier, image, size, seconds)

    async def _migrate(self, memory: Path) -> None:
        """Stop the guest and have QEMU write it out over a Unix socket into ``memory``."""
        socket_path = self.folder / "migrate.sock"
        written: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def take(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                with open(memory, "xb") as out:  # noqa: ASYNC230 - the box is stopped
                    while chunk := await reader.read(1 << 20):
                        out.write(chunk)
                if not written.done():
                    written.set_result(None)
            except OSError as error:
                if not written.done():
                    written.set_exception(error)
            finally:
                writer.close()

        server = await asyncio.start_unix_server(take, path=str(socket_path))
        qmp = await Qmp.connect(self.folder / "qmp.sock")
        try:
            await qmp.run("stop")
            await self._shares.settled(timeout_s=30)  # nothing came in as it stopped
            await qmp.run("migrate", uri=f"unix:{socket_path}")
            status = await until_migrated(qmp, _CHECKPOINT_TIMEOUT_S)
            if status != "completed":
                raise ConfigError(f"the microvm's migration ended {status}")
            await written
        finally:
            qmp.close()
            server.close()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await close_fully(self._stop())
        finally:
            await close_fully(self._stack.aclose())

    async def _stop(self) -> None:
        await self._agent.close()
        await stop_qemu(self.qemu)
        await self._shares.close()
        await end_console(self._console)
        shutil.rmtree(self.folder, ignore_errors=True)


def _require_empty(image: Path) -> None:
    image.mkdir(parents=True, exist_ok=True)
    if any(image.iterdir()):
        raise FileExistsError(f"the checkpoint image directory is not empty: {image}")


async def end_console(console: asyncio.Task[bytes]) -> None:
    """Let the console's reader reach its end once QEMU is dead (its pipe then closes)."""
    await asyncio.wait({console}, timeout=5)
    console.cancel()
    with contextlib.suppress(BaseException):
        await console


async def stop_qemu(qemu: asyncio.subprocess.Process) -> None:
    """Kill QEMU (and with it the whole guest) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        qemu.kill()
    await qemu.wait()
