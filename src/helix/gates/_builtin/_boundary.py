"""The boundary gate: file tools stay inside the run's world."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from helix.gates._gate import Decision, GateCall, GateContext

_LISTING_TOOLS = frozenset({"list_files", "search_files"})
"""Tools whose ``path`` defaults to the world itself."""


class BoundaryGate:
    """Refuses a ``path`` that resolves outside the world.

    ``..``, absolute paths and symlinks are all resolved before the check, so a link
    in the world pointing at ``/etc`` is outside. Commands are confined by the
    sandbox instead: what a shell command touches cannot be read off its text.
    """

    name: str = "boundary"

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        """Decide on ``call``."""
        if "path" in call.args:
            path = call.args["path"]
        elif call.name in _LISTING_TOOLS:
            path = "."
        elif call.name == "run_command":
            return Decision("allow", "commands run in the world's sandbox")
        else:
            return Decision("allow", "no path to check")
        if not isinstance(path, str):
            return Decision("deny", f"path must be a string, not {type(path).__name__}")
        if _plainly_inside(ctx.world, path):
            return Decision("allow", f"{path!r} is inside the world")
        try:
            resolved = (ctx.world / path).resolve()
        except (OSError, ValueError, RuntimeError) as error:  # NUL bytes, link loops
            return Decision("deny", f"path {path!r} cannot be resolved: {error}")
        if _inside(resolved, ctx.world):
            return Decision("allow", f"{path!r} is inside the world")
        return Decision("deny", f"path {path!r} is outside the world ({resolved})")


def _plainly_inside(world: Path, path: str) -> bool:
    """Whether ``path`` is inside ``world`` without resolving it: true for plain names.

    Every file tool call passes here, and a full resolve checks every directory from
    the root down. A relative path of plain names (no ``..``) needs only its own
    components checked: if none of them is a symlink, nothing can lead out. Anything
    else (an absolute path, ``..``, a link on the way) is left to the full resolve.
    """
    names = [name for name in path.split("/") if name not in ("", ".")]
    if path.startswith("/") or ".." in names or "\0" in path:
        return False
    current = str(world)
    for name in names:
        current = f"{current}/{name}"
        try:
            mode = os.lstat(current).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return True  # nothing exists below a missing name, so no link either
        except OSError:
            return False
        if stat.S_ISLNK(mode):
            return False
    return True


def _inside(path: Path, world: Path) -> bool:
    if path == world or path.is_relative_to(world):
        return True
    # The world is meant to arrive resolved; if it did not, judge against the real one
    # (only on this rare path, to keep the common case free of system calls).
    real = world.resolve()
    return real != world and (path == real or path.is_relative_to(real))
