"""What ``helix show`` says of a strategy run: its branches, their scores, the one kept."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from helix.api import HelixApi


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


async def tree_of(api: HelixApi, run_id: str) -> StrategyTree | None:
    """The run's branching (``strategy.*`` events of its own log), or ``None``."""
    tree: StrategyTree | None = None
    async for event in api.events(run_id):
        if event.run_id != run_id or not event.type.startswith("strategy."):
            continue
        data = event.data
        if event.type == "strategy.branched":
            branches = [StrategyRow(b["run_id"]) for b in data["branches"]]
            tree = StrategyTree(data["turn"], data["judge"], branches)
        elif tree is not None and event.type == "strategy.scored":
            for branch in tree.branches:
                if branch.run_id == data["branch"]:
                    branch.scored, branch.score = True, data["score"]
                    branch.detail = data.get("detail", "")
        elif tree is not None and event.type == "strategy.chosen":
            tree.decided, tree.kept, tree.reason = True, data["branch"], data["reason"]
    if tree is not None:
        from helix.errors import NotFoundError

        for branch in tree.branches:
            try:
                branch.status = (await api.get(branch.run_id)).status
            except NotFoundError:  # logged, not made yet
                branch.status = "not made"
    return tree
