"""The podman tier, run for real: its profile, the escape suite, and its live box."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from helix.errors import ConfigError
from helix.sandbox import (
    EgressDecision,
    EgressPolicy,
    PodmanSandbox,
    Sandbox,
    policy_hook,
    tier_status,
)
from helix.sandbox._podman_box import PodmanBox
from helix.testing import kill_all, processes_mentioning, wait_gone_now
from helix.testing.conformance import SandboxArena, SandboxConformance
from tests.conftest import podman_tier

pytestmark = podman_tier  # one worker imports the image and runs every podman test


async def gone(marker: str, within_s: float) -> list[int]:
    """The host's processes still mentioning ``marker`` after at most ``within_s``."""
    return await asyncio.to_thread(wait_gone_now, marker, within_s)


class TestPodmanTier(SandboxConformance):
    """Every attack contained."""

    expected_escapes = frozenset()

    @pytest.fixture
    def sandbox(self, arena: SandboxArena, podman_available: None) -> Iterator[Sandbox]:
        box = PodmanSandbox(
            hidden=[arena.helix_data],
            pids=self.max_processes,
            memory_bytes=self.max_memory_bytes,
            cpu_seconds=self.cpu_seconds,
        )
        yield box
        box.close()


@pytest.fixture
def podman(podman_available: None) -> Iterator[PodmanSandbox]:
    sandbox = PodmanSandbox(pids=128, memory_bytes=512 << 20)
    yield sandbox
    sandbox.close()


@pytest.fixture
async def box(podman: PodmanSandbox, tmp_path: Path) -> AsyncIterator[PodmanBox]:
    opened = await podman.open_box(cwd=tmp_path)
    try:
        yield opened
    finally:
        await opened.close()


