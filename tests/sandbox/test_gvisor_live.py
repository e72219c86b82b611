"""The gVisor tier's live world under the shared suite, checkpoint and restore included."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helix.sandbox import Box, GvisorSandbox
from helix.sandbox._gvisor_box import GvisorBox
from helix.testing.conformance import LiveWorldConformance
from tests.conftest import gvisor_tier
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
