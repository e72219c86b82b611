"""File tools (``read_file``, ``write_file``, ``edit_file``) and their shared helpers.

Every path is resolved against the run's world, symlinks included, and anything that
lands outside it is refused. The gate pipeline checks paths before a call; this is
the second line of defence, so it does not trust the gates to have run.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from ._quota import QuotaExceeded, WorldQuota
from ._tool import FileChange, ToolContext, ToolResult, tool

BINARY_SNIFF_BYTES = 8192
"""A NUL byte in this many leading bytes marks a file as binary (as git decides)."""


class Refused(Exception):
    """A call the tool will not carry out; the message is shown to the model."""


async def guarded(path: str, work: Callable[[], ToolResult]) -> ToolResult:
    """Run blocking file work in a thread, turning refusals and OS errors into results."""
    try:
        return await asyncio.to_thread(work)
    except (Refused, QuotaExceeded) as refusal:
        return ToolResult(ok=False, output=str(refusal))
    except OSError as error:
        return ToolResult(ok=False, output=f"{path}: {error.strerror or error}")
    except UnicodeError as error:  # e.g. a lone surrogate in the content
        return ToolResult(ok=False, output=f"{path}: the text is not valid Unicode ({error})")
    except ValueError as error:  # e.g. a NUL byte inside the path
        return ToolResult(ok=False, output=f"invalid path {path!r}: {error}")


def in_world(world: Path, path: str) -> Path:
    """``path`` resolved against ``world``; ``Refused`` when it lands outside it."""
    root = world.resolve()
    target = (root / path).resolve()
    if target != root and not target.is_relative_to(root):
        raise Refused(
            f"{path!r} is outside the world: only paths inside the run's directory"
            " can be used (give them relative to it)"
        )
    if "\\" in target.relative_to(root).as_posix():
        raise Refused(f"{path!r}: a path in the world cannot hold a backslash")
    return target


def relative(world: Path, target: Path) -> str:
    """``target`` relative to the world, with ``/`` separators (``.`` for the world)."""
    return target.relative_to(world.resolve()).as_posix() or "."


def cap_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` UTF-8 bytes, ending with ``[output truncated: N more bytes]``."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return cap_bytes(data[: max(limit, 0)], len(data) - max(limit, 0))


def cap_bytes(kept: bytes, more_bytes: int) -> str:
    """Decode ``kept`` and, when ``more_bytes > 0``, append the truncation marker line."""
    if more_bytes <= 0:
        return kept.decode("utf-8", errors="replace")
    # Not final: a character split by the cap is dropped instead of shown as U+FFFD.
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(kept, final=False)
    separator = "" if not text or text.endswith("\n") else "\n"
    return f"{text}{separator}[output truncated: {more_bytes} more bytes]"


def is_binary(head: bytes) -> bool:
    """Whether a file's first bytes look binary."""
    return b"\0" in head[:BINARY_SNIFF_BYTES]


def sha256(data: bytes) -> str:
    """The SHA-256 of ``data``, in hex (the hash ``FileChange`` records)."""
    return hashlib.sha256(data).hexdigest()


def _existing_file(world: Path, path: str) -> Path:
    target = in_world(world, path)
    if not target.exists():
        raise Refused(f"no such file: {path}")
    if target.is_dir():
        raise Refused(f"{path} is a directory, not a file: use list_files to see inside it")
    return target


def _refuse_shared(target: Path, path: str) -> None:
    """Refuse a file with other hard links: one of them may be a file outside the world."""
    links = target.stat().st_nlink
    if links > 1:
        raise Refused(
            f"{path} has {links} hard links: it may be a file outside the world, so file"
            " tools leave it alone"
        )


def _store(target: Path, data: bytes) -> None:
    """Write ``data``; a hard-linked file is replaced, never written through."""
    try:
        info = target.stat()
    except FileNotFoundError:
        info = None
    if info is None or info.st_nlink <= 1:
        target.write_bytes(data)
        return
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=".helix-")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _read(world: Path, path: str, offset: int, limit: int | None, max_output: int) -> ToolResult:
    if offset < 0:
        raise Refused(f"offset must be 0 or more, not {offset}")
    if limit is not None and limit < 1:
        raise Refused(f"limit must be 1 or more, not {limit}")
    target = _existing_file(world, path)
    _refuse_shared(target, path)
    kept = bytearray()
    dropped = lines = shown = 0
    with target.open("rb") as file:
        if is_binary(file.read(BINARY_SNIFF_BYTES)):
            raise Refused(f"{path} is a binary file: read_file only reads text")
        file.seek(0)
        for number, line in enumerate(file):
            lines = number + 1
            if number < offset or (limit is not None and shown >= limit):
                continue
            shown += 1
            room = max_output - len(kept)
            kept += line[: max(room, 0)]
            dropped += max(len(line) - max(room, 0), 0)
    if lines == 0:
        return ToolResult(ok=True, output=f"[{path} is empty]")
    if offset >= lines:
        raise Refused(f"offset {offset} is past the end of {path}, which has {lines} lines")
    output = cap_bytes(bytes(kept), dropped)
    # After a byte cut, the next unread line is the one the cut fell in.
    next_offset = offset + (kept.count(b"\n") if dropped else shown)
    if next_offset < lines:
        separator = "" if output.endswith("\n") else "\n"
        output += (
            f"{separator}[{lines - next_offset} more lines: continue with offset={next_offset}]"
        )
    return ToolResult(ok=True, output=output)


