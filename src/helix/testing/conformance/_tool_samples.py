"""What ``ToolConformance`` needs to know about each tool: how to call it, and to fail it.

A ``ToolSample`` gives the suite a tool's arguments for a call that succeeds, one that
fails, and (optionally) one slow enough to be cancelled mid-way; ``world_state`` and
``world_changes`` let the suite judge from the files what a call really did.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def _no_preparation(world: Path) -> None:
    """Leave the world empty."""


@dataclass(frozen=True, slots=True)
class SlowCall:
    """A call that is still running (awaiting) when the suite cancels it."""

    args: Mapping[str, Any]
    """Valid arguments of a call that takes long (a command that sleeps, a server that
    waits): the suite cancels it once ``started`` says it is under way."""
    started: Callable[[Path], bool]
    """Given the world, whether the call is under way (e.g. a marker file it wrote)."""
    leaves: frozenset[str] = frozenset()
    """Paths (relative to the world) the call may have created or changed by the time it
    is cancelled (e.g. its marker); any other change is a partial file it left."""


@dataclass(frozen=True, slots=True)
class ToolSample:
    """How the suite exercises one tool (``ToolConformance.samples``, by tool name)."""

    args: Mapping[str, Any]
    """Valid arguments of a call that succeeds (``ok=True``) in the prepared world."""
    failing: Mapping[str, Any] | None = None
    """Valid arguments (the schema accepts them) of a call that fails in the prepared
    world: it must return ``ToolResult(ok=False, output=<why>)``, not raise.
    ``None``: the tool has no way to fail here (the check is skipped, saying so)."""
    slow: SlowCall | None = None
    """A call to cancel mid-way; ``None``: every call is quick (the check is skipped)."""
    prepare: Callable[[Path], None] = _no_preparation
    """Puts in the (empty, fresh) world what the calls need, before each call."""
    skip_call: str | None = None
    """Why the suite cannot run the successful call here (it needs a delegator, the
    network): the checks that run ``args`` are skipped with this reason."""
    concurrent: bool = False
    """The tool runs concurrently with others though it is not read-only, by design."""


WorldState = dict[str, str]
"""Every entry under a world, by relative path: ``dir``, ``link:TARGET`` or the
SHA-256 of a file's content."""


def world_state(world: Path) -> WorldState:
    """What the world holds now (symlinks recorded, never followed)."""
    state: WorldState = {}
    for folder, dirs, files in os.walk(world):
        base = Path(folder)
        for name in dirs + files:
            path = base / name
            rel = path.relative_to(world).as_posix()
            if path.is_symlink():
                state[rel] = f"link:{os.readlink(path)}"
            elif path.is_dir():
                state[rel] = "dir"
            else:
                state[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def world_changes(before: WorldState, after: WorldState) -> dict[str, str]:
    """The entries that differ: path → ``create``, ``modify`` or ``delete``."""
    changes: dict[str, str] = {}
    for path in before.keys() | after.keys():
        if path not in after:
            changes[path] = "delete"
        elif path not in before:
            changes[path] = "create"
        elif before[path] != after[path]:
            changes[path] = "modify"
    return dict(sorted(changes.items()))
