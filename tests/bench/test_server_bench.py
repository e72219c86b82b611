"""The server suite runs end to end at tiny sizes and emits the contract's figures."""

from __future__ import annotations

from pathlib import Path

from helix.bench import run_suite


async def test_server_suite_emits_the_contract_figures(tmp_path: Path) -> None:
    figures = [f async for f in run_suite("server", quick=True, workdir=tmp_path)]
    by_name = {f.name: f for f in figures}
    assert set(by_name) == {
        "ws_delivery_p50",
        "ws_delivery_p99",
        "events_page_rps",
        "sdk_call_overhead",
    }
    for name in ("ws_delivery_p50", "ws_delivery_p99"):
        assert by_name[name].unit == "ms"
        assert by_name[name].params["clients"] == 10
        assert by_name[name].value > 0
        assert by_name[name].baseline is not None
    assert by_name["ws_delivery_p50"].value <= by_name["ws_delivery_p99"].value
    pages = by_name["events_page_rps"]
    assert pages.unit == "requests/s"
    assert pages.value > 0
    assert pages.params["events"] > 1900  # a whole number of turns
    sdk = by_name["sdk_call_overhead"]
    assert sdk.unit == "ms"
    assert sdk.params["calls"] == 40
    assert sdk.value > 0
    assert sdk.baseline is not None
    assert sdk.baseline > 0
    assert sdk.to_dict()["ratio"] > 0
    assert _entries(tmp_path) == []  # the scratch store is gone


def _entries(folder: Path) -> list[Path]:
    return list(folder.iterdir())
