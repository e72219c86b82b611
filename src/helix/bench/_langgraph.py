"""The same agent workload through LangGraph's prebuilt ReAct agent, when installed.

Helix does not depend on LangGraph; with ``pip install langgraph
langgraph-checkpoint-sqlite`` present, ``helix bench engine`` adds its figures beside
Helix's (``params.system = "langgraph"``). Without it, nothing is printed for it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator
from pathlib import Path

from ._figure import Figure


def langgraph_installed() -> bool:
    """Whether LangGraph and its SQLite checkpointer can be imported."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("langgraph", "langgraph.checkpoint.sqlite")
    )


async def langgraph_figures(turns: tuple[int, ...], workdir: Path | None) -> AsyncIterator[Figure]:
    """LangGraph's per-turn overhead and bytes per turn, if it is installed."""
    if not langgraph_installed():
        return
    from ._langgraph_agent import measure

    for n in turns:
        for figure in await measure(n, workdir):
            yield figure
