"""What may be a world: a real folder that is neither the filesystem's root nor Helix's own.

A world's folder is walked and hashed (snapshots, ``now`` views) and written (rollback,
forks, keep). A run whose recorded world is ``/``, or a folder holding the object store,
would make Helix hash the whole disk or its own store; every place that walks or writes
a world asks ``world_root`` first.
"""

from __future__ import annotations

from pathlib import Path

from helix.errors import ConfigError

from ._objects import ObjectStore


def world_root(root: Path | str, objects: ObjectStore | None = None) -> Path:
    """``root`` resolved, if it may be a world; ``ConfigError`` if not.

    Refused: the filesystem's root, a path that is not a folder, and a folder that holds
    (or is) the object store's folder.
    """
    resolved = Path(root).resolve()
    if resolved == Path(resolved.anchor):
        raise ConfigError(f"{root} cannot be a world: it is the filesystem's root")
    if not resolved.is_dir():
        raise ConfigError(f"the world {root} is not a folder")
    if objects is not None:
        store = objects.root.resolve()
        if store == resolved or store.is_relative_to(resolved):
            raise ConfigError(f"{root} cannot be a world: it holds Helix's object store")
    return resolved
