"""The host end of a microVM's guest agent: frames in and out, channels by number.

The agent's virtio-serial port (a Unix socket QEMU listens on) carries the framed
protocol of ``_microvm_guest``; one task reads it and hands each channel its output and
its end. Everything the guest sends is treated as hostile: frames are bounded, a
command's output is capped here again, a stream's unread output is bounded, and the
guest may hold at most ``_MAX_BRIDGES`` connections to the proxy at once. Connections
a command makes to the proxy port inside (``BRIDGE_PORT``, when the box has egress)
come as channels the guest numbers from ``BRIDGED``; each is carried to the proxy's
Unix socket on the host, which decides it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
from pathlib import Path
from typing import Any, Literal

from helix.errors import ConfigError

from ._microvm_guest import FRAME, MAX_FRAME, WAITING
from ._serve import LINE_LIMIT

_HEAD = struct.calcsize(FRAME)
_STREAM_BUFFER = 16 << 20
"""A stream's output not yet read, at most; past it the stream is killed."""


class _Channel:
    """One command or stream in the guest, as the host sees it."""

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.dropped = 0
        self.reader = asyncio.StreamReader(limit=LINE_LIMIT) if cap is None else None
        self.ended: asyncio.Future[tuple[int | None, int]] = (
            asyncio.get_running_loop().create_future()
        )

    def data(self, chunk: bytes) -> bool:
        """Take output; ``False`` when a stream's unread output is past its bound."""
        if self.reader is not None:
            self.reader.feed_data(chunk)
            return len(self.reader._buffer) <= _STREAM_BUFFER  # type: ignore[attr-defined]
        assert self.cap is not None
        room = self.cap - len(self.kept)
        self.kept += chunk[: max(room, 0)]
        self.dropped += max(len(chunk) - max(room, 0), 0)
        return True

    def end(self, code: int | None, dropped: int) -> None:
        if self.reader is not None:
            self.reader.feed_eof()
        if not self.ended.done():
            self.ended.set_result((code, dropped))


BRIDGED = 1 << 31
"""Channels the guest opens (connections to its proxy port) are numbered from here."""
_MAX_BRIDGES = 256


class _Bridge:
    """The host end of one connection the guest made to its proxy port: the proxy's socket."""

    def __init__(self, agent: Agent, number: int, proxy: Path) -> None:
        self._agent, self._number = agent, number
        self._writer: asyncio.StreamWriter | None = None
        self._early: list[bytes] = []
        self._guest_done = self._proxy_done = False
        self.task = asyncio.create_task(self._run(proxy))

    async def _run(self, proxy: Path) -> None:
        try:
            reader, self._writer = await asyncio.open_unix_connection(str(proxy))
            for data in self._early:
                self._writer.write(data)
            if self._guest_done:
                self._writer.write_eof()
            while data := await reader.read(65536):
                self._agent.send(b"I", self._number, data)
                await self._agent.drain()
            self._agent.send(b"E", self._number)
            self._proxy_done = True
            self._settle()
        except (OSError, ConfigError):
            with contextlib.suppress(ConfigError):
                self._agent.send(b"Z", self._number)
            self.close()

    def data(self, body: bytes) -> None:
        if self._writer is None:
            self._early.append(body)
        elif not self._writer.is_closing():
            self._writer.write(body)

    def end(self) -> None:
        self._guest_done = True
        if self._writer is not None and self._writer.can_write_eof():
            with contextlib.suppress(OSError):
                self._writer.write_eof()
        self._settle()

    def _settle(self) -> None:
        if self._guest_done and self._proxy_done:
            self.close()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._agent.forget_bridge(self._number)


Start = Literal["boot", "template", "resumed"]
"""How the guest behind a port came to be: booting afresh (its init says when it waits,
then the agent says hello), loaded from a template (its agent runs, waiting for its
setup), or restored from a checkpoint (its agent runs, set up, its commands frozen: it
is sent nothing until the host speaks)."""


