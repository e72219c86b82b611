"""A small 9P2000.L client for the tests, its encoding written apart from the server's.

Formats as in the Linux kernel's net/9p: b=u8 w=u16 d=u32 q=u64 s=string Q=qid,
and in replies D=count[4]+data, R=the rest of the body.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import AsyncIterator
from typing import Any

from helix.sandbox._ninep import NinepShare

T = {
    "statfs": 8,
    "lopen": 12,
    "lcreate": 14,
    "symlink": 16,
    "mknod": 18,
    "rename": 20,
    "readlink": 22,
    "getattr": 24,
    "setattr": 26,
    "xattrwalk": 30,
    "xattrcreate": 32,
    "readdir": 40,
    "fsync": 50,
    "lock": 52,
    "getlock": 54,
    "link": 70,
    "mkdir": 72,
    "renameat": 74,
    "unlinkat": 76,
    "version": 100,
    "auth": 102,
    "attach": 104,
    "flush": 108,
    "walk": 110,
    "read": 116,
    "write": 118,
    "clunk": 120,
    "remove": 122,
}
NOFID = 0xFFFFFFFF
_INT = {"b": "<B", "w": "<H", "d": "<I", "q": "<Q"}


class Rlerror(Exception):
    def __init__(self, errno: int) -> None:
        super().__init__(errno)
        self.errno = errno


def encode(fmt: str, *args: Any) -> bytes:
    out = bytearray()
    for code, value in zip(fmt, args, strict=True):
        if code in _INT:
            out += struct.pack(_INT[code], value)
        elif code == "s":
            raw = value.encode() if isinstance(value, str) else value
            out += struct.pack("<H", len(raw)) + raw
        elif code == "B":
            out += value
        else:
            raise ValueError(code)
    return bytes(out)


def decode(fmt: str, data: bytes) -> list[Any]:
    pos, out = 0, []
    for code in fmt:
        if code in _INT:
            (value,) = struct.unpack_from(_INT[code], data, pos)
            pos += struct.calcsize(_INT[code])
            out.append(value)
        elif code == "s":
            (n,) = struct.unpack_from("<H", data, pos)
            out.append(data[pos + 2 : pos + 2 + n].decode("utf-8", "surrogateescape"))
            pos += 2 + n
        elif code == "Q":
            out.append(struct.unpack_from("<BIQ", data, pos))
            pos += 13
        elif code == "D":
            (n,) = struct.unpack_from("<I", data, pos)
            out.append(data[pos + 4 : pos + 4 + n])
            pos += 4 + n
        elif code == "R":
            out.append(data[pos:])
            pos = len(data)
    assert pos == len(data), f"{len(data) - pos} bytes left over decoding {fmt}"
    return out


def entries(data: bytes) -> list[tuple[tuple[int, int, int], int, int, str]]:
    """Rreaddir's entries: (qid, offset, type, name)."""
    pos, out = 0, []
    while pos < len(data):
        qid = struct.unpack_from("<BIQ", data, pos)
        offset, kind, n = struct.unpack_from("<QBH", data, pos + 13)
        name = data[pos + 24 : pos + 24 + n].decode()
        out.append((qid, offset, kind, name))
        pos += 24 + n
    return out


