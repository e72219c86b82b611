"""The process tier's live world: a box on the host, under the shared suite."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helix.errors import ConfigError
from helix.sandbox import BwrapSandbox, DockerSandbox, ProcessSandbox
from helix.testing.conformance import LiveWorldConformance


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


def _alive_and_unsignalled(pid: int) -> bool:
    """Running, and no SIGKILL pending (one sent is either pending or has ended it)."""
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    pending = int(status["SigPnd"], 16) | int(status["ShdPnd"], 16)
    return status["State"].split()[0] in "RS" and not pending & (1 << (signal.SIGKILL - 1))
