"""The boundary gate: the paths a tool names stay inside the run's world."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from helix.gates._gate import Decision, GateCall, GateContext

from ._arguments import arguments_with_defaults


class BoundaryGate:
    """Refuses a path argument that resolves outside the world.

    The path arguments are those the tool declares (``Facets.paths``), read or
    written, with their defaults (a listing of ``.`` by default is checked too); each
    may be a string or a list of strings. ``..``, absolute paths and symlinks are all
    resolved before the check, so a link in the world pointing at ``/etc`` is outside.
    A tool running in the sandbox is confined by it instead: what a shell command
    touches cannot be read off its text.
    """

    name: str = "boundary"

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        """Decide on ``call``."""
        facets = call.tool.facets if call.tool is not None else None
        if facets is None or not facets.paths:
            if facets is not None and facets.sandboxed:
                what = "commands run" if facets.command is not None else f"{call.name} runs"
                return Decision("allow", f"{what} in the world's sandbox")
            return Decision("allow", "no path to check")
        args = arguments_with_defaults(call)
        inside: list[str] = []
        for argument in facets.paths:
            value = args.get(argument)
            if value is None:
                continue  # an optional path left out
            paths = value if isinstance(value, list | tuple) else [value]
            for path in paths:
                refusal = _outside(ctx.world, argument, path)
                if refusal is not None:
                    return Decision("deny", refusal)
                inside.append(repr(path))
        if not inside:
            return Decision("allow", "no path to check")
        verb = "is" if len(inside) == 1 else "are"
        return Decision("allow", f"{', '.join(inside)} {verb} inside the world")


def _outside(world: Path, argument: str, path: object) -> str | None:
    """Why ``path`` (the value of ``argument``) is not inside ``world``, or ``None``."""
    if not isinstance(path, str):
        return f"{argument} must be a string, not {type(path).__name__}"
    if _plainly_inside(world, path):
        return None
    try:
        resolved = (world / path).resolve()
    except (OSError, ValueError, RuntimeError) as error:  # NUL bytes, link loops
        return f"{argument} {path!r} cannot be resolved: {error}"
    if _inside(resolved, world):
        return None
    return f"{argument} {path!r} is outside the world ({resolved})"


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
