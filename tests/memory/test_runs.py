"""Memory scoped correctly across two users and a shared workspace, with events, in runs.

ann and bob are members of ``team`` (viv a viewer); runs by each call the memory tools
through a scripted model, on an engine whose ``memory=`` seam gives each run its
``RunMemory``. Both backends: the events and the memory in one database.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helix.kernel.log import EventStore, open_store
from helix.memory import Memories, Person, RunMemory, open_memory
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Engine, RunSetup

ROLES = {"ann": {"team": "member"}, "bob": {"team": "member"}, "viv": {"team": "viewer"}}


async def role_of(user: str, workspace: str) -> str | None:
    return ROLES.get(user, {}).get(workspace)


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"text": "", "tool_calls": [{"name": tool, "args": args}]}


@dataclass
class Setup:
    engine: Engine
    store: EventStore
    memories: Memories
    scripts: dict[str, list[dict[str, Any]]]

    async def run(self, actor: str, objective: str, world: Path) -> list[dict[str, Any]]:
        """Run ``objective``'s script as ``actor`` in ``team``; its events."""
        await asyncio.to_thread(world.mkdir, parents=True, exist_ok=True)
        record = await self.engine.create(
            objective, model="scripted:x", world=world, workspace="team",
            actor=actor, auto_approve=True,
        )  # fmt: skip
        state = await self.engine.drive(record.id)
        assert state.status == "completed", state.status
        return [{"type": e.type, **e.data} for e in await self.store.read(record.id)]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, helix_home: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{helix_home / 'helix.db'}"
    return str(request.getfixturevalue("fresh_postgres_url"))


@pytest.fixture
async def setup(database: str, helix_home: Path) -> AsyncIterator[Setup]:
    store = await open_store(database)
    memories = Memories(await open_memory(database))
    scripts: dict[str, list[dict[str, Any]]] = {}

    def model(setup: RunSetup) -> ModelAdapter:
        steps = scripts[setup.world.name]  # each run's world is named after its script
        return ScriptedModel(Scenario.of(*steps, {"text": "done"}), label="memory")

    def door(setup: RunSetup) -> RunMemory:
        return RunMemory(
            memories, workspace=setup.workspace, run_id=setup.run_id, actor=setup.actor,
            role_of=role_of,
        )  # fmt: skip

    engine = Engine(store, home=helix_home, model_factory=model, env={}, memory=door)
    try:
        yield Setup(engine, store, memories, scripts)
    finally:
        await memories.store.close()
        await store.close()


def completed(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "tool.completed"]


def of_type(events: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"].startswith(prefix)]


async def test_two_users_and_a_shared_workspace(setup: Setup, tmp_path: Path) -> None:
    setup.scripts["ann"] = [
        call("remember", text="Ann drinks green tea", tags=["tea"]),
        call("remember", text="The team deploys on Tuesdays", scope="workspace", key="deploy"),
        call("save_artifact", name="plan.md", content="# the plan", scope="workspace"),
        call("recall", query="tea"),
    ]
    ann = await setup.run("user:ann", "remember things", tmp_path / "ann")
    assert [e["ok"] for e in completed(ann)] == [True, True, True, True]
    kinds = [e["type"] for e in of_type(ann, "memory.")]
    assert kinds == [
        "memory.remembered",
        "memory.remembered",
        "memory.artifact_saved",
        "memory.recalled",
    ]
    remembered = of_type(ann, "memory.remembered")
    assert [(e["scope"], e["owner"]) for e in remembered] == [
        ("personal", "ann"),
        ("workspace", "team"),
    ]
    recalled = of_type(ann, "memory.recalled")[0]
    assert recalled["ids"] == [remembered[0]["id"]]
    assert recalled["scopes"] == ["personal", "workspace"]
    # each memory event follows its call's tool.completed
    types = [e["type"] for e in ann]
    first = types.index("memory.remembered")
    assert types[first - 1] == "tool.completed"

    setup.scripts["bob"] = [
        call("remember", text="Bob takes his coffee black"),
        call("recall", query=""),
        call("recall", query="tea"),
        call("open_artifact", name="plan.md", path="docs/plan.md"),
        call("recall", query="tea", scope="personal"),
    ]
    bob_world = tmp_path / "bob"
    bob = await setup.run("user:bob", "recall things", bob_world)
    outputs = [e["output"] for e in completed(bob)]
    assert "Bob takes his coffee black" in outputs[1]
    assert "The team deploys on Tuesdays" in outputs[1]
    assert "green tea" not in outputs[1]  # never ann's personal memory
    assert outputs[2] == "nothing remembered matches"
    assert (bob_world / "docs" / "plan.md").read_text() == "# the plan"
    opened = of_type(bob, "memory.artifact_opened")[0]
    assert (opened["name"], opened["path"], opened["owner"]) == ("plan.md", "docs/plan.md", "team")
    changed = [e for e in bob if e["type"] == "file.changed"]
    assert [e["path"] for e in changed] == ["docs/plan.md"]
    assert [e["ids"] for e in of_type(bob, "memory.recalled")][1:] == [[], []]

    setup.scripts["viv"] = [
        call("remember", text="a viewer writes", scope="workspace"),
        call("recall", query="Tuesdays"),
    ]
    viv = await setup.run("user:viv", "a viewer", tmp_path / "viv")
    refused, read = completed(viv)
    assert not refused["ok"]
    assert "viewer cannot write workspace memory" in refused["output"]
    assert read["ok"]
    assert "Tuesdays" in read["output"]
    assert [e["type"] for e in of_type(viv, "memory.")] == ["memory.recalled"]

    setup.scripts["sys"] = [call("remember", text="no person", scope="personal")]
    system = await setup.run("system", "no person", tmp_path / "sys")
    assert "no personal memory" in completed(system)[0]["output"]

    # what the store holds, as the people see it
    ann_sees = await setup.memories.list(Person.of_actor("user:ann", ROLES["ann"]), "team")
    assert {m.text for m in ann_sees} == {"Ann drinks green tea", "The team deploys on Tuesdays"}
    assert {m.by.split(":")[0] for m in ann_sees} == {"run"}


async def test_files_come_and_go_through_the_world_safely(setup: Setup, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("host secret")
    world = tmp_path / "links"
    world.mkdir()
    os.symlink(outside / "secret.txt", world / "leak.txt")
    os.symlink(outside, world / "out")
    (world / "real.txt").write_text("real content")
    setup.scripts["links"] = [
        call("save_artifact", name="leak", path="leak.txt", scope="workspace"),
        call("save_artifact", name="up", path="../outside/secret.txt", scope="workspace"),
        call("save_artifact", name="real.txt", path="real.txt", scope="workspace"),
        call("open_artifact", name="real.txt", path="out/planted.txt"),
        call("open_artifact", name="real.txt"),
        call("save_artifact", name="../x", content="x", scope="workspace"),
    ]
    events = await setup.run("user:ann", "links", world)
    results = completed(events)
    assert [r["ok"] for r in results] == [False, False, True, False, True, False]
    assert "outside the world" in results[0]["output"]
    assert not (outside / "planted.txt").exists()
    assert "real content" in results[4]["output"]
    assert "invalid artifact name" in results[5]["output"]
    saved = of_type(events, "memory.artifact_saved")
    assert [e["name"] for e in saved] == ["real.txt"]
