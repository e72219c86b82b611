"""A 9P share's fids and the state of them kept with a checkpoint.

A fid is a path (components under the share's root) and, once opened, a real
descriptor and the flags it was opened with. The saved state, ``ShareState``, is
what a new process needs to go on serving a guest restored from a checkpoint: the
negotiated msize, the key of the directory cookies, the device order of the qid
map and every fid's path and open flags. It is read back from disk, so
``ShareState.from_json`` trusts nothing: each path component must be a plain name
(no '/', no NUL, not '.' or '..'), each number in its range, each fid once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._ninep_fs import REOPEN_DROP, DirEntry, is_component, open_flags
from ._ninep_wire import NOFID

STATE_VERSION = 1
MIN_MSIZE = 4096
MAX_MSIZE = 512 * 1024
"""The largest message either side may send (the guest asks, the server caps)."""
MAX_DEPTH = 2048
_KEY_BYTES = 16


@dataclass(slots=True)
class Fid:
    """One fid: where it points and, once opened, its descriptor."""

    path: tuple[str, ...]
    fd: int | None = None
    flags: int | None = None
    """The guest's open flags (sanitised), or None while the fid is not open."""
    stale: bool = False
    """Restored, but its file is gone: every use answers ESTALE."""
    entries: list[DirEntry] | None = None
    """A directory's listing, taken at a Treaddir from offset 0 (or after a restore)."""

    def close(self) -> None:
        """Close the descriptor, if open."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        self.entries = None


@dataclass(frozen=True, slots=True)
class FidState:
    """One fid as saved: its number, path and open flags (None: not open)."""

    fid: int
    path: tuple[str, ...]
    flags: int | None = None


@dataclass(frozen=True, slots=True)
class ShareState:
    """Everything a share needs to go on after a restore (JSON-able by ``to_json``)."""

    msize: int
    key: bytes
    devices: tuple[int, ...] = ()
    fids: tuple[FidState, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        """The state as plain JSON types."""
        return {
            "version": STATE_VERSION,
            "msize": self.msize,
            "key": self.key.hex(),
            "devices": list(self.devices),
            "fids": [{"fid": f.fid, "path": list(f.path), "flags": f.flags} for f in self.fids],
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> ShareState:
        """Parse and check a saved state; ``ValueError`` names what is wrong."""
        if not isinstance(raw, Mapping) or raw.get("version") != STATE_VERSION:
            raise ValueError("not a 9p share state of a known version")
        msize = _integer(raw.get("msize"), "msize", MIN_MSIZE, MAX_MSIZE)
        key_hex = raw.get("key")
        try:
            key = bytes.fromhex(key_hex) if isinstance(key_hex, str) else b""
        except ValueError:
            key = b""
        if len(key) != _KEY_BYTES:
            raise ValueError("the directory cookie key is not 16 bytes of hex")
        devices = raw.get("devices")
        if not isinstance(devices, list) or len(devices) > 0x8000:
            raise ValueError("devices is not a list of device numbers")
        devs = tuple(_integer(d, "a device", 0, (1 << 64) - 1) for d in devices)
        fids_raw = raw.get("fids")
        if not isinstance(fids_raw, list):
            raise ValueError("fids is not a list")
        fids = tuple(_fid_state(item) for item in fids_raw)
        if len({f.fid for f in fids}) != len(fids):
            raise ValueError("a fid appears twice")
        return cls(msize=msize, key=key, devices=devs, fids=fids)


def new_key() -> bytes:
    """A fresh key for a share's directory cookies."""
    return os.urandom(_KEY_BYTES)


def _integer(value: object, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{what} is not a number from {low} to {high}")
    return value


def _fid_state(item: object) -> FidState:
    if not isinstance(item, Mapping):
        raise ValueError("a fid is not an object")
    number = _integer(item.get("fid"), "a fid", 0, NOFID - 1)
    path = item.get("path")
    if not isinstance(path, list) or len(path) > MAX_DEPTH:
        raise ValueError(f"fid {number}: its path is not a list of names")
    for name in path:
        if not is_component(name):
            raise ValueError(f"fid {number}: {name!r} is not a plain path component")
    flags = item.get("flags")
    if flags is not None:
        flags = _integer(flags, f"fid {number}: flags", 0, 0xFFFFFFFF)
        try:
            safe = not flags & REOPEN_DROP and open_flags(flags, create=False) == flags
        except OSError:
            safe = False
        if not safe:
            raise ValueError(f"fid {number}: open flags {flags:#o} are not a safe set")
    return FidState(fid=number, path=tuple(path), flags=flags)
