"""The bubblewrap tier: its command line, its masks, its limits, run for real."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from helix.sandbox import (
    BwrapSandbox,
    EgressDecision,
    EgressPolicy,
    default_hidden_paths,
    policy_hook,
)
from helix.testing import alive, kill_all, processes_mentioning, wait_gone_now

from ._support import entries, write

pytestmark = pytest.mark.usefixtures("bwrap_available")


@pytest.fixture
def box() -> Iterator[BwrapSandbox]:
    sandbox = BwrapSandbox(max_processes=64)
    yield sandbox
    sandbox.close()


def test_command_line_holds_the_profile(tmp_path: Path) -> None:
    argv = BwrapSandbox().argv("echo hi", tmp_path, seccomp_fd=7)
    joined = " ".join(argv)
    for flag in ("--die-with-parent", "--new-session", "--unshare-all", "--seccomp 7"):
        assert flag in joined
    assert f"--bind {tmp_path} {tmp_path}" in joined
    assert "--ro-bind /usr /usr" in joined
    assert "--ro-bind /etc /etc" in joined
    assert "--ro-bind /dev/null /etc/shadow" in joined
    assert "--tmpfs /tmp" in joined
    assert argv[-4:] == ["--", "/bin/sh", "-c", "echo hi"]
    binds = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert binds == [str(tmp_path)]  # the world is the only writable bind
    if os.geteuid() == 0:
        assert "--cap-drop ALL" in joined
    for absent in ("/root", "/home", "/var", "/run", "/opt"):
        assert f" {absent} " not in f" {joined} "


def test_hidden_paths_inside_the_world_are_masked(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    database = tmp_path / "helix.db"
    database.write_text("x")
    argv = BwrapSandbox(hidden=[data, database, tmp_path / "absent"]).argv("true", tmp_path)
    joined = " ".join(argv)
    assert f"--tmpfs {data}" in joined
    assert f"--ro-bind /dev/null {database}" in joined
    assert "absent" not in joined


def test_default_hidden_paths_follow_helix_settings(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "HELIX_DB": f"sqlite:///{tmp_path}/db/helix.db"}
    hidden = default_hidden_paths(env)
    assert tmp_path / ".local/share/helix" in hidden
    assert tmp_path / ".ssh" in hidden
    assert tmp_path / ".aws" in hidden
    assert tmp_path / "db" / "helix.db" in hidden
    assert tmp_path / "db" / "helix.db-wal" in hidden
    moved = default_hidden_paths({"HOME": str(tmp_path), "HELIX_HOME": "/srv/helix"})
    assert Path("/srv/helix") in moved


async def test_synthetic_home_and_private_tmp(box: BwrapSandbox, tmp_path: Path) -> None:
    host_file = Path("/tmp", f"helix-host-{uuid.uuid4().hex}")
    write(host_file, "host")
    try:
        result = await box.run(
            f"echo $HOME; ls {host_file} 2>&1; touch ~/x && echo home-ok; hostname",
            cwd=tmp_path,
            timeout_s=20,
        )
    finally:
        os.unlink(host_file)
    lines = result.output.splitlines()
    assert lines[0] == "/tmp/home"
    assert "No such file" in lines[1]
    assert lines[2] == "home-ok"
    assert lines[3] == "helix-sandbox"


async def test_no_capabilities_no_new_privileges_and_seccomp(
    box: BwrapSandbox, tmp_path: Path
) -> None:
    result = await box.run(
        "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status", cwd=tmp_path, timeout_s=20
    )
    status = dict(line.split(":\t") for line in result.output.splitlines())
    assert status == {"CapEff": "0000000000000000", "NoNewPrivs": "1", "Seccomp": "2"}


async def test_seccomp_refuses_tracing(box: BwrapSandbox, tmp_path: Path) -> None:
    probe = "import ctypes; print(ctypes.CDLL(None, use_errno=True).syscall(101, 16, 1, 0, 0))"
    result = await box.run(f'python3 -c "{probe}"', cwd=tmp_path, timeout_s=20)
    assert result.output.strip() == "-1"  # PTRACE_ATTACH to pid 1: refused


async def test_seccomp_can_be_turned_off(tmp_path: Path) -> None:
    box = BwrapSandbox(seccomp=False)
    result = await box.run("grep '^Seccomp:' /proc/self/status", cwd=tmp_path, timeout_s=20)
    assert result.output.split() == ["Seccomp:", "0"]


async def test_a_real_fork_bomb_is_bounded_and_cleaned_up(
    box: BwrapSandbox, tmp_path: Path
) -> None:
    groups = Path("/sys/fs/cgroup/pids/helix")

    def ours() -> set[Path]:  # this process's cgroups (others on the machine make theirs)
        return {p for p in entries(groups) if p.name.startswith(f"{os.getpid()}-")}

    before = ours()
    result = await box.run("bomb() { bomb | bomb & }; bomb; sleep 2", cwd=tmp_path, timeout_s=5)
    assert result.exit_code is not None or result.timed_out
    marker = uuid.uuid4().hex
    after = await box.run(f"echo {marker}", cwd=tmp_path, timeout_s=10)
    assert after.output == f"{marker}\n"  # the host, and the tier, still work
    box.close()
    assert ours() <= before  # the sandbox's cgroups are emptied and removed


async def test_world_path_is_the_same_inside(box: BwrapSandbox, tmp_path: Path) -> None:
    write(tmp_path / "here.txt", "x")
    result = await box.run(f"ls {tmp_path}", cwd=tmp_path, timeout_s=20)
    assert result.output == "here.txt\n"


def _sleepers(marker: str) -> list[int]:
    """The command itself running (not the launcher or bwrap, whose arguments hold it)."""
    return [
        pid
        for pid in processes_mentioning(f"sleep {marker}")
        if alive(pid) and Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep\0")
    ]


_DRIVER = """
import asyncio, sys
from pathlib import Path
from helix.sandbox import BwrapSandbox

