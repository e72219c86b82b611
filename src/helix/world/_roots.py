"""What may be a world: a real folder, never the filesystem's root.

A world's folder is walked and hashed (snapshots, ``now`` views) and written (rollback,
forks, keep). A run whose recorded world is ``/`` would make Helix hash, or restore
over, the whole disk; every place that walks or writes a world asks ``world_root`` first.
"""

from __future__ import annotations

from pathlib import Path

from helix.errors import ConfigError


def world_root(root: Path | str) -> Path:
    """``root`` resolved, if it may be a world; ``ConfigError`` if it is ``/`` or no folder."""
    resolved = Path(root).resolve()
    if resolved == Path(resolved.anchor):
        raise ConfigError(f"{root} cannot be a world: it is the filesystem's root")
    if not resolved.is_dir():
        raise ConfigError(f"the world {root} is not a folder")
    return resolved