@tool(read_only=True, idempotent=True, effect="none", paths={"path": "read"})
async def read_file(
    ctx: ToolContext, path: str, offset: int = 0, limit: int | None = None
) -> ToolResult:
    """Read a text file in the world.

    `path` is relative to the world. `offset` is the first line to return (0-based:
    line N of search_files output is offset N-1); `limit` is the most lines to
    return (all by default). Long output is cut with a marker saying how to continue.
    Binary files are refused.
    """
    return await guarded(path, lambda: _read(ctx.world, path, offset, limit, ctx.max_output))


def _write(world: Path, path: str, content: str, quota: WorldQuota | None) -> ToolResult:
    target = in_world(world, path)
    if target.is_dir():
        raise Refused(f"{path} is a directory: give a file path to write")
    data = content.encode("utf-8")
    before = sha256(target.read_bytes()) if target.exists() else None
    after = sha256(data)
    name = relative(world, target)
    if before == after:
        return ToolResult(ok=True, output=f"{name} unchanged: it already has this content")
    held = quota.admit(target, len(data), name) if quota is not None else 0
    target.parent.mkdir(parents=True, exist_ok=True)
    _store(target, data)
    if quota is not None:
        quota.wrote(target, held)
    change = FileChange(
        path=name, op="create" if before is None else "modify", before=before, after=after
    )
    verb = "created" if before is None else "overwrote"
    return ToolResult(ok=True, output=f"{verb} {name} ({len(data)} bytes)", files=(change,))


@tool(idempotent=True, effect="world", reports_changes=True, paths={"path": "write"})
async def write_file(ctx: ToolContext, path: str, content: str) -> ToolResult:
    """Write `content` to the file at `path` in the world, replacing what it held.

    Missing parent folders are created. To change part of a file, prefer edit_file.
    """
    return await guarded(path, lambda: _write(ctx.world, path, content, ctx.world_quota))


def _occurrences(text: str, old: str) -> int:
    # Overlapping matches count: "aa" in "aaa" is ambiguous, so it is two.
    count, start = 0, text.find(old)
    while start >= 0:
        count += 1
        start = text.find(old, start + 1)
    return count


def _edit(world: Path, path: str, old: str, new: str, quota: WorldQuota | None) -> ToolResult:
    target = _existing_file(world, path)
    _refuse_shared(target, path)
    if not old:
        raise Refused("old is empty: give the exact text to replace")
    if old == new:
        raise Refused("old and new are the same: there is nothing to change")
    data = target.read_bytes()
    if is_binary(data):
        raise Refused(f"{path} is a binary file: edit_file only edits text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{path} is not UTF-8 text: edit_file cannot edit it safely") from None
    count = _occurrences(text, old)
    if count == 0:
        hint = ""
        if "\r\n" in text and "\r\n" not in old and old.replace("\n", "\r\n") in text:
            hint = " (the file uses CRLF line endings: include the \\r characters)"
        raise Refused(
            f"old text not found in {path}: it must match exactly, including whitespace"
            f" and indentation{hint}"
        )
    if count > 1:
        raise Refused(
            f"old text occurs {count} times in {path}: it must match exactly once;"
            " include more of the surrounding text to make it unique"
        )
    at = text.find(old)
    updated = (text[:at] + new + text[at + len(old) :]).encode("utf-8")
    name = relative(world, target)
    held = quota.admit(target, len(updated), name) if quota is not None else 0
    _store(target, updated)
    if quota is not None:
        quota.wrote(target, held)
    change = FileChange(path=name, op="modify", before=sha256(data), after=sha256(updated))
    line = text.count("\n", 0, at) + 1
    return ToolResult(ok=True, output=f"edited {name} at line {line}", files=(change,))


@tool(effect="world", reports_changes=True, paths={"path": "write"})
async def edit_file(ctx: ToolContext, path: str, old: str, new: str) -> ToolResult:
    """Replace the text `old` with `new` in the file at `path` in the world.

    `old` must match the file's text exactly (whitespace and indentation included)
    and exactly once: include enough surrounding lines to make it unique.
    """
    return await guarded(path, lambda: _edit(ctx.world, path, old, new, ctx.world_quota))