async def main(world, marker):
    await BwrapSandbox().run(f"sleep {marker}; touch late.txt", cwd=Path(world), timeout_s=60)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_the_sandbox_dies_with_helix(tmp_path: Path) -> None:
    marker = f"30.{uuid.uuid4().int % 10**6}"
    driver = subprocess.Popen([sys.executable, "-c", _DRIVER, str(tmp_path), marker])
    try:
        deadline = time.monotonic() + 20
        while not _sleepers(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _sleepers(marker), "the command never started"
    finally:
        driver.kill()
        driver.wait()
    try:
        assert wait_gone_now(f"sleep {marker}", within_s=5) == []
        assert not (tmp_path / "late.txt").exists()
    finally:
        kill_all(processes_mentioning(marker))


async def test_commands_get_no_network_without_an_egress_hook(
    box: BwrapSandbox, tmp_path: Path
) -> None:
    result = await box.run(
        "echo $http_proxy; cat /sys/class/net/*/operstate 2>&1 | head -1; ls /sys 2>&1",
        cwd=tmp_path,
        timeout_s=20,
    )
    assert result.output.splitlines()[0] == ""


async def test_egress_hook_is_asked_for_each_attempt(box: BwrapSandbox, tmp_path: Path) -> None:
    seen: list[tuple[str, int, str]] = []

    async def record(decision: EgressDecision) -> None:
        seen.append((decision.host, decision.port, decision.verdict))

    hook = policy_hook(EgressPolicy(allow=("allowed.invalid",)), record)
    fetch = (
        "import urllib.request as u\n"
        "for url in ('http://denied.example/', 'http://allowed.invalid:8080/x'):\n"
        "    try:\n"
        "        u.urlopen(url, timeout=10)\n"
        "    except Exception as e:\n"
        "        print(url, getattr(e, 'code', e))\n"
    )
    write(tmp_path / "fetch.py", fetch)
    result = await box.run("python3 fetch.py", cwd=tmp_path, timeout_s=30, egress=hook)
    assert seen == [("denied.example", 80, "deny"), ("allowed.invalid", 8080, "allow")]
    assert "http://denied.example/ 403" in result.output
    assert "http://allowed.invalid:8080/x 502" in result.output  # allowed, but no such host


async def test_more_read_only_paths_can_be_bound(tmp_path: Path) -> None:
    tools = tmp_path / "toolchain"
    tools.mkdir()
    write(tools / "tool.sh", "echo tool-ran")
    world = tmp_path / "world"
    world.mkdir()
    box = BwrapSandbox(read_only=[tools])
    result = await box.run(
        f"sh {tools}/tool.sh; echo x > {tools}/new 2>&1 || echo refused", cwd=world, timeout_s=20
    )
    assert result.output.splitlines()[0] == "tool-ran"
    assert "refused" in result.output
    assert not (tools / "new").exists()
    box.close()
