"""Every sandbox tier this host has, through ``helix.testing.conformance.SandboxConformance``.

Under ``bwrap`` every attack is contained; the ``process`` tier is no boundary, and the
attacks it lets through are its ``expected_escapes`` (docs/security.md quotes them).
A change either way fails. ``docker`` runs only where an engine answers.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from helix.sandbox import BwrapSandbox, DockerSandbox, ProcessSandbox, Sandbox, tier_statuses
from helix.testing.conformance import SandboxArena, SandboxConformance

ROOT = os.geteuid() == 0


class _HelixTier(SandboxConformance):
    """Helix's own runs: the PostgreSQL attack needs the test server (CI fails without)."""

    @pytest.fixture
    def postgres_address(self, postgres_url: str) -> tuple[str, int]:
        url = urlsplit(postgres_url)
        return (url.hostname or "127.0.0.1", url.port or 5432)


class TestProcessTier(_HelixTier):
    """No boundary: only the environment is scrubbed and memory bounded.

    ``max_processes`` is left at its default: the rlimit ignores root, and for another
    user it counts all their processes, so the fork bomb escapes either way.
    """

    expected_escapes = frozenset(
        {
            "write_outside_world",
            "write_through_planted_symlink",
            "write_world_parent_through_proc",
            "write_system_location",
            "read_file_outside_world",
            "read_host_root_through_proc",
            "read_helix_data_in_world",
            "read_host_process_environment",
            "signal_host_process",
            "reach_host_tcp_service",
            "reach_postgresql",
            "fork_bomb",
            "outlive_the_run",
            "create_namespaces",
        }
        | ({"read_private_system_file"} if ROOT else set())  # /etc/shadow is root's
    )

    @pytest.fixture
    def sandbox(self) -> Iterator[Sandbox]:
        box = ProcessSandbox(max_memory_bytes=self.max_memory_bytes, cpu_seconds=self.cpu_seconds)
        yield box
        box.close()


class TestBwrapTier(_HelixTier):
    """Every attack contained."""

    expected_escapes = frozenset()

    @pytest.fixture
    def sandbox(self, arena: SandboxArena, bwrap_available: None) -> Iterator[Sandbox]:
        box = BwrapSandbox(
            hidden=[arena.helix_data],
            max_processes=self.max_processes,
            max_memory_bytes=self.max_memory_bytes,
            cpu_seconds=self.cpu_seconds,
        )
        yield box
        box.close()


@pytest.fixture
def docker_available() -> None:
    status = next(s for s in tier_statuses() if s.tier == "docker")
    if not status.available:
        pytest.skip(f"no Docker engine here (expected on CI machines): {status.reason}")


class TestDockerTier(_HelixTier):
    """The container tier cannot mask paths inside the world it mounts (not measured:
    no Docker engine runs where this suite was last run)."""

    expected_escapes = frozenset({"read_helix_data_in_world"})
    timeout_s = 120.0  # the first command may pull the image

    @pytest.fixture
    def sandbox(self, docker_available: None) -> Iterator[Sandbox]:
        box = DockerSandbox(
            image="python:3.12-slim",  # the attacks need python3
            pids=self.max_processes,
            memory_bytes=self.max_memory_bytes,
            cpu_seconds=self.cpu_seconds,
        )
        yield box
        box.close()


# -- the suite's judgement itself: a wrong list fails, in both directions --------------


class _Forgetful(SandboxConformance):
    expected_escapes = frozenset()


class _Stale(SandboxConformance):
    expected_escapes = frozenset({"memory_exhaustion"})


class _Typo(SandboxConformance):
    expected_escapes = frozenset({"write_outside_wrld"})


@pytest.fixture
def process_box() -> Iterator[ProcessSandbox]:
    box = ProcessSandbox(max_memory_bytes=512 << 20)
    yield box
    box.close()


async def test_an_unlisted_escape_fails(process_box: ProcessSandbox, tmp_path: Path) -> None:
    arena = SandboxArena.build(tmp_path)
    with pytest.raises(AssertionError, match="write_outside_world escaped under _Forgetful"):
        await _Forgetful().test_write_outside_world(process_box, arena)
    assert (arena.outside / "pwned.txt").exists()  # it did escape, for real


async def test_a_listed_escape_now_contained_fails(
    process_box: ProcessSandbox, tmp_path: Path
) -> None:
    arena = SandboxArena.build(tmp_path)
    with pytest.raises(AssertionError, match=r"now contained .* remove it from the list"):
        await _Stale().test_memory_exhaustion(process_box, arena)


def test_an_unknown_attack_id_fails() -> None:
    with pytest.raises(AssertionError, match="unknown attacks: \\['write_outside_wrld'\\]"):
        _Typo().test_expected_escapes_are_known_attacks()


async def test_a_sandbox_without_the_attack_tools_fails(tmp_path: Path) -> None:
    box = ProcessSandbox(extra_env={"PATH": str(tmp_path / "empty")})
    try:
        with pytest.raises(AssertionError, match="the attacks cannot run: missing sh, cat, env"):
            await _Forgetful().test_attack_tools_are_present(box, SandboxArena.build(tmp_path))
    finally:
        box.close()
