from __future__ import annotations

from pathlib import Path

import pytest

from ._support import make_repo


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """An empty world directory, absolute and resolved as the gates expect."""
    path = (tmp_path / "world").resolve()
    path.mkdir()
    return path


@pytest.fixture
def repo(world: Path) -> Path:
    """The world as a clean git repository with one commit and one edit."""
    return make_repo(world)
