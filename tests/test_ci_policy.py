"""In CI a missing PostgreSQL or bubblewrap fails the run; elsewhere it skips. Checked for real."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOWHERE = "postgresql://postgres@127.0.0.1:1/postgres"


def _pytest_with(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "HELIX_TEST_POSTGRES")}
    return subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "tests/kernel/log/test_postgres.py::test_durability_setting",
        ],
        cwd=ROOT,
        env={**base, "HELIX_TEST_POSTGRES": NOWHERE, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("env", "failed"), [({"CI": "true"}, True), ({}, False)], ids=["in-ci", "local"]
)
def test_missing_postgres(env: dict[str, str], failed: bool) -> None:
    result = _pytest_with(env)
    assert "PostgreSQL is not reachable" in result.stdout or result.returncode == 0
    if failed:
        assert result.returncode == 1, result.stdout
        assert "2 errors" in result.stdout
    else:
        assert result.returncode == 0, result.stdout
        assert "2 skipped" in result.stdout


def _pytest_without_bwrap(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # No bwrap on PATH: the probe finds no bubblewrap, as on a machine without it.
    base = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "tests/sandbox/test_bwrap.py::test_seccomp_can_be_turned_off",
        ],
        cwd=ROOT,
        env={**base, "PATH": "/nonexistent", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("env", "failed"), [({"CI": "true"}, True), ({}, False)], ids=["in-ci", "local"]
)
def test_missing_bubblewrap(env: dict[str, str], failed: bool) -> None:
    result = _pytest_without_bwrap(env)
    assert "bubblewrap is not installed" in result.stdout or result.returncode == 0
    if failed:
        assert result.returncode == 1, result.stdout
        assert "1 error" in result.stdout
    else:
        assert result.returncode == 0, result.stdout
        assert "1 skipped" in result.stdout


def test_ci_script_installs_bubblewrap() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert "apt-get install -y -qq bubblewrap" in script
    assert script.index("bubblewrap") < script.index("make test")


@pytest.mark.parametrize(
    ("env", "failed"), [({"CI": "true"}, True), ({}, False)], ids=["in-ci", "local"]
)
def test_missing_chromium(env: dict[str, str], failed: bool) -> None:
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "HELIX_TEST_CHROMIUM")}
    result = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "tests/server/test_dashboard.py::test_a_wrong_password_is_explained",
        ],
        cwd=ROOT,
        env={**base, "HELIX_TEST_CHROMIUM": "/nonexistent/chromium", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert "Chromium is not installed" in result.stdout or result.returncode == 0
    if failed:
        assert result.returncode == 1, result.stdout
        assert "1 error" in result.stdout
    else:
        assert result.returncode == 0, result.stdout
        assert "1 skipped" in result.stdout


def test_ci_script_installs_chromium() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert "apt-get install -y -q chromium" in script
    assert script.index("chromium") < script.index("make test")
