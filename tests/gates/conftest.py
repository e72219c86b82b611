from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """An empty world directory, absolute and resolved as the gates expect."""
    path = (tmp_path / "world").resolve()
    path.mkdir()
    return path
