"""The gVisor tier's live world under the shared suite, checkpoint and restore included."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from helix.sandbox import Box, GvisorSandbox
from helix.sandbox._gvisor_box import GvisorBox
from helix.testing import processes_mentioning, wait_gone_now
from helix.testing.conformance import LiveWorldConformance
from tests.conftest import gvisor_tier
from tests.sandbox._killed import first_use, open_and_kill
from tests.sandbox.test_gvisor import runsc_containers

pytestmark = [pytest.mark.usefixtures("gvisor_available"), gvisor_tier]


class TestGvisorLiveWorld(LiveWorldConformance):
    @pytest.fixture
    def sandbox(self) -> Iterator[GvisorSandbox]:
        tier = GvisorSandbox()
        self._tier = tier
        yield tier
        tier.close()

    def leftovers(self, box: Box) -> list[str]:
        assert isinstance(box, GvisorBox)
        return [c for c in runsc_containers(self._tier) if c == box.name]


async def test_a_sandbox_a_killed_helix_left_is_deleted_by_the_next(tmp_path: Path) -> None:
    _, state = open_and_kill("gvisor", tmp_path)
    assert processes_mentioning(state)  # kill -9: its sandbox runs on
    tier = GvisorSandbox()
    live = await tier.open_box(cwd=tmp_path)  # this process's: alive, left alone
    assert isinstance(live, GvisorBox)
    try:
        await first_use("gvisor")
        assert not await asyncio.to_thread(os.path.exists, state)
        assert not await asyncio.to_thread(wait_gone_now, state, 30)
        assert live.name in runsc_containers(tier)
    finally:
        await live.close()
