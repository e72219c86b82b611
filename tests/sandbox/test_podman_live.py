"""The podman tier's live world under the shared suite (one worker: the podman group)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helix.sandbox import Box, PodmanSandbox
from helix.sandbox._podman_box import PodmanBox
from helix.testing.conformance import LiveWorldConformance
from tests.conftest import podman_tier
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
