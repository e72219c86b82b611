"""In CI a missing PostgreSQL, bubblewrap, Chromium or llama.cpp fails the run; elsewhere it skips.

Checked for real: a test that needs the dependency runs in a child pytest with the
dependency made unreachable, once with ``CI=true`` and once without.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Missing:
    """How to take one dependency away from a test that needs it."""

    test: str
    hide: dict[str, str]
    """Environment that makes the dependency unreachable."""
    message: str
    """What the fixture says about it."""
    outcomes: int
    """How many errors (in CI) or skips (elsewhere) the test makes."""


MISSING = {
    "postgresql": Missing(
        "tests/kernel/log/test_postgres.py::test_durability_setting",
        {"HELIX_TEST_POSTGRES": "postgresql://postgres@127.0.0.1:1/postgres"},
        "PostgreSQL is not reachable",
        2,
    ),
    # No bwrap on PATH: the probe finds no bubblewrap, as on a machine without it.
    "bubblewrap": Missing(
        "tests/sandbox/test_bwrap.py::test_seccomp_can_be_turned_off",
        {"PATH": "/nonexistent"},
        "bubblewrap is not installed",
        1,
    ),
    "llama.cpp": Missing(
        "tests/llamacpp/test_real_server.py::test_helix_models_lists_the_servers_model",
        {"HELIX_TEST_LLAMA_PYTHON": "/nonexistent/python"},
        "llama-cpp-python is not built",
        1,
    ),
    "chromium": Missing(
        "tests/server/test_dashboard.py::test_a_wrong_password_is_explained",
        {"HELIX_TEST_CHROMIUM": "/nonexistent/chromium"},
        "Chromium is not installed",
        1,
    ),
}


@pytest.mark.parametrize("dependency", sorted(MISSING))
@pytest.mark.parametrize("in_ci", [True, False], ids=["in-ci", "local"])
def test_a_missing_dependency(dependency: str, in_ci: bool) -> None:
    missing = MISSING[dependency]
    base = {k: v for k, v in os.environ.items() if k != "CI" and k not in missing.hide}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", missing.test],
        cwd=ROOT,
        env={**base, **missing.hide, **({"CI": "true"} if in_ci else {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.message in result.stdout, result.stdout
    plural = "" if missing.outcomes == 1 else "s"
    if in_ci:
        assert result.returncode == 1, result.stdout
        assert f"{missing.outcomes} error{plural}" in result.stdout
    else:
        assert result.returncode == 0, result.stdout
        assert f"{missing.outcomes} skipped" in result.stdout


@pytest.mark.parametrize(
    "install",
    [
        "apt-get install -y -qq bubblewrap",
        "apt-get install -y -q chromium",
        "apt-get install -y -qq cmake g++",
    ],
)
def test_ci_script_installs_what_the_tests_need(install: str) -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert install in script
    assert script.index(install) < script.index("make test")
