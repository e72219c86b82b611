"""Events of a reasoning strategy: a run that branched, how each branch scored, which was kept.

A blueprint's ``tree_of_thoughts`` strategy forks its run N ways at a turn boundary,
drives the branches (each a fork with its own world), scores each with a judge and
keeps the best (docs/strategies.md). These events are its progress, in the strategy
run's own log, so a driver that crashed carries on where the log says: the branches'
ids are logged before the branches are made, a branch scored is never judged again.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._payload import Payload


class StrategyBranch(BaseModel):
    """One branch a strategy run made (or is about to make)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    """The branch: a fork of the strategy run at ``turn``, with its own world."""
    message: str | None = None
    """What the branch is told first (its ``run.forked.message``)."""
    model: str | None = None
    """Its own model, or ``None`` for the strategy run's."""
    judge_run_id: str | None = None
    """The run that will judge it (a ``run`` judge), or ``None`` (a ``command`` judge)."""


class StrategyBranched(Payload):
    """The run forks into branches here: their ids, logged before any is made."""

    TYPE: ClassVar[str] = "strategy.branched"

    strategy: Literal["tree_of_thoughts"] = "tree_of_thoughts"
    turn: int = Field(ge=0)
    """The turn boundary the branches fork at."""
    branches: list[StrategyBranch] = Field(min_length=2)
    budget_usd: float | None = Field(default=None, ge=0)
    """What each branch may spend (its own model calls), or ``None``: no cap of its own."""
    judge: str
    """How branches are scored, as a person reads it (``command: pytest -q``, ``run``)."""


class StrategyScored(Payload):
    """A branch ended and was judged (or could not be: ``score`` is ``None``)."""

    TYPE: ClassVar[str] = "strategy.scored"

    branch: str
    """The branch's run id."""
    status: str
    """How the branch ended: ``completed``, ``failed``, ``cancelled`` or ``paused``."""
    score: float | None
    """The judge's score (a command: 1.0 when it exits 0, else 0.0, or the number it
    printed); ``None``: not judged (the branch did not complete, the judge gave none)."""
    detail: str = ""
    """Why: the command's exit code and the end of its output, or the judge's reply."""


class StrategyChosen(Payload):
    """The strategy's decision: the branch kept (its world now the run's), the rest closed."""

    TYPE: ClassVar[str] = "strategy.chosen"

    branch: str | None
    """The branch kept, or ``None`` when none scored above the blueprint's ``min_score``."""
    score: float | None = None
    reason: str
    closed: list[str] = Field(default_factory=list[str])
    """The other branches (those still going are cancelled)."""