class Agent:
    """The host end of the guest agent's port."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, start: Start
    ) -> None:
        self._reader, self._writer = reader, writer
        self._channels: dict[int, _Channel] = {}
        self._next = 1
        loop = asyncio.get_running_loop()
        self.hello: asyncio.Future[None] = loop.create_future()
        """Set when the agent runs (after the init's go-ahead)."""
        self.ready: asyncio.Future[dict[str, Any]] = loop.create_future()
        """Set with the agent's answer to the setup."""
        self._answers: dict[bytes, asyncio.Future[dict[str, Any]]] = {}
        if start != "boot":  # said hello before its template or checkpoint was taken
            self.hello.set_result(None)
        if start == "resumed":  # and was set up
            self.ready.set_result({})
        self.broken: str | None = None
        self.proxy: Path | None = None
        """The proxy's Unix socket the guest's connections are carried to (if any)."""
        self._bridges: dict[int, _Bridge] = {}
        self._ended: set[asyncio.Task[None]] = set()
        self._task = asyncio.create_task(self._read(start))

    def send(self, kind: bytes, channel: int, data: bytes = b"") -> None:
        if self.broken is not None:
            raise ConfigError(f"the microvm box is broken: {self.broken}")
        for at in range(0, max(len(data), 1), MAX_FRAME):
            piece = data[at : at + MAX_FRAME]
            self._writer.write(struct.pack(FRAME, kind, channel, len(piece)) + piece)

    async def drain(self) -> None:
        await self._writer.drain()

    def open(self, spec: dict[str, Any], cap: int | None) -> tuple[int, _Channel]:
        number, self._next = self._next, self._next + 1
        channel = self._channels[number] = _Channel(cap)
        self.send(b"O", number, json.dumps(spec).encode())
        return number, channel

    def forget(self, number: int) -> None:
        self._channels.pop(number, None)

    def forget_bridge(self, number: int) -> None:
        bridge = self._bridges.pop(number, None)
        if bridge is not None:
            self._ended = {task for task in self._ended if not task.done()}
            self._ended.add(bridge.task)  # awaited at close (it may be ending itself now)

    def _bridged(self, kind: bytes, number: int, body: bytes) -> None:
        """A frame of a connection the guest made to its proxy port."""
        bridge = self._bridges.get(number)
        if kind == b"C" and bridge is None:
            if self.proxy is None or len(self._bridges) >= _MAX_BRIDGES:
                self.send(b"Z", number)
            else:
                self._bridges[number] = _Bridge(self, number, self.proxy)
        elif bridge is not None and kind == b"D":
            bridge.data(body)
        elif bridge is not None and kind == b"E":
            bridge.end()
        elif bridge is not None and kind == b"Z":
            bridge.task.cancel()
            bridge.close()

    async def ask(self, kind: bytes) -> dict[str, Any]:
        """Send ``F`` (freeze the box's commands) or ``T`` (thaw them); the agent's answer."""
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[kind] = answer
        self.send(kind, 0)
        await self.drain()
        return await answer

    async def _read(self, start: Start) -> None:
        why = "the guest closed its agent port"
        try:
            await self._go_ahead(start)
            while True:
                kind, number, size = struct.unpack(FRAME, await self._reader.readexactly(_HEAD))
                if size > MAX_FRAME:
                    why = "the guest sent a frame too large"
                    break
                self._take(kind, number, await self._reader.readexactly(size))
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        except (ValueError, TypeError) as error:
            why = f"the guest sent a malformed frame: {error}"
        self.broken = why
        for future, said in [
            *((f, "the microvm did not start") for f in (self.hello, self.ready)),
            *((f, "the microvm's agent is gone") for f in self._answers.values()),
        ]:
            if not future.done():
                future.set_exception(ConfigError(f"{said}: {why}"))
                future.exception()  # retrieved: nobody may be waiting on it any more
        for channel in list(self._channels.values()):
            channel.end(None, 0)
        self._channels.clear()

    def _take(self, kind: bytes, number: int, body: bytes) -> None:
        """One frame from the guest."""
        if number >= BRIDGED:
            self._bridged(kind, number, body)
            return
        channel = self._channels.get(number)
        if kind == b"H" and not self.hello.done():
            self.hello.set_result(None)
        elif kind == b"R" and not self.ready.done():
            self.ready.set_result(json.loads(body))
        elif kind in (b"F", b"T") and (asked := self._answers.pop(kind, None)) is not None:
            answer = json.loads(body)
            if not asked.done():
                asked.set_result(answer if isinstance(answer, dict) else {"error": "malformed"})
        elif kind == b"D" and channel is not None:
            if not channel.data(body):
                self.send(b"K", number)
        elif kind == b"X" and channel is not None:
            end = json.loads(body)
            code, dropped = end.get("code"), end.get("dropped", 0)
            channel.end(code if isinstance(code, int) else None, int(dropped))
            self.forget(number)

    async def _go_ahead(self, start: Start) -> None:
        """Answer the init's wait, in a guest booting afresh (it says when it waits)."""
        if start != "boot":
            return  # its init went on before the template or checkpoint was taken
        while (line := await self._reader.readline()) != WAITING:
            if not line:
                raise ConnectionError("the guest closed its port")
        self._writer.write(b"go\n")

    async def close(self) -> None:
        self.broken = self.broken or "closed"
        self._task.cancel()
        for bridge in list(self._bridges.values()):
            bridge.task.cancel()
            bridge.close()
        self._writer.close()
        for task in [self._task, *self._ended]:
            with contextlib.suppress(BaseException):
                await task
