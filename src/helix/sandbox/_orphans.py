"""State folders a Helix process keeps for what may outlive it, and those an ended one left.

A tier whose processes can outlive a Helix killed with ``kill -9`` (a gVisor sandbox,
a live world's background sessions) keeps their state in a folder of the temporary
directory with an ``owner`` file naming its Helix process (``process_mark``). A later
Helix finds the folders whose owner has ended (``orphaned``) and undoes what they hold
(``reap_once``, on its first use of the tier).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

from helix._util import process_gone, process_mark

OWNER = "owner"
"""The file in a state folder naming the Helix process it belongs to."""


def mark_owner(folder: Path) -> None:
    """Write ``folder``'s owner: this process."""
    (folder / OWNER).write_text(process_mark())


def orphaned(prefix: str, folder: Path | None = None) -> list[Path]:
    """The folders ``PREFIX*`` in ``folder`` (the temporary directory) an ended Helix left.

    Only folders of Helix's user, never one reached through a link, whose owner names
    a process that has ended: those of live processes, of other users or without an
    owner are left alone.
    """
    found = []
    for state in sorted(Path(folder or tempfile.gettempdir()).glob(f"{prefix}*")):
        mark = _owner_of(state)
        if mark is not None and process_gone(mark):
            found.append(state)
    return found


@cache
def reap_once(prefix: str, undo: Callable[[Path], None]) -> None:
    """Undo what each orphaned folder ``PREFIX*`` holds, then remove it; once a process.

    The folders are those ``orphaned`` finds in the temporary directory.
    """
    for state in orphaned(prefix):
        undo(state)
        shutil.rmtree(state, ignore_errors=True)


def _owner_of(state: Path) -> str | None:
    """The owner mark of a folder Helix's user made, never read through a link."""
    try:
        info = state.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            return None
        descriptor = os.open(state / OWNER, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(descriptor) as owner:
        return owner.read(64)
