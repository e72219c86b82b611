from __future__ import annotations

from pathlib import Path

import pytest

from ._support import make_repo
from ._tricks import Plant, make_plant


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


@pytest.fixture
def plant(repo: Path, tmp_path: Path) -> Plant:
    """The repository with ``tools/evil`` ready to be planted by a trick."""
    return make_plant(repo, tmp_path / "outside")