class Client:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self._tag = 0

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def receive(self) -> tuple[int, int, bytes]:
        size, kind, tag = struct.unpack("<IBH", await self.reader.readexactly(7))
        return kind, tag, await self.reader.readexactly(size - 7)

    async def rpc(self, kind: int, body: bytes) -> tuple[int, bytes]:
        self._tag = (self._tag + 1) % 0xFFFF
        tag = self._tag
        await self.send_raw(struct.pack("<IBH", 7 + len(body), kind, tag) + body)
        rkind, rtag, rbody = await self.receive()
        assert rtag == tag
        return rkind, rbody

    async def call(self, name: str, fmt: str = "", *args: Any, reply: str = "") -> list[Any]:
        kind = T[name]
        rkind, body = await self.rpc(kind, encode(fmt, *args))
        if rkind == 7:
            (code,) = struct.unpack("<I", body)
            raise Rlerror(code)
        assert rkind == kind + 1, (rkind, kind)
        return decode(reply, body)

    async def version(self, msize: int = 512 * 1024, version: str = "9P2000.L") -> list[Any]:
        return await self.call("version", "ds", msize, version, reply="ds")

    async def attach(self, fid: int = 0) -> tuple[int, int, int]:
        (qid,) = await self.call("attach", "ddssd", fid, NOFID, "helix", "", 1000, reply="Q")
        return qid  # type: ignore[no-any-return]

    async def walk(self, fid: int, newfid: int, *names: str) -> list[tuple[int, int, int]]:
        args = encode("ddw", fid, newfid, len(names)) + b"".join(encode("s", n) for n in names)
        rkind, body = await self.rpc(T["walk"], args)
        if rkind == 7:
            raise Rlerror(struct.unpack("<I", body)[0])
        (count,) = struct.unpack_from("<H", body)
        assert len(body) == 2 + 13 * count
        return [struct.unpack_from("<BIQ", body, 2 + 13 * i) for i in range(count)]

    async def lopen(self, fid: int, flags: int) -> list[Any]:
        return await self.call("lopen", "dd", fid, flags, reply="Qd")

    async def lcreate(self, fid: int, name: str, flags: int, mode: int = 0o644) -> list[Any]:
        return await self.call("lcreate", "dsddd", fid, name, flags, mode, 0, reply="Qd")

    async def read(self, fid: int, offset: int, count: int) -> bytes:
        (data,) = await self.call("read", "dqd", fid, offset, count, reply="D")
        return data  # type: ignore[no-any-return]

    async def write(self, fid: int, offset: int, data: bytes) -> int:
        body = encode("dqd", fid, offset, len(data)) + data
        (count,) = await self.call("write", "B", body, reply="d")
        return count  # type: ignore[no-any-return]

    async def getattr(self, fid: int) -> dict[str, Any]:
        names = [
            "valid",
            "qid",
            "mode",
            "uid",
            "gid",
            "nlink",
            "rdev",
            "size",
            "blksize",
            "blocks",
            "atime_sec",
            "atime_nsec",
            "mtime_sec",
            "mtime_nsec",
            "ctime_sec",
            "ctime_nsec",
            "btime_sec",
            "btime_nsec",
            "gen",
            "data_version",
        ]
        values = await self.call("getattr", "dq", fid, 0x3FFF, reply="qQdddqqqqqqqqqqqqqqq")
        return dict(zip(names, values, strict=True))

    async def setattr(self, fid: int, valid: int, *, mode: int = 0, size: int = 0,
                      atime: tuple[int, int] = (0, 0), mtime: tuple[int, int] = (0, 0),
                      uid: int = 0, gid: int = 0) -> None:  # fmt: skip
        await self.call("setattr", "dddddqqqqq", fid, valid, mode, uid, gid, size, *atime, *mtime)

    async def readdir(self, fid: int, offset: int, count: int) -> list[Any]:
        (data,) = await self.call("readdir", "dqd", fid, offset, count, reply="D")
        return entries(data)

    async def clunk(self, fid: int) -> None:
        await self.call("clunk", "d", fid)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


@contextlib.asynccontextmanager
async def connected(share: NinepShare, *, handshake: bool = True) -> AsyncIterator[Client]:
    """A client on one end of a Unix socket pair, ``share.serve`` on the other."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    server_reader, server_writer = await asyncio.open_unix_connection(sock=theirs)
    reader, writer = await asyncio.open_unix_connection(sock=ours, limit=1 << 22)
    client = Client(reader, writer)
    async with asyncio.TaskGroup() as group:
        served = group.create_task(share.serve(server_reader, server_writer))
        try:
            if handshake:
                await client.version()
                await client.attach(0)
            yield client
        finally:
            await client.close()
            await asyncio.wait_for(served, 10)
