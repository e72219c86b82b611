"""Finding things in the world: ``list_files`` and ``search_files``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from fnmatch import fnmatchcase
from pathlib import Path

from ._files import BINARY_SNIFF_BYTES, Refused, cap_text, guarded, in_world, is_binary, relative
from ._tool import ToolContext, ToolResult, tool

MAX_ENTRIES = 2000
"""Entries ``list_files`` shows at most."""
MAX_MATCHES = 500
"""Matching lines ``search_files`` shows at most."""
MAX_LINE_CHARS = 300
"""A matching line longer than this is cut (minified files would drown the output)."""
MAX_SEARCHED_BYTES = 5 * 1024 * 1024
"""Files larger than this are skipped by ``search_files``: they are rarely source."""
SKIPPED_DIRECTORIES = frozenset({".git"})
"""Shown in listings but never entered: their contents are tool internals."""


def _walk(top: Path) -> Iterator[os.DirEntry[str]]:
    """Every entry under ``top``, in no set order; symlinked folders are not entered.

    Not following links keeps the walk inside the world (a link may point anywhere)
    and free of cycles.
    """
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                found = list(entries)
        except OSError:
            continue  # unreadable or vanished meanwhile: list what can be listed
        for entry in found:
            yield entry
            if entry.is_dir(follow_symlinks=False) and entry.name not in SKIPPED_DIRECTORIES:
                stack.append(Path(entry.path))


def _matches(name: str, rel: str, pattern: str | None) -> bool:
    if pattern is None:
        return True
    # A pattern without "/" also matches bare names, as in .gitignore: "*.py" anywhere.
    return fnmatchcase(rel, pattern) or ("/" not in pattern and fnmatchcase(name, pattern))


def _base(world: Path, path: str) -> Path:
    base = in_world(world, path)
    if not base.exists():
        raise Refused(f"no such file or folder: {path}")
    return base


def _list(world: Path, path: str, pattern: str | None, max_output: int) -> ToolResult:
    base = _base(world, path)
    found: list[str] = []
    if not base.is_dir():
        rel = relative(world, base)
        found = [rel] if _matches(base.name, rel, pattern) else []
    else:
        root = world.resolve()
        for entry in _walk(base):
            rel = Path(entry.path).relative_to(root).as_posix()
            if _matches(entry.name, rel, pattern):
                found.append(rel + "/" if entry.is_dir() else rel)
    if not found:
        which = f" matching {pattern!r}" if pattern is not None else ""
        return ToolResult(ok=True, output=f"[no files{which} in {path}]")
    found.sort()
    lines = found[:MAX_ENTRIES]
    if len(found) > MAX_ENTRIES:
        lines.append(
            f"[{len(found) - MAX_ENTRIES} more entries not shown: narrow with path or pattern]"
        )
    return ToolResult(ok=True, output=cap_text("\n".join(lines), max_output))


@tool(read_only=True, idempotent=True, effect="none", paths={"path": "read"})
async def list_files(ctx: ToolContext, path: str = ".", pattern: str | None = None) -> ToolResult:
    """List the files and folders under `path` in the world, recursively.

    Paths are shown relative to the world, sorted, folders ending in `/`; the
    contents of `.git` are not listed. `pattern` is a glob such as `*.py` or
    `src/*/test_*.py`, matched against the relative path (a pattern without `/`
    also matches bare names anywhere).
    """
    return await guarded(path, lambda: _list(ctx.world, path, pattern, ctx.max_output))


def _text_files(world: Path, base: Path) -> Iterator[Path]:
    if base.is_file():
        yield base
        return
    for entry in _walk(base):
        # Symlinked files are skipped: their target may lie outside the world.
        if entry.is_file(follow_symlinks=False):
            yield Path(entry.path)


_TOO_BIG = b"[too big]"


def _load(file: Path) -> bytes | None:
    """The file's bytes; ``_TOO_BIG``; ``None`` if it cannot or must not be read."""
    try:
        info = file.stat()
        if info.st_nlink > 1:
            return None  # another link to it may be a file outside the world
        if info.st_size > MAX_SEARCHED_BYTES:
            return _TOO_BIG
        return file.read_bytes()
    except OSError:
        return None  # vanished or unreadable meanwhile: search what can be read


def _search(world: Path, pattern: str, path: str, max_output: int) -> ToolResult:
    try:
        regex = re.compile(pattern)
    except re.error as error:
        raise Refused(f"invalid regular expression {pattern!r}: {error}") from None
    base = _base(world, path)
    shown: list[str] = []
    matches = skipped = 0
    for file in sorted(_text_files(world, base)):
        data = _load(file)
        if data is _TOO_BIG:
            skipped += 1
            continue
        if data is None or is_binary(data[:BINARY_SNIFF_BYTES]):
            continue
        rel = relative(world, file)
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line) is None:
                continue
            matches += 1
            if len(shown) < MAX_MATCHES:
                cut = line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"
                shown.append(f"{rel}:{number}: {cut}")
    notes = []
    if matches > len(shown):
        notes.append(f"[{matches - len(shown)} more matches not shown: narrow pattern or path]")
    if skipped:
        notes.append(f"[{skipped} files over {MAX_SEARCHED_BYTES} bytes were not searched]")
    if not shown:
        return ToolResult(ok=True, output="\n".join([f"[no matches for {pattern!r}]", *notes]))
    return ToolResult(ok=True, output="\n".join([cap_text("\n".join(shown), max_output), *notes]))


@tool(read_only=True, idempotent=True, effect="none", paths={"path": "read"})
async def search_files(ctx: ToolContext, pattern: str, path: str = ".") -> ToolResult:
    """Search the text files under `path` in the world for a regular expression.

    `pattern` is a Python regular expression, matched against each line. Each match
    is shown as `path:line: text`, with line numbers starting at 1. Binary files,
    symlinks and the contents of `.git` are skipped.
    """
    return await guarded(path, lambda: _search(ctx.world, pattern, path, ctx.max_output))
