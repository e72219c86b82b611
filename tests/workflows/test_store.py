"""One conformance suite for the workflow store, run on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helix.errors import ConfigError, WorkflowConflictError, WorkflowNotFoundError
from helix.workflows import Workflows, load_text, open_workflows

ONE = "name: {name}\nsteps: [{{id: a, objective: Do A}}]\n"
TWO = "name: {name}\nsteps: [{{id: a, objective: Do A}}, {{id: b, objective: Do B}}]\n"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'helix.db'}"
    url = request.getfixturevalue("postgres_url")
    assert isinstance(url, str)
    return url


@pytest.fixture
async def workflows(database: str) -> AsyncIterator[Workflows]:
    store = await open_workflows(database)
    try:
        yield Workflows(store)
    finally:
        await store.close()


def _name() -> str:
    """Unique per test: the PostgreSQL database is shared by the session."""
    return f"wf-{uuid.uuid4().hex[:8]}"


async def test_each_save_is_a_new_version_with_who_how_and_what_changed(
    workflows: Workflows,
) -> None:
    name = _name()
    first = await workflows.save("team", load_text(ONE.format(name=name)), base_version=0,
                                 by="user:ann", how="file")  # fmt: skip
    second = await workflows.save("team", load_text(TWO.format(name=name)), base_version=1,
                                  by="run:abc", how="chat")  # fmt: skip
    assert (first.version, first.by, first.how, first.change) == (
        1, "user:ann", "file", "created with 1 steps",
    )  # fmt: skip
    assert (second.version, second.by, second.how, second.change) == (
        2, "run:abc", "chat", "added step b",
    )  # fmt: skip
    assert (await workflows.get("team", name, 1)).workflow == load_text(ONE.format(name=name))
    assert (await workflows.get("team", name)).version == 2
    history = await workflows.history("team", name)
    assert [(v.version, v.how, v.workflow) for v in history] == [
        (1, "file", None),
        (2, "chat", None),
    ]
    listed = {s.name: s for s in await workflows.list("team")}
    assert (listed[name].version, listed[name].steps) == (2, 2)
    assert name not in {s.name for s in await workflows.list("other")}  # per workspace


async def test_a_save_on_a_stale_version_is_refused(workflows: Workflows) -> None:
    name = _name()
    definition = load_text(ONE.format(name=name))
    await workflows.save("team", definition, base_version=0, by="user:ann", how="api")
    await workflows.save("team", definition, base_version=1, by="user:bob", how="canvas")
    with pytest.raises(WorkflowConflictError, match="version 2 is the latest"):
        await workflows.save("team", definition, base_version=1, by="user:ann", how="canvas")
    with pytest.raises(WorkflowConflictError, match="exists already"):
        await workflows.save("team", definition, base_version=0, by="user:ann", how="api")
    with pytest.raises(WorkflowConflictError):
        await workflows.edit("team", name, [{"op": "move", "step": "a", "x": 1, "y": 2}],
                             base_version=1, by="user:ann", how="api")  # fmt: skip
    assert len(await workflows.history("team", name)) == 2


async def test_two_editors_racing_on_one_version_get_one_save(workflows: Workflows) -> None:
    name = _name()
    await workflows.save("team", load_text(ONE.format(name=name)), base_version=0,
                         by="user:ann", how="api")  # fmt: skip
    moves = [
        workflows.edit(
            "team",
            name,
            [{"op": "move", "step": "a", "x": i, "y": 0}],
            base_version=1,
            by=f"user:u{i}",
            how="canvas",
        )
        for i in range(4)
    ]
    results = await asyncio.gather(*moves, return_exceptions=True)
    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(isinstance(r, WorkflowConflictError) for r in results if isinstance(r, Exception))


async def test_missing_workflows_and_versions_are_not_found(workflows: Workflows) -> None:
    name = _name()
    with pytest.raises(WorkflowNotFoundError):
        await workflows.get("team", name)
    await workflows.save("team", load_text(ONE.format(name=name)), base_version=None,
                         by="user:ann", how="api")  # fmt: skip
    with pytest.raises(WorkflowNotFoundError, match="version 7"):
        await workflows.get("team", name, 7)
    with pytest.raises(WorkflowNotFoundError):
        await workflows.history("team", _name())
    with pytest.raises(WorkflowNotFoundError):
        await workflows.get("other", name)


async def test_runs_are_bound_to_the_workflow_they_edit(workflows: Workflows) -> None:
    run_id = uuid.uuid4().hex
    assert await workflows.store.bound(run_id) is None
    await workflows.store.bind_run(run_id, "team", "release", "chat")
    assert await workflows.store.bound(run_id) == ("team", "release", "chat")


async def test_only_sql_databases_hold_workflows() -> None:
    with pytest.raises(ConfigError):
        await open_workflows("memory://")
