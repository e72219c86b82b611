"""The microvm tier's live world under the shared suite (one worker: the microvm group)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helix.sandbox import Box, MicrovmSandbox
from helix.sandbox._microvm_box import MicrovmBox
from helix.testing import processes_mentioning
from helix.testing.conformance import LiveWorldConformance
from tests.conftest import microvm_tier

pytestmark = microvm_tier


class TestMicrovmLiveWorld(LiveWorldConformance):
    @pytest.fixture
    def sandbox(self, microvm_available: None) -> Iterator[MicrovmSandbox]:
        tier = MicrovmSandbox(pids=128, memory_bytes=512 << 20)
        yield tier
        tier.close()

    def leftovers(self, box: Box) -> list[str]:
        assert isinstance(box, MicrovmBox)
        left = [f"qemu {box.qemu.pid}"] if box.qemu.returncode is None else []
        left += [str(box.folder)] if box.folder.exists() else []
        return left + [f"process {p}" for p in processes_mentioning(str(box.folder))]
