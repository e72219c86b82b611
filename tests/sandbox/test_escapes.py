"""One conformance and escape suite, run against every sandbox tier this host has.

Each attack asserts containment from the host's side (the file outside was not
written, the secret not read, the host process still lives, the connection never
arrived), not the command's exit code. Under ``bwrap`` every attack is contained;
the ``process`` tier is no boundary, and the attacks it lets through are listed in
``EXPECTED_ESCAPES``: a change either way fails the suite (docs/security.md quotes it).
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from helix.sandbox import BwrapSandbox, CommandResult, ProcessSandbox, Sandbox

from ._support import (
    Listener,
    alive,
    host_sleeper,
    kill_all,
    processes_mentioning,
    wait_gone,
)

ROOT = os.geteuid() == 0
TIERS = ("process", "bwrap")
SECRET = f"s3cr3t-{uuid.uuid4().hex}"

EXPECTED_ESCAPES: dict[str, set[str]] = {
    "bwrap": set(),
    "process": {
        "write_outside_world",
        "write_through_planted_symlink",
        "write_system_location",
        "read_file_outside_world",
        "read_helix_data_in_world",
        "read_host_process_environment",
        "signal_host_process",
        "reach_host_tcp_service",
        "reach_postgresql",
        "fork_bomb",
        "outlive_the_run",
        "create_namespaces",
    }
    | ({"read_private_system_file"} if ROOT else set()),
}
"""Attacks each tier does not contain. ``read_private_system_file`` (``/etc/shadow``)
is readable only by root, so the process tier lets it through only when Helix is root."""


class Arena:
    """A world, an outside directory with a secret, and the sandbox under test."""

    def __init__(self, tier: str, root: Path) -> None:
        self.tier = tier
        self.world = root / "world"
        self.outside = root / "outside"
        self.world.mkdir()
        self.outside.mkdir()
        self.secret_file = self.outside / "secret.txt"
        self.secret_file.write_text(SECRET)
        self.helix_data = self.world / "helix-data"
        self.helix_data.mkdir()
        (self.helix_data / "helix.db").write_text(SECRET)
        memory, cpu = 512 << 20, 60
        if tier == "bwrap":
            self.sandbox: Sandbox = BwrapSandbox(
                hidden=[self.helix_data], max_processes=64, max_memory_bytes=memory, cpu_seconds=cpu
            )
        else:
            self.sandbox = ProcessSandbox(max_memory_bytes=memory, cpu_seconds=cpu)

    async def run(self, command: str, timeout_s: float = 20) -> CommandResult:
        return await self.sandbox.run(command, cwd=self.world, timeout_s=timeout_s)

    def close(self) -> None:
        close = getattr(self.sandbox, "close", None)
        if close is not None:
            close()


@pytest.fixture(params=TIERS)
def arena(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Arena]:
    if request.param == "bwrap":
        request.getfixturevalue("bwrap_available")
    made = Arena(request.param, tmp_path)
    yield made
    made.close()


def judge(arena: Arena, case: str, contained: bool) -> None:
    """Containment must be exactly what the tier promises, in both directions."""
    expected = case not in EXPECTED_ESCAPES[arena.tier]
    verb = "contained" if contained else "escaped"
    assert contained == expected, f"{case} {verb} under {arena.tier}"


# -- conformance: every tier behaves as the Sandbox interface says ---------------------


async def test_output_exit_code_and_cwd(arena: Arena) -> None:
    result = await arena.run("pwd; echo out; echo err >&2; exit 3")
    assert result.exit_code == 3
    assert result.output == f"{arena.world}\nout\nerr\n"
    assert not result.timed_out
    assert not result.truncated


async def test_output_is_capped(arena: Arena) -> None:
    command = "head -c 100000 /dev/zero | tr '\\0' a"
    result = await arena.sandbox.run(command, cwd=arena.world, timeout_s=20, max_output=1000)
    assert result.truncated
    assert result.output == "a" * 1000 + "\n[output truncated: 99000 more bytes]"


async def test_world_is_writable(arena: Arena) -> None:
    result = await arena.run("mkdir -p sub && echo made > sub/file.txt && cat sub/file.txt")
    assert result.output == "made\n"
    assert (arena.world / "sub" / "file.txt").read_text() == "made\n"


async def test_timeout_kills_everything(arena: Arena) -> None:
    marker = f"1000.{uuid.uuid4().int % 10**6}"
    started = time.monotonic()
    result = await arena.run(f"sleep {marker} & sleep {marker}", timeout_s=0.5)
    assert time.monotonic() - started < 10
    assert result.timed_out
    assert result.exit_code is None
    assert await wait_gone(marker) == []


async def test_cancellation_kills_everything(arena: Arena) -> None:
    marker = f"1000.{uuid.uuid4().int % 10**6}"
    task = asyncio.create_task(arena.run(f"sleep {marker} & sleep {marker}", timeout_s=60))
    for _ in range(500):
        if len(processes_mentioning(marker)) >= 2:
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(marker) == []


async def test_environment_is_scrubbed(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("HELIX_DB", f"postgresql://u:{SECRET}@db/helix")
    result = await arena.run("env")
    assert SECRET not in result.output
    env = dict(line.split("=", 1) for line in result.output.splitlines() if "=" in line)
    assert env["HOME"] != os.environ.get("HOME")


async def test_missing_world_raises(arena: Arena) -> None:
    with pytest.raises(FileNotFoundError):
        await arena.sandbox.run("true", cwd=arena.world / "missing", timeout_s=5)


# -- escapes: attempts from inside, judged from outside --------------------------------


async def test_write_outside_world(arena: Arena) -> None:
    target = arena.outside / "pwned.txt"
    await arena.run(f"echo pwned > {target}; echo pwned > ../outside/pwned.txt")
    judge(arena, "write_outside_world", not target.exists())


async def test_write_through_planted_symlink(arena: Arena) -> None:
    await arena.run(f"ln -s {arena.outside} link; echo pwned > link/via-link.txt")
    judge(arena, "write_through_planted_symlink", not (arena.outside / "via-link.txt").exists())


async def test_write_system_location(arena: Arena) -> None:
    target = Path("/var/tmp") / f"helix-escape-{uuid.uuid4().hex}"
    try:
        await arena.run(f"echo pwned > {target}")
        judge(arena, "write_system_location", not target.exists())
    finally:
        target.unlink(missing_ok=True)


async def test_read_file_outside_world(arena: Arena) -> None:
    result = await arena.run(f"cat {arena.secret_file}; cat ../outside/secret.txt")
    judge(arena, "read_file_outside_world", SECRET not in result.output)


async def test_read_helix_data_in_world(arena: Arena) -> None:
    result = await arena.run("cat helix-data/helix.db; ls -la helix-data")
    judge(arena, "read_helix_data_in_world", SECRET not in result.output)


async def test_read_private_system_file(arena: Arena) -> None:
    result = await arena.run("cat /etc/shadow")
    judge(arena, "read_private_system_file", "root:" not in result.output)


async def test_read_host_process_environment(arena: Arena) -> None:
    host = host_sleeper({"PATH": "/usr/bin:/bin", "TOKEN": SECRET})
    try:
        result = await arena.run(f"cat /proc/{host.pid}/environ")
        judge(arena, "read_host_process_environment", SECRET not in result.output)
    finally:
        host.kill()
        host.wait()


async def test_signal_host_process(arena: Arena) -> None:
    host = host_sleeper()
    try:
        await arena.run(f"kill -9 {host.pid}")
        await asyncio.sleep(0.1)
        judge(arena, "signal_host_process", alive(host.pid) and host.poll() is None)
    finally:
        host.kill()
        host.wait()


async def test_reach_host_tcp_service(arena: Arena) -> None:
    listener = Listener()
    try:
        probe = f"import socket; socket.create_connection(('127.0.0.1', {listener.port}), 3)"
        await arena.run(f'python3 -c "{probe}"')
        await asyncio.sleep(0.2)
        judge(arena, "reach_host_tcp_service", listener.accepted == 0)
    finally:
        listener.close()


async def test_reach_postgresql(arena: Arena, postgres_url: str) -> None:
    probe = "import socket; socket.create_connection(('127.0.0.1', 5432), 3); print('connected')"
    result = await arena.run(f'python3 -c "{probe}"')
    judge(arena, "reach_postgresql", "connected" not in result.output)


async def test_fork_bomb(arena: Arena) -> None:
    bomb = (
        "import os, time\n"
        "n = 0\n"
        "for _ in range(300):\n"
        "    try:\n"
        "        pid = os.fork()\n"
        "    except OSError:\n"
        "        break\n"
        "    if pid == 0:\n"
        "        time.sleep(3)\n"
        "        os._exit(0)\n"
        "    n += 1\n"
        "print('forked', n)\n"
    )
    (arena.world / "bomb.py").write_text(bomb)
    result = await arena.run("python3 bomb.py", timeout_s=30)
    forked = int(result.output.split("forked")[-1].split()[0]) if "forked" in result.output else 0
    judge(arena, "fork_bomb", forked < 300)


async def test_memory_exhaustion(arena: Arena) -> None:
    result = await arena.run("python3 -c \"b = bytearray(2 << 30); print('allocated')\"")
    judge(arena, "memory_exhaustion", "allocated" not in result.output)


async def test_outlive_the_run(arena: Arena) -> None:
    marker = f"1000.{uuid.uuid4().int % 10**6}"
    command = (
        f"setsid sleep {marker} </dev/null >/dev/null 2>&1 & "
        f"nohup sh -c 'sleep {marker}' </dev/null >/dev/null 2>&1 & "
        "sleep 0.5; echo started"  # time for both to leave (or try to leave) the group
    )
    try:
        result = await arena.run(command)
        assert "started" in result.output
        left = await wait_gone(marker, within_s=1.5)
        judge(arena, "outlive_the_run", left == [])
    finally:
        kill_all(processes_mentioning(marker))


async def test_create_namespaces(arena: Arena) -> None:
    result = await arena.run("unshare --user --map-root-user true && echo unshared")
    judge(arena, "create_namespaces", "unshared" not in result.output)


def test_expected_escapes_name_real_cases() -> None:
    cases = {name.removeprefix("test_") for name in globals() if name.startswith("test_")}
    for tier, escapes in EXPECTED_ESCAPES.items():
        assert escapes <= cases, f"{tier}: unknown cases {escapes - cases}"
