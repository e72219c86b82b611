"""``helix bench world --quick``: every figure the issue names, with its baseline."""

from __future__ import annotations

import os
from pathlib import Path

from helix.bench import run_suite


async def test_the_world_suite_reports_its_figures_with_baselines(tmp_path: Path) -> None:
    figures = {f.name: f async for f in run_suite("world", quick=True, workdir=tmp_path)}
    assert {"snapshot_turn", "snapshot_bytes_per_turn", "fork_materialize"} <= set(figures)
    for name in ("snapshot_turn", "snapshot_bytes_per_turn", "fork_materialize"):
        figure = figures[name]
        assert figure.value > 0
        assert figure.baseline is not None
        assert figure.baseline > 0
    assert figures["snapshot_turn"].unit == "ms"
    assert figures["snapshot_turn"].params["files"] == 200
    assert figures["snapshot_turn_walked"].baseline == figures["snapshot_turn"].baseline
    # One 1 KiB file changed: the bytes stored are that file plus a small event.
    assert 1024 <= figures["snapshot_bytes_per_turn"].value < 4096
    assert not any(os.scandir(tmp_path))  # the scratch world is cleaned up
