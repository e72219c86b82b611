"""The conformance and escape suite every sandbox tier must pass.

Subclass ``SandboxConformance`` in a test module (its name must start with ``Test``),
provide a ``sandbox`` fixture (the tier under test, built with the class's limits and
hiding ``arena.helix_data``; it may take the ``arena`` fixture) and declare the attacks
the tier lets through in ``expected_escapes``. Each attack is judged from the host's
side (the file outside was not written, the secret not read, the host process still
lives, the connection never arrived), and must come out exactly as declared: an
escape not listed fails, and so does a listed escape that is now contained (update
the list). The async tests need pytest-asyncio in ``auto`` mode.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar

import pytest

from helix.sandbox import CommandResult, Sandbox
from helix.testing._host import (
    Listener,
    alive,
    host_sleeper,
    kill_all,
    processes_mentioning,
    wait_gone,
)

from ._sandbox_arena import (
    ATTACKS,
    FORK_BOMB,
    NONBLOCKING_PROBE,
    TOOLS,
    SandboxArena,
    sleep_marker,
)


class SandboxConformance:
    """What every sandbox tier does, and the attacks it must contain. Subclass it."""

    expected_escapes: ClassVar[frozenset[str]] = frozenset()
    """Ids (keys of ``attacks``) of the attacks this tier does not contain."""
    attacks: ClassVar[Mapping[str, str]] = MappingProxyType(ATTACKS)
    """Every attack's stable id and what it tries."""
    max_processes: ClassVar[int] = 64
    """The process limit the ``sandbox`` fixture should set (the fork bomb tries 300)."""
    max_memory_bytes: ClassVar[int] = 512 << 20
    """The memory limit the ``sandbox`` fixture should set (the attack asks for 2 GiB)."""
    cpu_seconds: ClassVar[int] = 60
    """The CPU limit the ``sandbox`` fixture should set."""
    timeout_s: ClassVar[float] = 20.0
    """Each command's timeout (raise it for tiers slow to start)."""

    @pytest.fixture
    def arena(self, tmp_path: Path) -> SandboxArena:
        """The world and what lies outside it, fresh for each test."""
        return SandboxArena.build(tmp_path)

    @pytest.fixture
    def postgres_address(self) -> tuple[str, int]:
        """Where a PostgreSQL server listens on the host (the attack skips if none does)."""
        return ("127.0.0.1", 5432)

    async def _run(
        self, sandbox: Sandbox, arena: SandboxArena, command: str, timeout_s: float | None = None
    ) -> CommandResult:
        timeout = self.timeout_s if timeout_s is None else timeout_s
        return await sandbox.run(command, cwd=arena.world, timeout_s=timeout)

    def _judge(self, sandbox: Sandbox, attack: str, contained: bool) -> None:
        """Containment must be exactly what the tier declares, in both directions."""
        assert attack in self.attacks, f"unknown attack id {attack!r}"
        where = f"{type(self).__name__} ({sandbox.tier})"
        if attack in self.expected_escapes:
            assert not contained, (
                f"{attack} is now contained under {where}, but expected_escapes lists it:"
                " remove it from the list"
            )
        else:
            assert contained, f"{attack} escaped under {where}: {self.attacks[attack]}"

    # -- the suite itself -----------------------------------------------------------

    def test_expected_escapes_are_known_attacks(self) -> None:
        unknown = set(self.expected_escapes) - set(self.attacks)
        assert not unknown, f"expected_escapes names unknown attacks: {sorted(unknown)}"

    def test_every_attack_is_tried(self) -> None:
        for attack in self.attacks:
            assert callable(getattr(self, f"test_{attack}", None)), attack

    # -- conformance: the tier behaves as the Sandbox interface says ------------------

    async def test_attack_tools_are_present(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        probe = "; ".join(f"command -v {tool} >/dev/null || echo missing {tool}" for tool in TOOLS)
        result = await self._run(sandbox, arena, probe)
        missing = [line.split()[-1] for line in result.output.splitlines() if "missing" in line]
        assert not missing, f"the attacks cannot run: missing {', '.join(missing)}"

    async def test_output_exit_code_and_cwd(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        result = await self._run(sandbox, arena, "pwd; echo out; echo err >&2; exit 3")
        assert result.exit_code == 3
        assert result.output == f"{arena.world}\nout\nerr\n"
        assert not result.timed_out
        assert not result.truncated

    async def test_output_is_capped(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        command = "head -c 100000 /dev/zero | tr '\\0' a"
        result = await sandbox.run(
            command, cwd=arena.world, timeout_s=self.timeout_s, max_output=1000
        )
        assert result.truncated
        assert result.output == "a" * 1000 + "\n[output truncated: 99000 more bytes]"

    async def test_output_is_written_blocking(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        """A command writing faster than Helix reads waits; it never fails with EAGAIN."""
        result = await self._run(sandbox, arena, f'python3 -c "{NONBLOCKING_PROBE}"')
        assert result.output == "[0, 0]\n", result.output

    async def test_world_is_writable(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        command = "mkdir -p sub && echo made > sub/file.txt && cat sub/file.txt"
        result = await self._run(sandbox, arena, command)
        assert result.output == "made\n"
        assert (arena.world / "sub" / "file.txt").read_text() == "made\n"

    async def test_timeout_kills_everything(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        marker = sleep_marker()
        result = await self._run(sandbox, arena, f"sleep {marker} & sleep {marker}", 0.5)
        assert result.timed_out
        assert result.exit_code is None
        assert await wait_gone(marker) == []

    async def test_cancellation_kills_everything(
        self, sandbox: Sandbox, arena: SandboxArena
    ) -> None:
        marker = sleep_marker()
        command = f"sleep {marker} & sleep {marker}"
        async with asyncio.TaskGroup() as group:
            task = group.create_task(self._run(sandbox, arena, command, 60))
            for _ in range(500):
                if len(processes_mentioning(marker)) >= 2:
                    break
                await asyncio.sleep(0.02)
            task.cancel()
        assert task.cancelled()  # the cancellation came back out of run()
        assert await wait_gone(marker) == []

    async def test_environment_is_scrubbed(
        self, sandbox: Sandbox, arena: SandboxArena, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("OPENAI_API_KEY", arena.secret)
        monkeypatch.setenv("HELIX_DB", f"postgresql://u:{arena.secret}@db/helix")
        result = await self._run(sandbox, arena, "env")
        assert arena.secret not in result.output
        env = dict(line.split("=", 1) for line in result.output.splitlines() if "=" in line)
        assert env["HOME"] != os.environ.get("HOME")

    async def test_missing_world_raises(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        with pytest.raises(FileNotFoundError):
            await sandbox.run("true", cwd=arena.world / "missing", timeout_s=self.timeout_s)

    # -- escapes: attempts from inside, judged from outside ----------------------------

    async def test_write_outside_world(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        target = arena.outside / "pwned.txt"
        command = f"echo pwned > {target}; echo pwned > ../outside/pwned.txt"
        await self._run(sandbox, arena, command)
        self._judge(sandbox, "write_outside_world", not target.exists())

    async def test_write_through_planted_symlink(
        self, sandbox: Sandbox, arena: SandboxArena
    ) -> None:
        await self._run(sandbox, arena, f"ln -s {arena.outside} link; echo pwned > link/in.txt")
        contained = not (arena.outside / "in.txt").exists()
        self._judge(sandbox, "write_through_planted_symlink", contained)

    async def test_write_world_parent_through_proc(
        self, sandbox: Sandbox, arena: SandboxArena
    ) -> None:
        await self._run(sandbox, arena, "echo pwned > /proc/self/cwd/../pwned.txt")
        contained = not (arena.world.parent / "pwned.txt").exists()
        self._judge(sandbox, "write_world_parent_through_proc", contained)

    async def test_write_system_location(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        target = Path("/var/tmp") / f"helix-escape-{uuid.uuid4().hex}"
        try:
            await self._run(sandbox, arena, f"echo pwned > {target}")
            self._judge(sandbox, "write_system_location", not target.exists())
        finally:
            target.unlink(missing_ok=True)

    async def test_read_file_outside_world(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        command = f"cat {arena.secret_file}; cat ../outside/secret.txt"
        result = await self._run(sandbox, arena, command)
        self._judge(sandbox, "read_file_outside_world", arena.secret not in result.output)

    async def test_read_host_root_through_proc(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        host = host_sleeper()
        try:
            command = (
                f"cat /proc/1/root{arena.secret_file} /proc/{host.pid}/root{arena.secret_file}"
            )
            result = await self._run(sandbox, arena, command)
            contained = arena.secret not in result.output
            self._judge(sandbox, "read_host_root_through_proc", contained)
        finally:
            host.kill()
            host.wait()

    async def test_read_helix_data_in_world(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        name = arena.helix_data.relative_to(arena.world)
        result = await self._run(sandbox, arena, f"cat {name}/helix.db; ls -la {name}")
        self._judge(sandbox, "read_helix_data_in_world", arena.secret not in result.output)

    async def test_read_private_system_file(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        result = await self._run(sandbox, arena, "cat /etc/shadow")
        self._judge(sandbox, "read_private_system_file", "root:" not in result.output)

    async def test_read_host_process_environment(
        self, sandbox: Sandbox, arena: SandboxArena
    ) -> None:
        host = host_sleeper({"PATH": "/usr/bin:/bin", "TOKEN": arena.secret})
        try:
            result = await self._run(sandbox, arena, f"cat /proc/{host.pid}/environ")
            contained = arena.secret not in result.output
            self._judge(sandbox, "read_host_process_environment", contained)
        finally:
            host.kill()
            host.wait()

    async def test_signal_host_process(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        host = host_sleeper()
        try:
            await self._run(sandbox, arena, f"kill -9 {host.pid}")
            await asyncio.sleep(0.1)
            contained = alive(host.pid) and host.poll() is None
            self._judge(sandbox, "signal_host_process", contained)
        finally:
            host.kill()
            host.wait()

    async def test_reach_host_tcp_service(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        listener = Listener()
        try:
            probe = f"import socket; socket.create_connection(('127.0.0.1', {listener.port}), 3)"
            await self._run(sandbox, arena, f'python3 -c "{probe}"')
            await asyncio.sleep(0.2)
            self._judge(sandbox, "reach_host_tcp_service", listener.accepted == 0)
        finally:
            listener.close()

    async def test_reach_postgresql(
        self, sandbox: Sandbox, arena: SandboxArena, postgres_address: tuple[str, int]
    ) -> None:
        try:
            with contextlib.closing(socket.create_connection(postgres_address, 3)):
                pass
        except OSError as error:
            pytest.skip(f"no PostgreSQL answers the host at {postgres_address}: {error}")
        host, port = postgres_address
        probe = (
            f"import socket; socket.create_connection(('{host}', {port}), 3); print('connected')"
        )
        result = await self._run(sandbox, arena, f'python3 -c "{probe}"')
        self._judge(sandbox, "reach_postgresql", "connected" not in result.output)

    async def test_fork_bomb(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        (arena.world / "bomb.py").write_text(FORK_BOMB)
        result = await self._run(sandbox, arena, "python3 bomb.py", max(self.timeout_s, 30))
        words = result.output.split("forked")
        forked = int(words[-1].split()[0]) if len(words) > 1 else 0
        self._judge(sandbox, "fork_bomb", forked < 300)

    async def test_memory_exhaustion(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        command = "python3 -c \"b = bytearray(2 << 30); print('allocated')\""
        result = await self._run(sandbox, arena, command)
        self._judge(sandbox, "memory_exhaustion", "allocated" not in result.output)

    async def test_outlive_the_run(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        marker = sleep_marker()
        command = (
            f"setsid sleep {marker} </dev/null >/dev/null 2>&1 & "
            f"nohup sh -c 'sleep {marker}' </dev/null >/dev/null 2>&1 & "
            "sleep 0.5; echo started"  # time for both to leave (or try to leave) the group
        )
        try:
            result = await self._run(sandbox, arena, command)
            assert "started" in result.output
            left = await wait_gone(marker, within_s=1.5)
            self._judge(sandbox, "outlive_the_run", left == [])
        finally:
            kill_all(processes_mentioning(marker))

    async def test_create_namespaces(self, sandbox: Sandbox, arena: SandboxArena) -> None:
        command = "unshare --user --map-root-user true && echo unshared"
        result = await self._run(sandbox, arena, command)
        self._judge(sandbox, "create_namespaces", "unshared" not in result.output)
