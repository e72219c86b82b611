"""The 9P2000.L wire format: message numbers, a strict reader, reply builders.

Every message is ``size[4] type[1] tag[2]`` and a body, all little-endian; ``size``
counts itself. Strings are ``len[2]`` and that many bytes (UTF-8 on the wire; a name
that is not valid UTF-8 is decoded with ``surrogateescape``, so a host file name of
any bytes goes back and forth unchanged). A qid is ``type[1] version[4] path[8]``.

The reader is strict: a field that runs past the end of the body, a string with a
NUL, or bytes left over after the last field raise ``WireError``, which the server
answers with ``Rlerror(EPROTO)``; nothing here trusts a length it was sent. The
layouts follow the Linux kernel's v9fs client (net/9p/client.c) and QEMU's server.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

HEADER = struct.Struct("<IBH")
"""size[4] type[1] tag[2]."""
HEADER_SIZE = HEADER.size
NOTAG = 0xFFFF
NOFID = 0xFFFFFFFF
MAX_WALK = 16
"""A Twalk names at most 16 components."""
VERSION = "9P2000.L"
READ_OVERHEAD = HEADER_SIZE + 4
"""An Rread's or Rreaddir's bytes before its data: the header and count[4]."""

TLERROR, RLERROR = 6, 7
TSTATFS = 8
TLOPEN = 12
TLCREATE = 14
TSYMLINK = 16
TMKNOD = 18
TRENAME = 20
TREADLINK = 22
TGETATTR = 24
TSETATTR = 26
TXATTRWALK = 30
TXATTRCREATE = 32
TREADDIR = 40
TFSYNC = 50
TLOCK = 52
TGETLOCK = 54
TLINK = 70
TMKDIR = 72
TRENAMEAT = 74
TUNLINKAT = 76
TVERSION = 100
TAUTH = 102
TATTACH = 104
TFLUSH = 108
TWALK = 110
TREAD = 116
TWRITE = 118
TCLUNK = 120
TREMOVE = 122

QTDIR = 0x80
QTSYMLINK = 0x02
QTFILE = 0x00

# Tgetattr's request mask and Rgetattr's valid mask: the "basic" fields, what a
# POSIX stat has (QEMU answers the same set).
GETATTR_BASIC = 0x000007FF

# Tsetattr's valid bits.
SETATTR_MODE = 0x001
SETATTR_UID = 0x002
SETATTR_GID = 0x004
SETATTR_SIZE = 0x008
SETATTR_ATIME = 0x010
SETATTR_MTIME = 0x020
SETATTR_CTIME = 0x040
SETATTR_ATIME_SET = 0x080
SETATTR_MTIME_SET = 0x100

AT_REMOVEDIR = 0x200
LOCK_SUCCESS = 0
LOCK_TYPE_UNLCK = 2

_U8 = struct.Struct("<B")
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_QID = struct.Struct("<BIQ")
QID_SIZE = _QID.size
_GETATTR = struct.Struct("<Q13sIII15Q")
_STATFS = struct.Struct("<IIQQQQQQI")
_DIRENT_FIXED = QID_SIZE + 8 + 1 + 2


class WireError(Exception):
    """A message that does not parse: a field past the end, a bad string, extra bytes."""


@dataclass(frozen=True, slots=True)
class Qid:
    """A file's identity for the guest: its type, version and a unique path."""

    type: int
    version: int
    path: int

    def pack(self) -> bytes:
        """The 13 bytes on the wire."""
        return _QID.pack(self.type, self.version, self.path)


class Reader:
    """Fields read in order from one message's body, each bounds-checked."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes | memoryview) -> None:
        self._data = memoryview(data)
        self._pos = 0

    def _take(self, n: int) -> memoryview:
        end = self._pos + n
        if end > len(self._data):
            raise WireError("a field runs past the end of the message")
        chunk = self._data[self._pos : end]
        self._pos = end
        return chunk

    def u8(self) -> int:
        """An unsigned byte."""
        return int(self._take(1)[0])

    def u16(self) -> int:
        """An unsigned 16-bit integer."""
        return int(_U16.unpack(self._take(2))[0])

    def u32(self) -> int:
        """An unsigned 32-bit integer."""
        return int(_U32.unpack(self._take(4))[0])

    def u64(self) -> int:
        """An unsigned 64-bit integer."""
        return int(_U64.unpack(self._take(8))[0])

    def string(self) -> str:
        """A ``len[2]`` string; never one with a NUL in it."""
        raw = bytes(self._take(self.u16()))
        if b"\0" in raw:
            raise WireError("a string holds a NUL")
        return raw.decode("utf-8", "surrogateescape")

    def data(self) -> memoryview:
        """``count[4]`` bytes (Twrite's payload), a view into the message."""
        return self._take(self.u32())

    def end(self) -> None:
        """Check that every byte of the body was read."""
        if self._pos != len(self._data):
            raise WireError("bytes left over after the last field")


def encode_string(value: str) -> bytes:
    """A ``len[2]`` string (a value too long for the field raises ``WireError``)."""
    raw = value.encode("utf-8", "surrogateescape")
    if len(raw) > 0xFFFF:
        raise WireError("a string longer than 65535 bytes")
    return _U16.pack(len(raw)) + raw


def frame(kind: int, tag: int, body: bytes) -> bytes:
    """A whole message: the header, then ``body``."""
    return HEADER.pack(HEADER_SIZE + len(body), kind, tag) + body


def data_header(kind: int, tag: int, length: int) -> bytes:
    """The header and ``count[4]`` of an Rread or Rreaddir whose data follows."""
    return HEADER.pack(READ_OVERHEAD + length, kind, tag) + _U32.pack(length)


def lerror(tag: int, errno: int) -> bytes:
    """An Rlerror carrying a Linux errno."""
    return frame(RLERROR, tag, _U32.pack(errno))


def u8(value: int) -> bytes:
    """One byte."""
    return _U8.pack(value)


def u32(value: int) -> bytes:
    """Four bytes, little-endian."""
    return _U32.pack(value)


def u64(value: int) -> bytes:
    """Eight bytes, little-endian."""
    return _U64.pack(value)


def walk_reply(qids: Sequence[Qid]) -> bytes:
    """Rwalk's body: nwqid[2] and the qids walked."""
    return _U16.pack(len(qids)) + b"".join(q.pack() for q in qids)


def getattr_reply(valid: int, qid: Qid, fields: Sequence[int]) -> bytes:
    """Rgetattr's body: valid[8] qid[13] and the 18 numeric fields in wire order.

    ``fields``: mode uid gid nlink rdev size blksize blocks atime_sec atime_nsec
    mtime_sec mtime_nsec ctime_sec ctime_nsec btime_sec btime_nsec gen data_version.
    """
    return _GETATTR.pack(valid, qid.pack(), *fields)


def statfs_reply(fields: Sequence[int]) -> bytes:
    """Rstatfs's body: type bsize blocks bfree bavail files ffree fsid namelen."""
    return _STATFS.pack(*fields)


def dirent(qid: Qid, offset: int, kind: int, name: bytes) -> bytes:
    """One Rreaddir entry: qid[13] offset[8] type[1] name[s]."""
    return qid.pack() + _U64.pack(offset) + _U8.pack(kind) + _U16.pack(len(name)) + name


def dirent_size(name: bytes) -> int:
    """The bytes one Rreaddir entry for ``name`` takes."""
    return _DIRENT_FIXED + len(name)
