"""The process sandbox, with real child processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from helix.errors import ConfigError
from helix.sandbox import CommandResult, ProcessSandbox, Sandbox
from helix.sandbox._git_env import git_environment


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs; a zombie counts as dead.

    A killed grandchild is re-parented to PID 1, which in some containers never reaps
    it, so ``os.kill(pid, 0)`` keeps succeeding on the corpse.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):  # reaped between the two looks
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


async def wait_dead(*pids: int, within_s: float = 3.0) -> list[int]:
    """The pids still alive after ``within_s`` seconds (empty when all died)."""
    for _ in range(int(within_s / 0.02)):
        if not any(alive(p) for p in pids):
            break
        await asyncio.sleep(0.02)
    return [p for p in pids if alive(p)]


def is_dir(path: str) -> bool:
    return Path(path).is_dir()


async def read_pids(*files: Path, within_s: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        texts = [f.read_text().strip() if f.exists() else "" for f in files]
        if all(texts):
            return [int(t) for t in texts]
        await asyncio.sleep(0.02)
    raise AssertionError(f"the command never wrote {files}")


async def run(command: str, cwd: Path, **options: object) -> CommandResult:
    sandbox = ProcessSandbox()
    try:
        return await sandbox.run(command, cwd=cwd, **options)  # type: ignore[arg-type]
    finally:
        sandbox.close()


@pytest.fixture
def sandbox():
    box = ProcessSandbox()
    yield box
    box.close()


def test_is_a_process_tier_sandbox() -> None:
    assert isinstance(ProcessSandbox(), Sandbox)
    assert ProcessSandbox.tier == "process"


async def test_output_is_merged_and_exit_code_kept(sandbox, tmp_path) -> None:
    result = await sandbox.run("echo out; echo err >&2; exit 3", cwd=tmp_path, timeout_s=10)
    assert result.exit_code == 3
    assert result.output == "out\nerr\n"
    assert not result.truncated
    assert not result.timed_out
    assert result.duration_ms > 0


async def test_runs_in_cwd_with_empty_stdin(sandbox, tmp_path) -> None:
    result = await sandbox.run("pwd; cat; echo done", cwd=tmp_path, timeout_s=10)
    assert result.output == f"{tmp_path}\ndone\n"
    assert result.exit_code == 0


async def test_timeout_kills_and_reports(sandbox, tmp_path) -> None:
    result = await sandbox.run("echo before; sleep 300", cwd=tmp_path, timeout_s=0.3)
    assert result.timed_out
    assert result.duration_ms < 150_000  # killed, not waited for: far below the sleep
    assert result.exit_code is None
    assert result.output == "before\n"


async def test_timeout_kills_the_whole_group(sandbox, tmp_path) -> None:
    command = "sleep 1000 & echo $! > child.pid; sleep 1000"
    result = await sandbox.run(command, cwd=tmp_path, timeout_s=0.5)
    assert result.timed_out
    (child,) = await read_pids(tmp_path / "child.pid")
    assert await wait_dead(child) == []


async def test_leftovers_are_killed_when_the_shell_exits(sandbox, tmp_path) -> None:
    result = await sandbox.run("sleep 1000 & echo $! > child.pid", cwd=tmp_path, timeout_s=60)
    assert not result.timed_out  # not held until the timeout by the child's pipe
    assert result.exit_code == 0
    (child,) = await read_pids(tmp_path / "child.pid")
    assert await wait_dead(child) == []


async def test_cancellation_kills_the_process_group(sandbox, tmp_path) -> None:
    command = (
        "echo $$ > shell.pid; "
        "sleep 1000 & echo $! > child.pid; "
        "sh -c 'sleep 1000 & echo $! > grandchild.pid; wait' & "
        "wait"
    )
    task = asyncio.create_task(sandbox.run(command, cwd=tmp_path, timeout_s=60))
    pids = await read_pids(*(tmp_path / f"{n}.pid" for n in ("shell", "child", "grandchild")))
    assert all(alive(p) for p in pids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_dead(*pids) == []
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)  # the shell is our own child: reaped, not just dead


async def test_output_is_capped_with_a_marker(sandbox, tmp_path) -> None:
    command = "head -c 100000 /dev/zero | tr '\\0' a"
    result = await sandbox.run(command, cwd=tmp_path, timeout_s=10, max_output=1000)
    assert result.truncated
    assert result.exit_code == 0
    assert result.output == "a" * 1000 + "\n[output truncated: 99000 more bytes]"


async def test_huge_output_never_blocks_the_command(sandbox, tmp_path) -> None:
    command = "head -c 20000000 /dev/zero; echo finished >&2; echo finished > done"
    result = await sandbox.run(command, cwd=tmp_path, timeout_s=30, max_output=10)
    assert result.exit_code == 0
    assert (tmp_path / "done").read_text() == "finished\n"
    assert result.output.endswith(
        "[output truncated: 19999999 more bytes]"
    )  # 20 MB + "finished\n" - 10 kept


async def test_output_is_decoded_leniently(sandbox, tmp_path) -> None:
    result = await sandbox.run("printf 'caf\\303\\251 \\377'", cwd=tmp_path, timeout_s=10)
    assert result.output == "café \ufffd"
    # A cut inside a two-byte character drops it rather than showing U+FFFD.
    cut = await sandbox.run(
        "printf '\\303\\251\\303\\251'", cwd=tmp_path, timeout_s=10, max_output=3
    )
    assert cut.output == "é\n[output truncated: 1 more bytes]"


async def test_environment_is_scrubbed(sandbox, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("HELIX_DB", "postgresql://secret@db/helix")
    monkeypatch.setenv("MY_SECRET", "hunter2hunter2")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_should_not_leak")
    monkeypatch.setenv("UNRELATED_SETTING", "not allowlisted either")
    monkeypatch.setenv("LANG", "C.UTF-8")
    result = await sandbox.run("env", cwd=tmp_path, timeout_s=10)
    env = dict(line.split("=", 1) for line in result.output.splitlines() if "=" in line)
    for leaked in ("sk-should", "secret@db", "hunter2", "ghp_", "not allowlisted"):
        assert leaked not in result.output
    allowed = {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"}
    allowed |= set(git_environment())  # fixed values, not Helix's (sandbox/_git_env.py)
    assert set(env) <= allowed | {"PWD"}  # the shell sets PWD itself
    assert env["LANG"] == "C.UTF-8"
    assert env["PATH"]
    assert env["HOME"] != os.environ.get("HOME")
    assert is_dir(env["HOME"])
    assert is_dir(env["TMPDIR"])


async def test_private_home_is_removed_on_close(tmp_path) -> None:
    box = ProcessSandbox()
    result = await box.run("echo $HOME", cwd=tmp_path, timeout_s=10)
    home = result.output.strip()
    assert is_dir(home)
    box.close()
    assert not is_dir(home)


async def test_home_can_be_given(tmp_path) -> None:
    box = ProcessSandbox(home=tmp_path)
    result = await box.run("echo $HOME", cwd=tmp_path, timeout_s=10)
    assert result.output == f"{tmp_path}\n"


async def test_extra_env_is_added(tmp_path) -> None:
    box = ProcessSandbox(extra_env={"GREETING": "hello"})
    result = await box.run("echo $GREETING", cwd=tmp_path, timeout_s=10)
    assert result.output == "hello\n"
    box.close()


@pytest.mark.parametrize(
    "name", ["OPENAI_API_KEY", "GH_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "HELIX_DB"]
)
def test_extra_env_refuses_secret_names(name: str) -> None:
    with pytest.raises(ConfigError, match=name):
        ProcessSandbox(extra_env={name: "x"})


async def test_rlimits_apply_in_the_child(tmp_path) -> None:
    box = ProcessSandbox(cpu_seconds=7, max_open_files=64, max_file_bytes=1 << 20)
    result = await box.run("ulimit -t; ulimit -n; ulimit -f", cwd=tmp_path, timeout_s=10)
    # dash reports the file size limit in 512-byte blocks.
    assert result.output.split() == ["7", "64", str((1 << 20) // 512)]


async def test_file_size_limit_stops_a_big_write(tmp_path) -> None:
    box = ProcessSandbox(max_file_bytes=1 << 20)
    result = await box.run("head -c 5000000 /dev/zero > big", cwd=tmp_path, timeout_s=10)
    assert result.exit_code != 0
    assert (tmp_path / "big").stat().st_size <= 1 << 20


async def test_cpu_limit_stops_a_busy_loop(tmp_path) -> None:
    box = ProcessSandbox(cpu_seconds=1)
    result = await box.run("while :; do :; done", cwd=tmp_path, timeout_s=30)
    assert not result.timed_out  # the CPU limit ended it, not the timeout
    assert result.exit_code not in (0, None)


async def test_missing_cwd_raises(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        await run("true", tmp_path / "missing", timeout_s=5)


async def test_an_escaped_process_does_not_hold_the_call(sandbox, tmp_path) -> None:
    # setsid leaves the group, so it survives (a documented limit of this tier), but
    # its hold on the output pipe must not keep the call waiting.
    command = "setsid sleep 1000 & echo $! > escaped.pid; sleep 0.3; echo done"
    result = await sandbox.run(command, cwd=tmp_path, timeout_s=60)
    try:
        assert not result.timed_out  # the survivor's pipe did not hold the call
        assert result.exit_code == 0
        assert result.output == "done\n"
    finally:
        (escaped,) = await read_pids(tmp_path / "escaped.pid")
        os.kill(escaped, 9)


async def test_limits_cannot_be_lifted_by_the_command(tmp_path) -> None:
    box = ProcessSandbox(max_open_files=64)
    # Root may raise hard limits (CAP_SYS_RESOURCE); as root, drop to nobody to check.
    prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups " if os.geteuid() == 0 else ""
    result = await box.run(f"{prefix}sh -c 'ulimit -n 128'", cwd=tmp_path, timeout_s=10)
    assert result.exit_code != 0
    lowered = f"{prefix}sh -c 'ulimit -n 32 && ulimit -n'"
    allowed = await box.run(lowered, cwd=tmp_path, timeout_s=10)
    assert allowed.output.strip() == "32"


_DRIVER = """
import asyncio, sys
from collections.abc import Callable
from pathlib import Path
from helix.sandbox import ProcessSandbox

async def main(world):
    box = ProcessSandbox()
    await box.run("echo $$ > shell.pid; sleep 30; touch late.txt", cwd=Path(world), timeout_s=60)

asyncio.run(main(sys.argv[1]))
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"  # a zombie has exited; only its exit status is left


def _wait_for(condition: Callable[[], object], within_s: float) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_the_command_dies_with_helix(tmp_path) -> None:
    """A kill -9 of the process running Helix takes the shell down with it."""
    driver = subprocess.Popen([sys.executable, "-c", _DRIVER, str(tmp_path)])
    pid_file = tmp_path / "shell.pid"
    try:
        _wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), 20)
        shell = int(pid_file.read_text())
        assert _alive(shell)
    finally:
        driver.kill()
        driver.wait()
    _wait_for(lambda: not _alive(shell), 5)
    assert not (tmp_path / "late.txt").exists()
