"""``helix sandbox run`` and ``helix doctor``, as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helix.sandbox import TIERS


def helix(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("HELIX_")}
    return subprocess.run(
        [sys.executable, "-m", "helix", *args],
        capture_output=True,
        text=True,
        env={**inherited, "HELIX_HOME": str(tmp_path / "home"), **(env or {})},
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.usefixtures("bwrap_available")
def test_runs_a_command_in_the_default_tier_with_its_exit_code(tmp_path: Path) -> None:
    result = helix(
        tmp_path,
        "sandbox",
        "run",
        "--dir",
        str(tmp_path),
        "--",
        "sh",
        "-c",
        "echo hi > f.txt; ls /root; exit 7",
    )
    assert result.returncode == 7
    assert (tmp_path / "f.txt").read_text() == "hi\n"
    assert "sandbox: bwrap" in result.stderr
    assert "No such file" in result.stdout


def test_one_argument_is_a_shell_command(tmp_path: Path) -> None:
    result = helix(
        tmp_path,
        "sandbox",
        "run",
        "--tier",
        "process",
        "--dir",
        str(tmp_path),
        "--",
        "echo $((6 * 7))",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "42\n"
    assert "sandbox: process (asked for)" in result.stderr


@pytest.mark.usefixtures("bwrap_available")
def test_network_flag_allows_listed_hosts_through_the_proxy(tmp_path: Path, web: int) -> None:
    fetch = (
        "import urllib.request as u\n"
        f"print(u.urlopen('http://127.0.0.1:{web}/').read().decode(), end='')\n"
        "try:\n"
        "    u.urlopen('http://elsewhere.test/')\n"
        "except Exception as error:\n"
        "    print('refused', error.code)\n"
    )
    (tmp_path / "fetch.py").write_text(fetch)
    result = helix(
        tmp_path,
        "sandbox",
        "run",
        "--tier",
        "bwrap",
        "--network",
        "127.0.0.1",
        "--dir",
        str(tmp_path),
        "--",
        "python3 fetch.py",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello from the host\nrefused 403\n"
    assert f"egress: allow 127.0.0.1:{web}" in result.stderr
    assert "egress: deny elsewhere.test:80" in result.stderr


@pytest.mark.usefixtures("bwrap_available")
def test_without_network_nothing_is_reachable(tmp_path: Path, web: int) -> None:
    probe = f"import socket; socket.create_connection(('127.0.0.1', {web}), 3)"
    result = helix(
        tmp_path,
        "sandbox",
        "run",
        "--tier",
        "bwrap",
        "--dir",
        str(tmp_path),
        "--",
        f'python3 -c "{probe}"',
    )
    assert result.returncode == 1
    assert "ConnectionRefusedError" in result.stdout


def test_timeout_exits_124(tmp_path: Path) -> None:
    result = helix(
        tmp_path,
        "sandbox",
        "run",
        "--tier",
        "process",
        "--timeout",
        "0.3",
        "--dir",
        str(tmp_path),
        "--",
        "sleep 5",
    )
    assert result.returncode == 124
    assert "timed out after 0.3s" in result.stderr


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--tier", "nope", "--", "true"], 2, "unknown sandbox tier 'nope'"),
        (["--"], 2, "no command"),
        (["--dir", "/nonexistent/world", "--", "true"], 3, "is not a directory"),
        (["--timeout", "0", "--", "true"], 2, "Invalid value"),
    ],
)
def test_bad_input_is_a_clear_error(
    tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    result = helix(tmp_path, "sandbox", "run", *args)
    assert result.returncode == code
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unavailable_tier_is_refused(tmp_path: Path) -> None:
    result = helix(
        tmp_path, "sandbox", "run", "--tier", "docker", "--", "true", env={"PATH": "/nonexistent"}
    )
    assert result.returncode == 2
    assert "the docker sandbox tier is not available here" in result.stderr


def test_doctor_reports_tiers_store_and_keys_without_values(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": "sk-doctor-must-not-print", "HELIX_DB": f"sqlite:///{tmp_path}/x.db"}
    result = helix(tmp_path, "doctor", "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert "sk-doctor" not in result.stdout
    report = json.loads(result.stdout)
    tiers = {t["tier"]: t for t in report["sandbox"]["tiers"]}
    assert set(tiers) == set(TIERS)
    assert tiers["process"]["available"] is True
    assert (tiers["process"]["live"], tiers["process"]["checkpoints"]) == (True, False)
    assert (tiers["bwrap"]["live"], tiers["gvisor"]["checkpoints"]) == (False, True)
    assert report["sandbox"]["default"] in tiers
    assert report["store"]["ok"] is True
    assert report["model_keys"]["OPENAI_API_KEY"] is True
    assert report["model_keys"]["ANTHROPIC_API_KEY"] is False
    text = helix(tmp_path, "doctor", env=env)
    assert text.returncode == 0
    assert "sandbox:" in text.stdout
    assert "(live + checkpoints)" in text.stdout  # gvisor's line, whether or not it is here
    assert "OPENAI_API_KEY" in text.stdout
    assert "sk-doctor" not in text.stdout


def test_doctor_fails_on_an_unreachable_store_without_showing_its_password(
    tmp_path: Path,
) -> None:
    url = "postgresql://helix:hunter2hunter2@127.0.0.1:1/helix"
    result = helix(tmp_path, "doctor", "--json", env={"HELIX_DB": url})
    assert result.returncode == 1
    assert "hunter2" not in result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["store"]["ok"] is False
    assert report["store"]["url"] == "postgresql://helix:***@127.0.0.1:1/helix"
