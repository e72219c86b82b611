"""``helix cluster`` refuses bad input with a message (exit 2), trusts no state file, and
``config`` writes a launcher YAML for an SSH pool without the token in it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from helix.cli._app import app

TOKEN = "0123456789abcdef0123456789abcdef"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["up", "--nodes", "-1"], "--nodes must be 0 to 32"),
        (["up", "--nodes", "99"], "--nodes must be 0 to 32"),
        (["up", "--cpus", "0"], "--cpus must be above 0"),
        (["up", "--label", "gpu"], "write it as KEY=VALUE"),
        (["up", "--label", "gpu=yes;rm -rf ~"], "invalid label"),
        (["up", "--label", "helix.role=head"], "reserved"),
        (["up", "--object-store-mb", "10"], "at least 75 MiB"),
        (["config", "--ssh", "10.0.0.5;reboot"], "invalid host"),
        (["config", "--ssh", "$(id).lan"], "invalid host"),
        (["config", "--ssh", " , "], "at least one host"),
        (["config", "--ssh", "a.lan,a.lan"], "names a host twice"),
        (["config", "--ssh", "a.lan", "--head", "b.lan`id`"], "invalid host"),
        (["config", "--ssh", "a.lan", "--user", "ops; id"], "invalid --user"),
        (["config", "--ssh", "a.lan", "--key", "~/.ssh/k $(id)"], "invalid --key"),
        (["config", "--ssh", "a.lan", "--name", "x\ny"], "invalid --name"),
    ],
)
def test_bad_input_exits_2_with_a_message(helix_home: Path, args: list[str], says: str) -> None:
    done = helix(helix_home, "cluster", *args)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr
    assert "Traceback" not in done.stderr
    assert not (helix_home / "cluster" / "state.json").exists()


def helix(
    home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``helix ARGS`` in this process (Click's runner), with ``HELIX_HOME=home``."""
    settings = {"HELIX_HOME": str(home), "HELIX_DB": None, "HELIX_RAY_TOKEN": None, **(env or {})}
    result = CliRunner().invoke(app, list(args), env=settings, prog_name="helix")
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


def _state(home: Path, processes: list[dict[str, object]] | None = None) -> Path:
    """A state file as ``helix cluster up`` writes it (0600 in a 0700 folder)."""
    folder = home / "cluster"
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / "state.json"
    body = {"address": "127.0.0.1:6379", "token": TOKEN, "processes": processes or []}
    path.write_text(json.dumps(body))
    path.chmod(0o600)
    return path


def _start_ticks(pid: int) -> int:
    text = Path(f"/proc/{pid}/stat").read_text()
    return int(text[text.rfind(")") + 2 :].split()[19])


def test_a_state_file_not_to_be_trusted_is_refused(helix_home: Path, tmp_path: Path) -> None:
    path = _state(helix_home)
    path.chmod(0o644)
    for command in ("status", "down", "up"):
        done = helix(helix_home, "cluster", command)
        assert done.returncode == 2, done.stderr
        assert "others may read or write it" in done.stderr
    path.unlink()
    elsewhere = tmp_path / "planted.json"
    elsewhere.write_text('{"address": "127.0.0.1:1", "token": "t", "processes": []}')
    elsewhere.chmod(0o600)
    path.symlink_to(elsewhere)
    done = helix(helix_home, "cluster", "down")
    assert (done.returncode, "refusing the cluster state file" in done.stderr) == (2, True)
    assert elsewhere.exists()
    path.unlink()
    path.write_text('{"address": "127.0.0.1:1; id", "token": "t", "processes": []}')
    path.chmod(0o600)
    done = helix(helix_home, "cluster", "down")
    assert (done.returncode, "damaged" in done.stderr) == (2, True)
    if os.getuid() == 0:  # as root, a file of another user can be made
        os.chown(path, 65534, 65534)
        done = helix(helix_home, "cluster", "status")
        assert (done.returncode, "another user owns it" in done.stderr) == (2, True)


def test_down_never_stops_a_process_that_is_not_its_ray_start(helix_home: Path) -> None:
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        ticks = _start_ticks(bystander.pid)
        reused = {"name": "head", "pid": bystander.pid, "started": ticks + 1}  # pid reused
        _state(helix_home, [reused])
        done = helix(helix_home, "cluster", "down")
        assert done.returncode == 0, done.stderr
        assert "0 processes stopped" in done.stdout
        assert bystander.poll() is None
        assert not (helix_home / "cluster" / "state.json").exists()
        same = {"name": "head", "pid": bystander.pid, "started": ticks}  # not a ray start
        _state(helix_home, [same])
        done = helix(helix_home, "cluster", "down")
        assert "0 processes stopped" in done.stdout
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_config_for_an_ssh_pool(helix_home: Path, tmp_path: Path) -> None:
    env = {"HELIX_RAY_TOKEN": TOKEN}
    args = ["cluster", "config", "--ssh", "10.0.0.5, gpu1.lan,fe80::1", "--user", "ops",
            "--key", "~/.ssh/pool_ed25519", "--head", "gpu1.lan"]  # fmt: skip
    printed = helix(helix_home, *args, env=env)
    assert printed.returncode == 0, printed.stderr
    assert TOKEN not in printed.stdout
    config = yaml.safe_load(printed.stdout)
    assert config["provider"] == {
        "type": "local", "head_ip": "gpu1.lan", "worker_ips": ["10.0.0.5", "fe80::1"],
    }  # fmt: skip
    assert config["auth"] == {"ssh_user": "ops", "ssh_private_key": "~/.ssh/pool_ed25519"}
    assert config["min_workers"] == config["max_workers"] == 2
    assert config["file_mounts"] == {"~/.ray/auth_token": "~/.ray/auth_token"}
    assert any("pip install" in c and "helix-harness[ray]==" in c for c in config["setup_commands"])
    head_start = " ".join(config["head_start_ray_commands"])
    worker_start = " ".join(config["worker_start_ray_commands"])
    assert "RAY_AUTH_MODE=token" in head_start
    assert "--head" in head_start
    assert "RAY_AUTH_MODE=token" in worker_start
    assert "--address=$RAY_HEAD_IP:6379" in worker_start
    assert "helix serve --executor ray --ray-address gpu1.lan:6379" in printed.stdout

    out = tmp_path / "cluster.yaml"
    written = helix(helix_home, *args, "--out", str(out), env=env)
    assert written.returncode == 0, written.stderr
    assert f"ray up {out}" in written.stderr
    assert yaml.safe_load(out.read_text()) == config
    assert TOKEN not in out.read_text()


def test_status_of_a_cluster_whose_head_is_gone_says_so(helix_home: Path) -> None:
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    _state(helix_home, [{"name": "head", "pid": int(ended.stdout), "started": 1}])
    done = helix(helix_home, "cluster", "status")
    assert done.returncode == 4
    assert "the cluster's head node at 127.0.0.1:6379 is not running" in done.stderr
    assert TOKEN not in done.stderr + done.stdout
    done = helix(helix_home, "cluster", "down")
    assert (done.returncode, done.stdout) == (
        0,
        "cluster at 127.0.0.1:6379 is down (0 processes stopped)\n",
    )
