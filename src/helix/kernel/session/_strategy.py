"""The fold of a strategy run's own events: its branches, their scores, the one kept."""

from __future__ import annotations

from typing import Any

from helix.kernel.events import Event

from ._state import BranchProgress, SessionState, StrategyProgress


def strategy_branched(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    """The branches, with their ids, before any is made."""
    branches = [
        BranchProgress(b["run_id"], b.get("message"), b.get("model"), b.get("judge_run_id"))
        for b in data["branches"]
    ]
    state.strategy = StrategyProgress(data["turn"], branches, data.get("budget_usd"))


def strategy_scored(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    """A branch's score (or why it has none)."""
    if state.strategy is None:
        return
    for branch in state.strategy.branches:
        if branch.run_id == data["branch"]:
            branch.scored, branch.score, branch.status = True, data["score"], data["status"]


def strategy_chosen(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    """The decision: the branch kept, or none."""
    if state.strategy is not None:
        state.strategy.decided, state.strategy.chosen = True, data["branch"]


def world_kept(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    """The chosen branch's world came back to the run's directory."""
    progress = state.strategy
    if progress is not None and progress.chosen == data["branch"] and data["world_changed"]:
        progress.kept = True


HANDLERS = {
    "strategy.branched": strategy_branched,
    "strategy.scored": strategy_scored,
    "strategy.chosen": strategy_chosen,
    "world.kept": world_kept,
}
"""The fold's handlers for these events (``_replay.py`` adds them to its table)."""
