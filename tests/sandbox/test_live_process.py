"""The process tier's live world: a box on the host, under the shared suite."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helix.errors import ConfigError
from helix.sandbox import BwrapSandbox, DockerSandbox, LiveWorld, ProcessSandbox
from helix.testing import processes_mentioning, wait_gone_now
from helix.testing.conformance import LiveWorldConformance
from tests.sandbox._killed import first_use, start_and_kill


class TestProcessLiveWorld(LiveWorldConformance):
    @pytest.fixture
    def sandbox(self) -> Iterator[ProcessSandbox]:
        box = ProcessSandbox()
        yield box
        box.close()


@pytest.mark.parametrize("tier", [BwrapSandbox, DockerSandbox])
async def test_one_shot_tiers_refuse_a_live_world(tier, tmp_path) -> None:
    sandbox = tier()
    assert not sandbox.can_keep_live
    with pytest.raises(ConfigError, match="cannot keep a live world"):
        await sandbox.open_box(cwd=tmp_path)


async def test_the_process_tier_cannot_restore(tmp_path) -> None:
    with pytest.raises(ConfigError, match="cannot restore"):
        await ProcessSandbox().open_box(cwd=tmp_path, restore=tmp_path)


async def test_close_leaves_alone_a_program_that_took_a_recorded_pid(tmp_path) -> None:
    """A recorded leader gone for long: its pid, handed out again, is another program's."""
    box = await ProcessSandbox().open_box(cwd=tmp_path)
    other = await asyncio.create_subprocess_exec("sleep", "600", start_new_session=True)
    try:
        recorded = Path(box.state_dir) / "p1.pid"
        recorded.write_text(f"{other.pid}\n")
        an_hour_ago = time.time() - 3600
        os.utime(recorded, (an_hour_ago, an_hour_ago))  # written before ``other`` started
        await box.close()
        assert _alive_and_unsignalled(other.pid)
    finally:
        other.kill()
        await other.wait()


async def test_what_a_killed_helix_left_running_is_killed_by_the_next(tmp_path: Path) -> None:
    left, kept = (f"sleep 86400.{secrets.randbelow(10**9)}" for _ in range(2))
    (tmp_path / "left").mkdir()
    state = start_and_kill("process", tmp_path / "left", f"exec {left}")
    assert await asyncio.to_thread(_wait_running, left)  # kill -9: its session runs on
    box = await ProcessSandbox().open_box(cwd=tmp_path)  # this process's: left alone
    try:
        await LiveWorld(box).start("p1", f"exec {kept}")
        assert await asyncio.to_thread(_wait_running, kept)
        await first_use("process")
        assert not await asyncio.to_thread(os.path.exists, state)
        assert not await asyncio.to_thread(wait_gone_now, left, 30)
        assert processes_mentioning(kept)
        assert await asyncio.to_thread(os.path.isdir, box.state_dir)
    finally:
        await box.close()
    assert not await asyncio.to_thread(wait_gone_now, kept, 30)


def _wait_running(marker: str) -> list[int]:
    """The processes running ``marker``, once there are any (a start is not instant)."""
    for _ in range(3000):
        if found := processes_mentioning(marker):
            return found
        time.sleep(0.01)
    return []


def _alive_and_unsignalled(pid: int) -> bool:
    """Running, and no SIGKILL pending (one sent is either pending or has ended it)."""
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    pending = int(status["SigPnd"], 16) | int(status["ShdPnd"], 16)
    return status["State"].split()[0] in "RS" and not pending & (1 << (signal.SIGKILL - 1))
