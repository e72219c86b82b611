"""The wheel, installed as a user installs it (no extras, a fresh venv), runs ``helix demo``.

The wheel is built from a copy of the checkout (nothing lands in the repository), its
build backend and dependencies come from the package index, pinned by constraints.txt.
In CI (``CI=true``) a build or install that fails is a failure; elsewhere, without an
index to install from, the test is skipped. About a minute with a warm pip cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("src", "pyproject.toml", "README.md", "constraints.txt")
"""What the wheel is built from."""


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without this checkout's path or any model key: a user's shell."""
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "HELIX_")
    keys = ("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped + keys)}
    return {**env, **extra}


def _step(what: str, command: list[str], cwd: Path) -> None:
    """Run a build/install step: a failure fails in CI, and skips elsewhere."""
    done = subprocess.run(
        command, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        message = f"{what} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        if _in_ci():
            pytest.fail(message)
        pytest.skip(message)


def _copy_checkout(dest: Path) -> Path:
    dest.mkdir()
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, dest / name)
    return dest


@pytest.mark.timeout(900)
def test_the_wheel_runs_the_demo_in_a_bare_venv(tmp_path: Path) -> None:
    checkout = _copy_checkout(tmp_path / "checkout")
    wheels = tmp_path / "wheels"
    _step(
        "building the wheel",
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), "."],
        checkout,
    )
    (wheel,) = wheels.glob("helix_harness-*.whl")
    venv = tmp_path / "venv"
    _step("making a venv", [sys.executable, "-m", "venv", str(venv)], tmp_path)
    python = venv / "bin" / "python"
    _step(
        "installing the wheel",
        [str(python), "-m", "pip", "install", "-q", "-c", str(checkout / "constraints.txt"),
         str(wheel)],
        tmp_path,
    )  # fmt: skip
    home = tmp_path / "home"
    demo = subprocess.run(
        [str(venv / "bin" / "helix"), "demo"],
        cwd=tmp_path,
        env=_clean_env(HELIX_HOME=str(home)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "Traceback" not in demo.stderr
    assert "completed:" in demo.stdout
    assert "next: helix logs" in demo.stdout
    # The installed helix is the wheel's, not this checkout's.
    where = subprocess.run(
        [str(python), "-c", "import helix; print(helix.__file__)"],
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.stdout.strip().startswith(str(venv)), where.stdout
