"""What ``helix show`` says of a strategy run: its branches, their scores, the one kept."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from helix.api import HelixApi, Run


@dataclass
class StrategyRow:
    """One branch as the strategy run's log tells it (and its status now)."""

    run_id: str
    status: str = "queued"
    score: float | None = None
    scored: bool = False
    detail: str = ""


@dataclass
class StrategyTree:
    """A strategy run's branching: where, how judged, the branches, the decision."""

    turn: int
    judge: str
    branches: list[StrategyRow] = field(default_factory=list[StrategyRow])
    decided: bool = False
    kept: str | None = None
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        """For ``--json``."""
        return {
            "turn": self.turn,
            "judge": self.judge,
            "branches": [
                {"run_id": b.run_id, "status": b.status, "score": b.score, "scored": b.scored}
                for b in self.branches
            ],
            "decided": self.decided,
            "kept": self.kept,
            "reason": self.reason,
        }

    def lines(self) -> list[str]:
        """For a person: one line per branch, its score and whether it was kept."""
        head = f"strategy   tree of thoughts at turn {self.turn}, judged by {self.judge}"
        rows = [head]
        for branch in self.branches:
            score = "-" if branch.score is None else f"{branch.score:g}"
            mark = "  kept" if branch.run_id == self.kept else ""
            rows.append(f"  branch   {branch.run_id}  {branch.status:<9}  score {score}{mark}")
        if self.decided:
            rows.append(f"  chosen   {self.kept or 'none'}: {self.reason}")
        return rows


async def tree_of(api: HelixApi, run: Run) -> StrategyTree | None:
    """The run's branching (``strategy.*`` events of its own log), or ``None``.

    Only a tree-of-thoughts run's log is read past its first event (its blueprint says),
    and a log that cannot be read is left to ``helix logs`` to report: ``show`` shows
    the run's registry row whatever its log holds.
    """
    from helix.errors import HelixError

    if run.parent is not None:  # a fork of a strategy run is a plain run
        return None
    try:
        return await _read_tree(api, run.id)
    except HelixError:
        return None


def _fold(tree: StrategyTree | None, kind: str, data: dict[str, Any]) -> StrategyTree | None:
    if kind == "strategy.branched":
        branches = [StrategyRow(b["run_id"]) for b in data["branches"]]
        return StrategyTree(data["turn"], data["judge"], branches)
    if tree is not None and kind == "strategy.scored":
        for branch in tree.branches:
            if branch.run_id == data["branch"]:
                branch.scored, branch.score = True, data["score"]
                branch.detail = data.get("detail", "")
    elif tree is not None and kind == "strategy.chosen":
        tree.decided, tree.kept, tree.reason = True, data["branch"], data["reason"]
    return tree


def _is_tree(created: dict[str, Any]) -> bool:
    settings = created.get("settings") or {}
    strategy = (settings.get("blueprint") or {}).get("strategy") or {}
    return isinstance(strategy, dict) and strategy.get("kind") == "tree_of_thoughts"


async def _read_tree(api: HelixApi, run_id: str) -> StrategyTree | None:
    tree: StrategyTree | None = None
    async with contextlib.aclosing(api.events(run_id)) as events:
        async for event in events:
            if event.seq == 0 and not (event.type == "run.created" and _is_tree(event.data)):
                return None
            if event.run_id == run_id and event.type.startswith("strategy."):
                tree = _fold(tree, event.type, event.data)
    if tree is not None:
        from helix.errors import NotFoundError

        for branch in tree.branches:
            try:
                branch.status = (await api.get(branch.run_id)).status
            except NotFoundError:  # logged, not made yet
                branch.status = "not made"
    return tree
