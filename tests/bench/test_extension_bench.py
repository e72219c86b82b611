"""``helix bench extension --quick``: MCP call overhead over stdio and HTTP, with baselines."""

from __future__ import annotations

import os
from pathlib import Path

from helix.bench import SUITES, run_suite


async def test_the_extension_suite_measures_mcp_calls_against_the_bare_client(
    tmp_path: Path,
) -> None:
    assert "extension" in SUITES
    figures = [f async for f in run_suite("extension", quick=True, workdir=tmp_path)]
    overheads = {f.params["transport"]: f for f in figures if f.name == "mcp_call_overhead"}
    assert set(overheads) == {"stdio", "http"}
    for figure in overheads.values():
        assert figure.unit == "ms"
        assert figure.value > 0
        assert figure.baseline is not None
        assert figure.baseline > 0
        assert figure.to_dict()["ratio"] > 0
        assert figure.params["calls"] == 5
    assert overheads["stdio"].params["tier"] == "process"
    plugins = {f.name: f for f in figures if f.name != "mcp_call_overhead"}
    assert set(plugins) == {"plugin_load_ms", "reload_to_serving_ms"}
    assert all(f.value > 0 and f.unit == "ms" for f in plugins.values())
    assert not any(os.scandir(tmp_path))  # the scratch folders are cleaned up