def containers(sandbox: PodmanSandbox) -> list[str]:
    """The names of Helix's podman containers that exist now, judged by podman itself."""
    home = sandbox.folder
    env = {
        "PATH": os.environ["PATH"],
        "CONTAINERS_CONF": str(home / "containers.conf"),
        "CONTAINERS_STORAGE_CONF": str(home / "storage.conf"),
    }
    done = subprocess.run(
        ["podman", "ps", "--all", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    return [name for entry in json.loads(done.stdout or "[]") for name in entry["Names"]]


def test_the_tier_is_registered_but_never_chosen_unasked() -> None:
    from helix.sandbox._tiers import AUTOMATIC, TIERS

    assert TIERS.index("podman") == TIERS.index("docker") + 1
    assert "podman" not in AUTOMATIC
    assert tier_status("podman").tier == "podman"


def test_the_profile_holds_every_flag(tmp_path: Path, podman: PodmanSandbox) -> None:
    import helix.sandbox._podman as module

    home = module._home(podman.folder)
    argv = " ".join(podman.profile(home, tmp_path, name="x", tmp_bytes=1 << 20))
    for flag in (
        "--rm",
        "--init",
        "--cap-drop=ALL",
        "--security-opt=no-new-privileges",
        "--read-only",
        "--network=none",
        "--memory=536870912",
        "--memory-swap=536870912",
        "--pids-limit=128",
        "/tmp:rw,nosuid,nodev,size=1048576",
        f"type=bind,source={tmp_path},destination={tmp_path}",
        "type=bind,source=/usr,destination=/usr,ro=true",
        f"--workdir {tmp_path}",
    ):
        assert flag in argv, flag
    if os.geteuid() == 0:
        assert "--user 65534:65534" in argv
        assert "--uidmap=65534:0:1" in argv
    assert "/etc/shadow" not in argv
    assert "OPENAI" not in argv


async def test_the_user_is_nobody_and_the_world_stays_helix_s(
    podman: PodmanSandbox, tmp_path: Path
) -> None:
    result = await podman.run(
        "id -u; echo made > made.txt; echo $HOME; touch ~/x && echo home-ok; hostname",
        cwd=tmp_path,
        timeout_s=30,
    )
    user = "65534" if os.geteuid() == 0 else str(os.getuid())
    assert result.output.splitlines() == [user, "/tmp", "home-ok", "helix-sandbox"]
    assert (tmp_path / "made.txt").stat().st_uid == os.getuid()


async def test_tmp_is_capped(podman: PodmanSandbox, tmp_path: Path) -> None:
    fill = "head -c 3000000 /dev/zero > /tmp/big || echo full"
    result = await podman.run(fill, cwd=tmp_path, timeout_s=30, tmp_bytes=1 << 20)
    assert "full" in result.output


async def test_egress_goes_through_the_proxy_in_a_command(
    podman: PodmanSandbox, tmp_path: Path, web: int
) -> None:
    seen: list[tuple[str, int, str]] = []

    async def record(decision: EgressDecision) -> None:
        seen.append((decision.host, decision.port, decision.verdict))

    hook = policy_hook(EgressPolicy(allow=("127.0.0.1",)), record)
    fetch = (
        "import urllib.request as u\n"
        f"print(u.urlopen('http://127.0.0.1:{web}/', timeout=10).read().decode().strip())\n"
        "try:\n"
        "    u.urlopen('http://denied.example/', timeout=10)\n"
        "except Exception as e:\n"
        "    print(getattr(e, 'code', e))\n"
    )
    (tmp_path / "fetch.py").write_text(fetch)
    result = await podman.run("python3 fetch.py", cwd=tmp_path, timeout_s=30, egress=hook)
    assert result.output.splitlines() == ["hello from the host", "403"], result.output
    assert seen == [("127.0.0.1", web, "allow"), ("denied.example", 80, "deny")]


async def test_a_box_runs_commands_in_the_world(box: PodmanBox, tmp_path: Path) -> None:
    result = await box.exec(["/bin/sh", "-c", "pwd; echo out; echo err >&2; exit 3"], timeout_s=30)
    assert result.exit_code == 3
    assert result.output == f"{tmp_path}\nout\nerr\n"
    much = ["sh", "-c", "head -c 5000 /dev/zero | tr '\\0' a"]
    capped = await box.exec(much, timeout_s=30, max_output=100)
    assert capped.truncated
    assert capped.output == "a" * 100 + "\n[output truncated: 4900 more bytes]"
    state = await box.exec(["sh", "-c", f"touch {box.state_dir}/x && echo ok"], timeout_s=30)
    assert state.output == "ok\n"
    assert not (tmp_path / "x").exists()


async def test_a_background_process_lives_until_the_box_closes(
    podman: PodmanSandbox, tmp_path: Path
) -> None:
    marker = f"1000.{uuid.uuid4().int % 10**6}"
    box = await podman.open_box(cwd=tmp_path)
    try:
        background = f"setsid sh -c 'sleep {marker}' </dev/null >/dev/null 2>&1 & echo started"
        started = await box.exec(["sh", "-c", background], timeout_s=30)
        assert started.output == "started\n"
        for _ in range(3):  # it is still there, exec after exec
            count = f"ps -eo args | grep -c '^sleep {marker}'"
            seen = await box.exec(["sh", "-c", count], timeout_s=30)
            assert seen.output.strip() == "1"
        assert processes_mentioning(f"sleep {marker}")  # the host sees it, in the box
        assert box.name in containers(podman)
    finally:
        await box.close()
    try:
        assert await gone(f"sleep {marker}", within_s=5) == []
        assert box.name not in containers(podman)
        await box.close()  # twice is fine
        with pytest.raises(ConfigError):
            await box.exec(["true"], timeout_s=5)
    finally:
        kill_all(processes_mentioning(marker))


async def test_a_timeout_kills_the_command_inside_the_box(box: PodmanBox) -> None:
    marker = f"1000.{uuid.uuid4().int % 10**6}"
    result = await box.exec(["sh", "-c", f"sleep {marker} & sleep {marker}"], timeout_s=0.5)
    assert result.timed_out
    assert result.exit_code is None
    assert await gone(f"sleep {marker}", within_s=5) == []
    after = await box.exec(["echo", "still here"], timeout_s=30)
    assert after.output == "still here\n"


async def test_cancelling_an_exec_kills_it_inside_the_box(box: PodmanBox) -> None:
    marker = f"1000.{uuid.uuid4().int % 10**6}"
    task = asyncio.create_task(box.exec(["sleep", marker], timeout_s=60))
    for _ in range(500):
        if processes_mentioning(f"sleep {marker}"):
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone(f"sleep {marker}", within_s=5) == []


async def test_a_stream_pipes_stdin_and_stdout_and_ends_with_its_context(box: PodmanBox) -> None:
    marker = f"1000.{uuid.uuid4().int % 10**6}"
    async with box.stream(["sh", "-c", f"sleep {marker} & cat"]) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(b"ping\n")
        await process.stdin.drain()
        assert await asyncio.wait_for(process.stdout.readline(), 30) == b"ping\n"
    assert await gone(f"sleep {marker}", within_s=5) == []


async def test_egress_goes_through_the_proxy_in_a_box(
    podman: PodmanSandbox, tmp_path: Path, web: int
) -> None:
    seen: list[str] = []

    async def record(decision: EgressDecision) -> None:
        seen.append(f"{decision.host} {decision.verdict}")

    hook = policy_hook(EgressPolicy(allow=("127.0.0.1",)), record)
    box = await podman.open_box(cwd=tmp_path, egress=hook)
    try:
        url = f"http://127.0.0.1:{web}/"
        fetch = f"import urllib.request as u; print(u.urlopen('{url}', timeout=10).read())"
        for _ in range(2):  # the bridge serves every exec, for as long as the box lives
            result = await box.exec(["python3", "-c", fetch], timeout_s=30)
            assert result.output == "b'hello from the host\\n'\n", result.output
    finally:
        await box.close()
    assert seen == ["127.0.0.1 allow", "127.0.0.1 allow"]


async def test_a_box_cannot_be_restored(podman: PodmanSandbox, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="CRIU"):
        await podman.open_box(cwd=tmp_path, restore=tmp_path)


def test_a_long_lived_server_is_refused(podman: PodmanSandbox, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="long-lived server"):
        podman.serve(["cat"], cwd=tmp_path, env={})
