"""The podman tier's live world under the shared suite (one worker: the podman group)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helix.sandbox import Box, PodmanSandbox
from helix.sandbox._podman_box import PodmanBox
from helix.testing.conformance import LiveWorldConformance
from tests.conftest import podman_tier
from tests.sandbox._killed import first_use, open_and_kill
from tests.sandbox.test_podman import containers

pytestmark = podman_tier


class TestPodmanLiveWorld(LiveWorldConformance):
    @pytest.fixture
    def sandbox(self, podman_available: None) -> Iterator[PodmanSandbox]:
        tier = PodmanSandbox(pids=128, memory_bytes=512 << 20)
        self._tier = tier
        yield tier
        tier.close()

    def leftovers(self, box: Box) -> list[str]:
        assert isinstance(box, PodmanBox)
        return [c for c in containers(self._tier) if c == box.name]


async def test_a_box_a_killed_helix_left_is_removed_by_the_next(
    podman_available: None, tmp_path: Path
) -> None:
    orphan, _ = open_and_kill("podman", tmp_path)
    tier = PodmanSandbox()
    assert orphan in containers(tier)  # kill -9: nobody closed it
    live = await tier.open_box(cwd=tmp_path)  # this process's: alive, left alone
    try:
        await first_use("podman")
        left = containers(tier)
        assert orphan not in left
        assert live.name in left
    finally:
        await live.close()
