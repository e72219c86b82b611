"""The gVisor tier, run for real: the escape suite, its boxes, checkpoint and restore."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from helix.sandbox import (
    Box,
    EgressDecision,
    GvisorSandbox,
    Sandbox,
    resolve_sandbox,
    tier_status,
)
from helix.sandbox._gvisor_box import STATE_DIR
from helix.testing import processes_mentioning
from helix.testing.conformance import COUNTER_SERVER, SandboxArena
from tests.conftest import gvisor_tier
from tests.sandbox.test_escapes import _HelixTier

pytestmark = [pytest.mark.usefixtures("gvisor_available"), gvisor_tier]

FETCH = (
    "import time, urllib.request\n"
    "for _ in range(200):\n"
    "    try:\n"
    "        print(urllib.request.urlopen('http://127.0.0.1:8765/', timeout=5).read().decode())\n"
    "        break\n"
    "    except OSError:\n"
    "        time.sleep(0.05)\n"
)
"""Fetches the counter once, waiting for the server to listen (up to 10 s)."""


class TestGvisorTier(_HelixTier):
    """Every attack contained: the command's kernel is gVisor's, its files the spec's.

    ``max_processes`` is the suite's 64, enforced inside as ``RLIMIT_NPROC``: the
    sandbox's users are its own, so it is a real budget (the host's pids limit, which
    also counts gVisor's threads, is set far above it).
    """

    expected_escapes = frozenset()

    @pytest.fixture
    def sandbox(self, arena: SandboxArena) -> Iterator[Sandbox]:
        box = GvisorSandbox(
            hidden=[arena.helix_data],
            max_processes=self.max_processes,
            max_memory_bytes=self.max_memory_bytes,
            cpu_seconds=self.cpu_seconds,
        )
        yield box
        box.close()


@pytest.fixture
def gvisor() -> Iterator[GvisorSandbox]:
    sandbox = GvisorSandbox()
    yield sandbox
    sandbox.close()


@pytest.fixture
async def box(gvisor: GvisorSandbox, tmp_path: Path) -> AsyncIterator[Box]:
    world = tmp_path / "world"
    world.mkdir()
    opened = await gvisor.open_box(cwd=world)
    yield opened
    await opened.close()


def runsc_containers(sandbox: GvisorSandbox) -> list[str]:
    """The ids of the containers ``runsc`` knows in the sandbox's state directory."""
    done = subprocess.run(
        [*sandbox.runsc_argv(), "list", "-format=json"], capture_output=True, text=True
    )
    return [c["id"] for c in json.loads(done.stdout or "null") or []]


def test_registered_and_asked_for_only() -> None:
    assert tier_status("gvisor").available
    chosen = resolve_sandbox("gvisor")
    assert isinstance(chosen, GvisorSandbox)
    assert chosen.can_keep_live
    assert resolve_sandbox().tier != "gvisor"  # never chosen unless asked for


def test_spec_holds_the_profile(gvisor: GvisorSandbox, tmp_path: Path) -> None:
    name, bundle = gvisor.bundle(["/bin/true"], tmp_path)
    config = json.loads((bundle / "config.json").read_text())
    process = config["process"]
    assert process["noNewPrivileges"] is True
    assert all(caps == [] for caps in process["capabilities"].values())
    assert config["root"]["readonly"] is True
    writable = [m["destination"] for m in config["mounts"] if "rw" in m.get("options", [])]
    assert writable == [str(tmp_path)]  # the world is the only writable bind
    sources = {m.get("source") for m in config["mounts"]}
    assert "/etc/shadow" not in sources
    assert "/etc" not in sources
    assert not any(entry.startswith("OPENAI") for entry in process["env"])
    assert config["linux"]["resources"]["pids"]["limit"] >= 1000
    gvisor.forget(name)
    assert not bundle.exists()


async def test_egress_goes_through_the_proxy_only(
    gvisor: GvisorSandbox, tmp_path: Path, web: int
) -> None:
    seen: list[tuple[str, int]] = []

    async def hook(host: str, port: int) -> EgressDecision:
        seen.append((host, port))
        return EgressDecision(host, port, "allow", "test")

    url = f"http://127.0.0.1:{web}/"
    command = f"python3 -c \"import urllib.request; print(urllib.request.urlopen('{url}').read())\""
    result = await gvisor.run(command, cwd=tmp_path, timeout_s=30, egress=hook)
    assert "hello from the host" in result.output, result.output
    assert seen == [("127.0.0.1", web)]
    direct = await gvisor.run(command, cwd=tmp_path, timeout_s=30)  # no proxy: no network
    assert "hello from the host" not in direct.output


