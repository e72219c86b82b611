"""LangGraph's side of ``helix bench engine``: the same workload, the same two figures."""

from __future__ import annotations

from pathlib import Path

# LangGraph is the optional ``bench`` extra, which the dev install includes: without it
# this import fails the suite rather than skipping the comparison unnoticed.
import langgraph.checkpoint.sqlite  # noqa: F401

from helix.bench._figure import Figure
from helix.bench._langgraph import langgraph_figures


def _check(figures: list[Figure], turns: int) -> None:
    assert [(f.suite, f.name, f.unit) for f in figures] == [
        ("engine", "turn_overhead", "ms"),
        ("engine", "bytes_per_turn", "bytes"),
    ]
    for figure in figures:
        assert figure.params == {"system": "langgraph", "turns": turns}
        assert figure.value > 0


def _entries(folder: Path) -> list[Path]:
    return list(folder.iterdir())


async def test_measure_returns_overhead_and_bytes_per_turn(tmp_path: Path) -> None:
    from helix.bench._langgraph_agent import measure

    _check(await measure(5, tmp_path), turns=5)
    # The scratch folder with the SQLite file is gone afterwards.
    assert _entries(tmp_path) == []


async def test_langgraph_figures_yields_them_for_each_size(tmp_path: Path) -> None:
    figures = [figure async for figure in langgraph_figures((5,), tmp_path)]
    _check(figures, turns=5)
