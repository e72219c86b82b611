"""The forms of content hashes and world paths, checked wherever events carry them.

A hash in an event names an object of the world's store, and a path names a file under
the run's directory: both are turned into filesystem paths later. Checking their form
when a payload is built (or parsed from an imported line) keeps a hand-written event from
ever naming something outside the store or the world.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

_DIGEST = re.compile(r"[0-9a-f]{64}")


def is_digest(text: object) -> bool:
    """Whether ``text`` is a SHA-256 digest as Helix writes it: 64 lowercase hex digits."""
    return isinstance(text, str) and _DIGEST.fullmatch(text) is not None


def path_problem(path: str, *, backslash: bool = False) -> str | None:
    """Why ``path`` is not a normalised path relative to a world, or ``None`` if it is.

    Refused: an empty path, a NUL byte, a leading ``/``, and any empty, ``.`` or ``..``
    component; unless ``backslash`` is true, any backslash too (a separator elsewhere).
    """
    if not path:
        return "is empty"
    if "\0" in path:
        return "holds a NUL byte"
    if not backslash and "\\" in path:
        return "holds a backslash"
    if path[0] == "/":
        return "is absolute"
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return f"has a {part!r} component" if part else "has an empty component"
    return None


def _digest(text: str) -> str:
    if not is_digest(text):
        raise ValueError(f"{text[:80]!r} is not a SHA-256 digest (64 lowercase hex digits)")
    return text


def _entry_hash(text: str) -> str:
    return text if text == "" else _digest(text)


def _world_path(path: str) -> str:
    problem = path_problem(path)
    if problem is not None:
        raise ValueError(f"the world path {path[:200]!r} {problem}")
    return path


def _reported_path(path: str) -> str:
    problem = path_problem(path, backslash=True)
    if problem is not None:
        raise ValueError(f"the world path {path[:200]!r} {problem}")
    return path


Digest = Annotated[str, AfterValidator(_digest)]
"""A SHA-256 digest: 64 lowercase hex digits."""

EntryHash = Annotated[str, AfterValidator(_entry_hash)]
"""A manifest entry's hash: a digest, or empty for a folder."""

WorldPath = Annotated[str, AfterValidator(_world_path)]
"""A normalised path relative to the world (see ``path_problem``)."""

ReportedPath = Annotated[str, AfterValidator(_reported_path)]
"""A world path that is only reported, never opened: a backslash is allowed."""
