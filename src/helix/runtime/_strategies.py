"""Reasoning strategies a blueprint names: how its run reasons, prompts and branches.

```yaml
strategy: {kind: chain_of_thought}          # reason step by step before acting
strategy: {kind: plan_then_act}             # a first turn that plans, with no tools
strategy:                                   # fork N ways, judge, keep the best
  kind: tree_of_thoughts
  branches: 3
  at_turn: 0
  budget_usd: 0.5                           # each branch's own cap
  judge: {command: "pytest -q"}             # exit 0 scores 1.0, else 0.0
  # judge: {objective: "Rate the change from 0 to 1", model: "openai:gpt-4.1"}
```

The settings only: ``RequestBuilder`` and the loop read the prompting ones,
``_tree.py`` drives a tree of thoughts (docs/strategies.md).
"""

from __future__ import annotations

import shlex
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

COT_INSTRUCTION = (
    "Before each action, think the problem through step by step: say what you know,"
    " what you still need, and why the next step is the right one. Then act."
)
PLAN_INSTRUCTION = (
    "This first turn is for planning only: you have no tools in it. Reply with a short"
    " numbered plan of the steps you will take to do the task, and nothing else."
)
ACT_INSTRUCTION = (
    "Now carry out your plan, step by step, with the tools. When the task is done, reply"
    " with a short summary and no tool call."
)
BRANCH_MESSAGE = (
    "You are branch {index} of {count} exploring this task in parallel, each in its own"
    " copy of the world. Take an approach of your own; the best branch will be kept."
)


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ChainOfThought(_Strict):
    """The system prompt asks the model to reason step by step before it acts."""

    kind: Literal["chain_of_thought"]
    instruction: str = Field(default=COT_INSTRUCTION, min_length=1)
    """Added to the blueprint's ``system`` prompt, after a blank line."""


class PlanThenAct(_Strict):
    """A first turn that asks for a plan with no tools offered, then acting turns."""

    kind: Literal["plan_then_act"]
    plan: str = Field(default=PLAN_INSTRUCTION, min_length=1)
    """Added to the system prompt of the first model call (which is offered no tools)."""
    act: str = Field(default=ACT_INSTRUCTION, min_length=1)
    """What the run is told once the plan is written (a ``steer.received`` by ``system``)."""


class CommandJudge(_Strict):
    """Scores a branch by running a command in its world, through the run's sandbox."""

    kind: Literal["command"] = "command"
    command: str
    """A shell command (a list is joined with shell quoting)."""
    score: Literal["exit", "output"] = "exit"
    """``exit``: 1.0 when the command exits 0, else 0.0; ``output``: the last number it
    prints, when it exits 0 (else 0.0)."""
    timeout_s: float | None = Field(default=None, gt=0)
    """Default: the blueprint's ``sandbox.command_timeout_s``."""

    @field_validator("command", mode="before")
    @classmethod
    def _joined(cls, value: object) -> object:
        if isinstance(value, list | tuple):
            if not value or not all(isinstance(v, str) for v in value):
                raise ValueError("a command is a string, or a list of strings")
            return shlex.join(value)
        return value

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the judge's command is empty")
        return value

    def describe(self) -> str:
        """How a person reads it in the log."""
        return f"command: {self.command}"


class RunJudge(_Strict):
    """Scores a branch with an agent run in its world; its final reply gives the score."""

    kind: Literal["run"] = "run"
    objective: str = Field(min_length=1)
    """What the judge is asked (the task and the branch's summary are added): it ends
    its reply with a score, the last number in it."""
    model: str | None = None
    """Default: the blueprint's ``judge`` role's model, else the strategy run's model."""
    tools: tuple[str, ...] | None = None
    """The judge's tools; default: the run's tools that only read (their facets say
    ``read_only``): it works in the branch's world and must not change it."""
    budget_usd: float | None = Field(default=None, gt=0)

    def describe(self) -> str:
        """How a person reads it in the log."""
        return "run" + (f" ({self.model})" if self.model else "")


Judge = Annotated[CommandJudge | RunJudge, Field(discriminator="kind")]


class TreeOfThoughts(_Strict):
    """Fork the run N ways at a turn, drive the branches, judge them, keep the best."""

    kind: Literal["tree_of_thoughts"]
    branches: int = Field(default=3, ge=2, le=16)
    at_turn: int = Field(default=0, ge=0)
    """Branch where this turn ends (0: at the start, before any model call)."""
    budget_usd: float | None = Field(default=None, gt=0)
    """What each branch may spend of its own (its model needs a price)."""
    messages: tuple[str, ...] = ()
    """What each branch is told first (one per branch); default: its number and a nudge
    to take an approach of its own."""
    models: tuple[str, ...] = ()
    """Each branch's model (one per branch); default: the run's."""
    judge: Judge
    min_score: float = 0.0
    """A branch is kept only if it scores more than this."""

    @field_validator("judge", mode="before")
    @classmethod
    def _judge_kind(cls, value: object) -> object:
        if not isinstance(value, dict):
            raise ValueError("the judge is a mapping: {command: …} or {objective: …}")
        if "kind" in value:
            if value["kind"] not in ("command", "run"):
                raise ValueError(f"unknown judge kind {value['kind']!r}; choose command or run")
            return value
        if "command" in value:
            return {"kind": "command", **value}
        if "objective" in value:
            return {"kind": "run", **value}
        raise ValueError(
            "unknown judge: give a command ({command: 'pytest -q'}) or a judge run's"
            " objective ({objective: …})"
        )

    @model_validator(mode="after")
    def _one_per_branch(self) -> TreeOfThoughts:
        for name in ("messages", "models"):
            given = getattr(self, name)
            if given and len(given) != self.branches:
                raise ValueError(
                    f"{name}: {len(given)} given for {self.branches} branches (one each, or none)"
                )
        return self

    def message(self, index: int) -> str:
        """What branch ``index`` (from 0) is told first."""
        if self.messages:
            return self.messages[index]
        return BRANCH_MESSAGE.format(index=index + 1, count=self.branches)

    def model(self, index: int) -> str | None:
        """Branch ``index``'s own model, or ``None`` for the run's."""
        return self.models[index] if self.models else None


Strategy = Annotated[ChainOfThought | PlanThenAct | TreeOfThoughts, Field(discriminator="kind")]
"""A reasoning strategy, by ``kind``."""


def strategy_models(strategy: Strategy | None) -> list[tuple[str, str]]:
    """(field, model name) of every model the strategy names, for checking."""
    if not isinstance(strategy, TreeOfThoughts):
        return []
    found = [(f"strategy.models.{i}", m) for i, m in enumerate(strategy.models)]
    if isinstance(strategy.judge, RunJudge) and strategy.judge.model is not None:
        found.append(("strategy.judge.model", strategy.judge.model))
    return found
