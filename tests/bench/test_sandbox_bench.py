"""``helix bench sandbox --quick``'s figures: every available tier, and live execs."""

from __future__ import annotations

import pytest

from helix.bench._sandbox import MIN_STARTS, SandboxSizes, _starts, run_sandbox
from helix.sandbox import tier_statuses
from tests.conftest import podman_tier


def test_a_slow_tier_is_measured_fewer_times() -> None:
    assert _starts("bwrap", 200) == 200
    assert _starts("podman", 200) == 20
    assert _starts("podman", 5) == MIN_STARTS
    assert _starts("podman", 3) == 3
    assert _starts("microvm", 200) == 3
    assert _starts("microvm", 2) == 2


@podman_tier  # it starts podman containers: with the other podman tests, on one worker
@pytest.mark.usefixtures("podman_available")
async def test_the_quick_suite_measures_starts_and_live_execs() -> None:
    figures = [figure async for figure in run_sandbox(SandboxSizes.quick())]
    starts = {f.params["tier"] for f in figures if f.name == "sandbox_start_overhead_p50"}
    assert starts == {s.tier for s in tier_statuses() if s.available}
    lives = {f.params["tier"]: f for f in figures if f.name == "live_exec_overhead_p50"}
    live = lives["podman"]  # and any other tier that can keep a world live
    assert live.params["runs"] == MIN_STARTS
    assert live.value > 0
    assert live.baseline is not None
    assert live.value > live.baseline
    if "microvm" in lives:  # a guest per command: three runs, and how guests run here
        assert lives["microvm"].params["runs"] == 3
        assert lives["microvm"].params["accel"] in ("kvm", "tcg")
