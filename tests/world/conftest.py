"""The world tests' harness: a real engine on a fresh SQLite log, with a scripted model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from helix.kernel.log import SqliteEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.sandbox import ProcessSandbox
from helix.tools import builtin_registry, example_tools
from helix.world import WorldBrowser


def _call(tool: str, **args: Any) -> dict[str, Any]:
    return {"name": tool, "args": args}


@dataclass
class Harness:
    """An engine on a fresh store, whose model plays the scenario given for each run."""

    root: Path
    engine: Engine
    scenarios: list[Scenario] = field(default_factory=list[Scenario])

    @property
    def world(self) -> Path:
        return self.root / "world"

    @property
    def browser(self) -> WorldBrowser:
        return WorldBrowser(self.engine.store, self.engine.objects)

    async def run(self, *steps: dict[str, Any]) -> str:
        self.scenarios.append(Scenario.of(*steps))
        blueprint = Blueprint(model="scripted:world")
        record = await self.engine.create(
            "change the world", blueprint=blueprint, world=self.world, auto_approve=True
        )
        state = await self.engine.drive(record.id)
        assert state.status == "completed", state.error
        return record.id

    async def drive(self, run_id: str, *steps: dict[str, Any], after_turn: int = 0) -> None:
        # The scripted model answers by the count of replies in the conversation, and a
        # fork's conversation holds its parent's replies up to the fork point.
        inherited = [{"text": "(the parent's reply)"}] * after_turn
        self.scenarios.append(Scenario.of(*inherited, *steps))
        state = await self.engine.drive(run_id)
        assert state.status == "completed", state.error


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    store = SqliteEventStore(tmp_path / "helix.db")
    tools = builtin_registry()
    for example in example_tools(tmp_path / "service"):
        tools.register(example)
    holder: list[Harness] = []

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(holder[0].scenarios[-1], label="world")

    # The process tier on purpose: the scenarios' commands copy the world out of it
    # (``cp -a . ../at-turn-N``) to compare restores with; bwrap would refuse that.
    engine = Engine(
        store,
        home=tmp_path / "home",
        tools=tools,
        sandbox=ProcessSandbox(),
        model_factory=model,
        env={},
    )
    harness = Harness(tmp_path, engine)
    holder.append(harness)
    (tmp_path / "world").mkdir()
    try:
        yield harness
    finally:
        await store.close()
