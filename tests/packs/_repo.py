"""A sample repository (a bug, its failing test), a bare remote, the pack as a folder plugin."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

CALC = "def add(a, b):\n    return a - b\n"
TESTS = (
    "from calc import add\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_add_zero():\n    assert add(0, 0) == 0\n"
)
IDENTITY = {
    "GIT_AUTHOR_NAME": "Ann",
    "GIT_AUTHOR_EMAIL": "ann@example.com",
    "GIT_COMMITTER_NAME": "Ann",
    "GIT_COMMITTER_EMAIL": "ann@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def sh_git(*args: str, cwd: Path) -> str:
    """Run git as a person would (for setting up and checking), its stdout."""
    env = {**os.environ, **IDENTITY}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def sample_repository(root: Path) -> tuple[Path, Path]:
    """``root/repo`` (a checkout of one commit: a bug and its failing test) and its bare remote."""
    remote = root / "remote.git"
    repo = root / "repo"
    remote.mkdir(parents=True)
    repo.mkdir()
    sh_git("init", "--quiet", "--bare", "--initial-branch=main", str(remote), cwd=root)
    sh_git("init", "--quiet", "--initial-branch=main", cwd=repo)
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TESTS)
    sh_git("add", "-A", cwd=repo)
    sh_git("commit", "--quiet", "-m", "add, and its tests", cwd=repo)
    sh_git("remote", "add", "origin", str(remote), cwd=repo)
    sh_git("push", "--quiet", "origin", "main", cwd=repo)
    return repo.resolve(), remote.resolve()


def pack_folder(root: Path) -> Path:
    """A development plugin folder serving the installed pack (``HELIX_PLUGINS``)."""
    folder = root / "plugins" / "engineering"
    folder.mkdir(parents=True)
    (folder / "plugin.py").write_text("from helix.packs.engineering import plugin\n")
    return folder.parent