async def test_box_exec_keeps_background_processes(box: Box) -> None:
    assert box.world.is_dir()
    result = await box.exec(["/bin/sh", "-c", "pwd; echo hi > made.txt"], timeout_s=10)
    assert result.exit_code == 0
    assert result.output == f"{box.world}\n"
    assert (box.world / "made.txt").read_text() == "hi\n"
    started = await box.exec(
        ["/bin/sh", "-c", f"sleep 1000 > {STATE_DIR}/log 2>&1 & echo $! > {STATE_DIR}/pid"],
        timeout_s=10,
    )
    assert started.exit_code == 0
    alive = f"kill -0 $(cat {STATE_DIR}/pid) && echo alive"
    check = await box.exec(["/bin/sh", "-c", alive], timeout_s=10)
    assert check.output == "alive\n"


async def test_box_exec_timeout_kills_the_command(box: Box) -> None:
    result = await box.exec(["/bin/sh", "-c", "sleep 300 & sleep 300"], timeout_s=1)
    assert result.timed_out
    assert result.exit_code is None
    left = await box.exec(["/bin/sh", "-c", "ps -e -o comm= | grep -c sleep"], timeout_s=10)
    assert left.output.strip() == "0"


async def test_box_stream_pipes(box: Box) -> None:
    async with box.stream(["/bin/cat"]) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(b"ping\n")
        await process.stdin.drain()
        assert await process.stdout.readline() == b"ping\n"


async def test_close_leaves_nothing_on_the_host(gvisor: GvisorSandbox, tmp_path: Path) -> None:
    opened = await gvisor.open_box(cwd=tmp_path)
    name = opened.name  # type: ignore[attr-defined]
    await opened.exec(["/bin/sh", "-c", "sleep 1000 >/dev/null 2>&1 &"], timeout_s=10)
    assert processes_mentioning(name)
    await opened.close()
    await opened.close()  # twice is fine
    assert processes_mentioning(name) == []
    assert name not in runsc_containers(gvisor)
    assert not (gvisor.state() / "bundles" / name).exists()


async def test_checkpoint_and_restore_keep_a_server_and_its_memory(
    gvisor: GvisorSandbox, tmp_path: Path
) -> None:
    world = tmp_path / "world"
    world.mkdir()
    (world / "server.py").write_text(COUNTER_SERVER)
    first = await gvisor.open_box(cwd=world)
    try:
        serve = f"python3 server.py 8765 > {STATE_DIR}/server.log 2>&1 &"
        await first.exec(["/bin/sh", "-c", serve], timeout_s=10)
        fetch = ["/usr/bin/python3", "-c", FETCH]
        fetched = await first.exec(fetch, timeout_s=20)
        log = await first.exec(["/bin/cat", f"{STATE_DIR}/server.log"], timeout_s=10)
        assert fetched.output == "1\n", (fetched, log)
        assert (await first.exec(fetch, timeout_s=20)).output == "2\n"
        image = await first.checkpoint(tmp_path / "image")
    finally:
        await first.close()
    assert image.tier == "gvisor"
    assert image.size_bytes > 0
    assert image.seconds > 0
    moved = tmp_path / "store" / "image"  # as if into the object store and back
    shutil.copytree(image.path, moved)
    shutil.rmtree(image.path)
    second = await gvisor.open_box(cwd=world, restore=moved)
    try:
        assert (await second.exec(fetch, timeout_s=20)).output == "3\n"
    finally:
        await second.close()


async def test_box_egress_goes_through_the_proxy_after_a_restore_too(
    gvisor: GvisorSandbox, tmp_path: Path, web: int
) -> None:
    seen: list[tuple[str, int]] = []

    async def hook(host: str, port: int) -> EgressDecision:
        seen.append((host, port))
        return EgressDecision(host, port, "allow", "test")

    url = f"http://127.0.0.1:{web}/"
    fetch = [
        "/usr/bin/python3",
        "-c",
        f"import urllib.request; print(urllib.request.urlopen('{url}').read())",
    ]
    world = tmp_path / "world"
    world.mkdir()
    first = await gvisor.open_box(cwd=world, egress=hook)
    try:
        assert "hello from the host" in (await first.exec(fetch, timeout_s=30)).output
        image = await first.checkpoint(tmp_path / "image")
    finally:
        await first.close()
    second = await gvisor.open_box(cwd=world, egress=hook, restore=image.path)
    try:  # the restored bridge reaches the new channel bound where the old one was
        assert "hello from the host" in (await second.exec(fetch, timeout_s=30)).output
    finally:
        await second.close()
    assert seen == [("127.0.0.1", web)] * 2
