"""Helix's own 9P2000.L server: a host folder shared with a microVM guest, checkpointable.

Why: QEMU refuses to migrate (checkpoint) a guest while one of its virtio-9p shares
is mounted. So the microvm tier's guest mounts its shares with ``mount -t 9p -o
trans=fd,rfdno=N,wfdno=N,version=9p2000.L,msize=...`` over a virtio-serial port,
and Helix answers on the host end of that port (a QEMU chardev's Unix socket). The
server's state, the fid table, is Helix's: ``NinepShare.dump`` writes it down with
a checkpoint and ``NinepShare.load`` gives a share, in another process days later
perhaps, that goes on serving the restored guest where this one stopped (the guest
does not send Tversion or Tattach again).

Serving: ``serve`` answers one connection's requests in order, one at a time, on
the event loop with plain (non-blocking for regular files) os calls; ``busy`` says
a request is partly read or its answer not yet flushed, which a checkpoint waits
out. The wire format is ``_ninep_wire``; the handlers ``_ninep_files`` and
``_ninep_names``; the paths ``_ninep_fs``; the fids and saved state
``_ninep_fids``.

Security, the guest being hostile and this the sandbox's boundary:

- The host never follows a symlink: each path is opened component by component from
  the root's descriptor with ``O_PATH | O_NOFOLLOW`` (``HostTree``); a symlink is
  read (Treadlink) or stat'ed as itself, and opening one gives ``ELOOP``. The guest's
  kernel resolves symlinks itself, by walking again. No joined path reaches a syscall.
- Every name in a request is one component (no '/', no NUL, not '.' or '..'); only
  Twalk takes '..', and at the root it stays at the root.
- Open flags are the guest's access mode and a few safe flags (``open_flags``), with
  ``O_NOFOLLOW`` always; only regular files and directories are opened (never a FIFO
  or a device: nothing blocks the loop or touches hardware); Tmknod makes regular
  files and FIFOs only; no setuid or setgid bit is ever set on a host file. Files
  are created as the server's user; the guest's uid and gid are ignored (a Tsetattr
  chown is tried and its EPERM passed back).
- A read-only share answers ``EROFS`` to every request that would change anything.
- Counts are capped at the negotiated msize (at most 512 KiB). A message whose size
  is below the header or above msize closes the connection (framing is lost); a
  body that does not parse gets ``Rlerror(EPROTO)``, an unknown fid ``EBADF``, an
  unknown type ``EOPNOTSUPP``. No input raises out of ``serve``.
- A saved state is read back from disk and checked like a request
  (``ShareState.from_json``): plain components only, numbers in range.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ._ninep_core import Body
from ._ninep_fids import MAX_MSIZE, MIN_MSIZE, Fid, FidState, ShareState, new_key
from ._ninep_files import FileOps
from ._ninep_fs import refuse, writes
from ._ninep_names import NameOps
from ._ninep_wire import (
    HEADER,
    HEADER_SIZE,
    NOFID,
    TATTACH,
    TCLUNK,
    TFLUSH,
    TFSYNC,
    TGETATTR,
    TGETLOCK,
    TLCREATE,
    TLINK,
    TLOCK,
    TLOPEN,
    TMKDIR,
    TMKNOD,
    TREAD,
    TREADDIR,
    TREADLINK,
    TREMOVE,
    TRENAME,
    TRENAMEAT,
    TSETATTR,
    TSTATFS,
    TSYMLINK,
    TUNLINKAT,
    TVERSION,
    TWALK,
    TWRITE,
    TXATTRCREATE,
    TXATTRWALK,
    VERSION,
    Reader,
    WireError,
    encode_string,
    lerror,
    u32,
)

_log = logging.getLogger(__name__)
_READ_CHUNK = 1 << 18


class NinepShare(FileOps, NameOps):
    """A 9P2000.L export of one host folder, served to one guest connection at a time."""

    def __init__(
        self,
        root: Path,
        *,
        read_only: bool = False,
        _state: ShareState | None = None,
    ) -> None:
        super().__init__(
            root,
            read_only=read_only,
            key=_state.key if _state else new_key(),
            devices=_state.devices if _state else (),
        )
        self._pending = 0
        self._writer: asyncio.StreamWriter | None = None
        self._handlers: dict[int, Callable[[Reader], Body]] = {
            TVERSION: self.t_version,
            TATTACH: self.t_attach,
            TFLUSH: self.t_flush,
            TCLUNK: self.t_clunk,
            TWALK: self.t_walk,
            TREMOVE: self.t_remove,
            TLOPEN: self.t_lopen,
            TLCREATE: self.t_lcreate,
            TREAD: self.t_read,
            TWRITE: self.t_write,
            TGETATTR: self.t_getattr,
            TSETATTR: self.t_setattr,
            TREADDIR: self.t_readdir,
            TSTATFS: self.t_statfs,
            TFSYNC: self.t_fsync,
            TMKDIR: self.t_mkdir,
            TSYMLINK: self.t_symlink,
            TMKNOD: self.t_mknod,
            TREADLINK: self.t_readlink,
            TLINK: self.t_link,
            TRENAME: self.t_rename,
            TRENAMEAT: self.t_renameat,
            TUNLINKAT: self.t_unlinkat,
            TXATTRWALK: self.t_xattrwalk,
            TXATTRCREATE: self.t_xattrcreate,
            TLOCK: self.t_lock,
            TGETLOCK: self.t_getlock,
        }
        if _state is not None:
            self.msize = _state.msize
            for saved in _state.fids:
                self.fids[saved.fid] = self._reopen(saved)

    @classmethod
    def load(cls, root: Path, state: Mapping[str, Any], *, read_only: bool = False) -> NinepShare:
        """A share that goes on where ``dump`` left off (``ValueError``: a bad state).

        Each fid is found again by its path and, if it was open, reopened with its
        flags (never truncating or creating again); a fid whose file is gone, or
        that a read-only share cannot reopen for writing, answers ESTALE.
        """
        return cls(root, read_only=read_only, _state=ShareState.from_json(state))

    def dump(self) -> dict[str, Any]:
        """The share's state as JSON types: msize, cookie key, devices, every fid."""
        fids = tuple(FidState(n, f.path, f.flags) for n, f in sorted(self.fids.items()))
        state = ShareState(self.msize, self.key, tuple(self.qids.devices), fids)
        return state.to_json()

    @property
    def busy(self) -> bool:
        """A request has been (partly) read and its answer not yet flushed."""
        writer = self._writer
        unsent = writer is not None and writer.transport.get_write_buffer_size() > 0
        return self._pending > 0 or unsent

    def close(self) -> None:
        """Close every descriptor the share holds (its fids', its root's)."""
        self.close_fids()
        self.tree.close()

    def _reopen(self, saved: FidState) -> Fid:
        fid = Fid(saved.path)
        try:
            self.tree.lstat(saved.path)
            if saved.flags is not None:
                if self.read_only and writes(saved.flags):
                    raise refuse(errno.EROFS)
                fid.fd = self.tree.open_file(saved.path, saved.flags)
                fid.flags = saved.flags
        except OSError:
            fid.close()
            fid.stale = True
            fid.flags = saved.flags
        return fid

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Answer requests in order until EOF, or a message that breaks the framing.

        Never raises on what the guest sends; the writer is closed at the end.
        """
        self._writer = writer
        buffer = bytearray()
        try:
            while chunk := await reader.read(_READ_CHUNK):
                buffer += chunk
                self._pending = len(buffer)
                if not self._answer(buffer, writer):
                    return
                self._pending = len(buffer)
                await writer.drain()
        except (ConnectionError, OSError):
            return
        finally:
            self._pending = 0
            self._writer = None
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    def _answer(self, buffer: bytearray, writer: asyncio.StreamWriter) -> bool:
        """Answer each whole message at the front of ``buffer``; False: close."""
        while len(buffer) >= 4:
            size = int.from_bytes(buffer[:4], "little")
            if size < HEADER_SIZE or size > max(self.msize, MIN_MSIZE):
                _log.warning("9p: a message of %d bytes breaks the framing; closing", size)
                return False
            if len(buffer) < size:
                return True
            message = bytes(buffer[:size])
            del buffer[:size]
            writer.writelines(self.handle(message))
        return True

    def handle(self, message: bytes) -> list[bytes]:
        """The reply to one whole message (header included), as parts to write."""
        _size, kind, tag = HEADER.unpack_from(message)
        handler = self._handlers.get(kind)
        if handler is None:
            return [lerror(tag, errno.EOPNOTSUPP)]
        try:
            body = handler(Reader(memoryview(message)[HEADER_SIZE:]))
        except OSError as error:
            return [lerror(tag, error.errno or errno.EIO)]
        except WireError:
            return [lerror(tag, errno.EPROTO)]
        except (ValueError, OverflowError):
            return [lerror(tag, errno.EINVAL)]
        except Exception:
            _log.exception("9p: request type %d failed", kind)
            return [lerror(tag, errno.EIO)]
        if isinstance(body, bytes):
            return [HEADER.pack(HEADER_SIZE + len(body), kind + 1, tag), body]
        length = sum(len(part) for part in body)
        return [HEADER.pack(HEADER_SIZE + length, kind + 1, tag), *body]

    def t_version(self, r: Reader) -> Body:
        """Negotiate msize and version; every fid is clunked (a new session)."""
        msize, version = r.u32(), r.string()
        r.end()
        if msize < MIN_MSIZE:
            raise refuse(errno.EINVAL)
        self.close_fids()
        self.msize = min(msize, MAX_MSIZE)
        known = version == VERSION or version.startswith(VERSION + ".")
        return u32(self.msize) + encode_string(VERSION if known else "unknown")

    def t_attach(self, r: Reader) -> Body:
        """A fid for the share's root (no authentication; the aname is ignored)."""
        number, afid, _uname, _aname, _n_uname = r.u32(), r.u32(), r.string(), r.string(), r.u32()
        r.end()
        if afid != NOFID or number == NOFID or number in self.fids:
            raise refuse(errno.EINVAL)
        qid = self.qid_at(())
        self.fids[number] = Fid(())
        return qid.pack()

    def t_flush(self, r: Reader) -> Body:
        """Requests are answered in order, so the one named was answered already."""
        r.u16()
        r.end()
        return b""

    def t_clunk(self, r: Reader) -> Body:
        """Forget a fid."""
        number = r.u32()
        r.end()
        self.drop(number)
        return b""
