"""What a world argument names: a folder of the workspace's worlds, or a path."""

from __future__ import annotations

import os
import re

WORLD_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A folder name under a workspace's worlds (``POST /runs``'s ``world``)."""


def is_world_name(world: str | os.PathLike[str]) -> bool:
    """Whether ``world`` is a plain folder name (a ``str``, not a path object)."""
    return isinstance(world, str) and WORLD_NAME.fullmatch(world) is not None
