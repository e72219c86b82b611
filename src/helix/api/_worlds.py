"""What a world argument names: a folder of the workspace's worlds, or a path."""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from helix.errors import ConfigError

WORLD_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A folder name under a workspace's worlds (``POST /runs``'s ``world``)."""


def is_world_name(world: str | os.PathLike[str]) -> bool:
    """Whether ``world`` is a plain folder name (a ``str``, not a path object)."""
    return isinstance(world, str) and WORLD_NAME.fullmatch(world) is not None


def named_world(worlds: Path, workspace: str, name: str) -> Path:
    """The folder ``name`` of ``workspace``'s worlds, refused if it leads elsewhere.

    The worlds of a workspace are a boundary between tenants: a name is one plain
    component (never ``..`` or a path), and an existing entry must be a real folder, not
    a link (wherever it points) nor anything else. ``ConfigError`` says why not.
    """
    if not is_world_name(name) or name in (".", ".."):
        raise ConfigError(
            f"world {name!r}: name a folder of the workspace's worlds"
            " (letters, digits, _ . -), not a path"
        )
    folder = worlds / workspace / name
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise ConfigError(f"world {name!r}: not a folder of the workspace's worlds")
    return folder


def list_world_names(worlds: Path, workspace: str) -> list[str]:
    """The folders of ``workspace``'s worlds, by name (links and odd names left out)."""
    try:
        entries = list(os.scandir(worlds / workspace))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(
        e.name
        for e in entries
        if is_world_name(e.name) and e.name not in (".", "..") and e.is_dir(follow_symlinks=False)
    )


def run_folder(
    worlds: Path, workspace: str, world: str | os.PathLike[str] | None, *, paths: bool
) -> tuple[Path, bool]:
    """A new run's folder, and whether it was made for it.

    ``None``: a fresh folder of the workspace's worlds; a world name: that folder (made
    if new); a path, where ``paths`` allows them (a local door, not a server): itself.
    """
    if world is None:
        folder = worlds / workspace / secrets.token_hex(6)
    elif is_world_name(world) or not paths:
        folder = named_world(worlds, workspace, os.fspath(world))
    else:
        return Path(world).expanduser(), False
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    return folder, made
