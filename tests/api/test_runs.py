"""Runs through the one door: create, follow, list, read, control, approvals."""

from __future__ import annotations

import pytest

from helix import AsyncClient
from helix.api import Approval, Run, RunEvent
from helix.errors import (
    ApprovalClosedError,
    ConfigError,
    ConflictError,
    NotFoundError,
    RunNotFoundError,
    RunStateError,
)
from helix.kernel.events import ApprovalRequested
from helix.testing import MockModelServer

from .conftest import MODEL, Door, follow, play

ASK = {"name": "run_command", "args": {"command": "echo hi > out.txt"}}


async def test_a_run_from_start_to_end(client: AsyncClient, model_server: MockModelServer) -> None:
    play(model_server, {"text": "Hello there."})
    run = await client.create("say hello", model=MODEL)
    assert isinstance(run, Run)
    assert run.objective == "say hello"
    assert run.model == MODEL

    events = await follow(client, run.id)
    assert all(isinstance(e, RunEvent) for e in events)
    assert [e.seq for e in events] == list(range(len(events)))
    assert events[0].type == "run.created"
    assert events[-1].type == "run.completed"
    assert events[-1].data["summary"] == "Hello there."
    assert events[-1].terminal

    done = await client.get(run.id)
    assert (done.status, done.finished, done.turns) == ("completed", True, 1)
    assert done.head == events[-1].seq
    later = [e.seq async for e in client.events(run.id, after=2)]
    assert later == [e.seq for e in events[3:]]
    listed = await client.runs()
    assert [r.id for r in listed.runs] == [run.id]
    assert [r.id for r in (await client.runs(status="failed")).runs] == []


async def test_answering_approvals_from_code(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Writing.", "tool_calls": [ASK]}, {"text": "Wrote it."})
    run = await client.create("write out.txt", model=MODEL)
    asked: list[Approval] = []
    async for event in client.events(run.id, follow=True):
        if event.type == "approval.requested":
            payload = event.payload()
            assert isinstance(payload, ApprovalRequested)
            asked = await client.approvals(run.id)
            assert [(a.request_id, a.name) for a in asked] == [(payload.request_id, "run_command")]
            assert (await client.get(run.id)).status == "waiting"
            with pytest.raises(ApprovalClosedError):  # 409 over HTTP, the same class here
                await client.decide(run.id, "no-such-request", "allow")
            decided = await client.decide(run.id, None, "allow", reason="fine")
            assert (decided.request_id, decided.decision) == (payload.request_id, "allow")
    assert asked
    assert (await client.get(run.id)).status == "completed"
    assert await client.approvals(run.id) == []
    with pytest.raises(RunStateError):  # the run has ended
        await client.decide(run.id, asked[0].request_id, "deny")
    assert (await client.read(run.id, "out.txt")) == b"hi\n"


async def test_steer_pause_resume_cancel(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Writing.", "tool_calls": [ASK]}, {"text": "Stopped."})
    run = await client.create("write out.txt", model=MODEL)
    async for event in client.events(run.id, follow=True):
        if event.type == "approval.requested":
            break
    await client.steer(run.id, "take care")
    paused = await client.pause(run.id)
    assert paused.status == "paused"
    with pytest.raises(RunStateError):
        await client.pause(run.id)
    resumed = await client.resume(run.id, budget_usd=5.0)
    assert resumed.status != "paused"
    cancelled = await client.cancel(run.id)
    assert cancelled.status == "cancelled"
    events = [e async for e in client.events(run.id)]
    types = [e.type for e in events]
    assert "steer.received" in types
    assert types.index("run.paused") < types.index("run.resumed") < types.index("run.cancelled")
    assert next(e for e in events if e.type == "run.resumed").data["budget"]["usd"] == 5.0
    assert events[-1].type == "run.cancelled"
    with pytest.raises(RunStateError) as refused:
        await client.steer(run.id, "too late")
    assert isinstance(refused.value, ConflictError)  # 409 over HTTP


async def test_errors_are_helix_errors(client: AsyncClient, door: Door) -> None:
    with pytest.raises(RunNotFoundError):
        await client.get("no-such-run")
    with pytest.raises(NotFoundError):
        [e async for e in client.events("no-such-run")]
    with pytest.raises(NotFoundError):
        [e async for e in client.events("no-such-run", follow=True)]
    with pytest.raises(NotFoundError):
        await client.pause("no-such-run")
    with pytest.raises(ConfigError):
        await client.create("   ", model=MODEL)
    with pytest.raises(ConfigError):
        await client.create("a run", model="nonsense")
    with pytest.raises(ConfigError):
        await client.create("a run", model=MODEL, world="../elsewhere", workspace="default")


async def test_worlds_blueprints_and_pages(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "One."}, {"text": "Two."})
    first = await client.create(
        "one", model=MODEL, world="shared", blueprint={"name": "tiny", "system": "Be brief."}
    )
    await follow(client, first.id)
    second = await client.create("two", model=MODEL, world="shared")
    await follow(client, second.id)
    assert first.world == second.world  # a named world is one folder of the workspace
    assert first.world.endswith("/shared")
    assert (first.blueprint, second.blueprint) == ("tiny", "default")
    page = await client.runs(limit=1)
    assert [r.id for r in page.runs] == [second.id]  # newest first
    assert page.next_cursor is not None
    rest = await client.runs(limit=1, cursor=page.next_cursor)
    assert [r.id for r in rest.runs] == [first.id]


async def test_a_local_path_world(door: Door, model_server: MockModelServer) -> None:
    play(model_server, {"text": "Looked."})
    folder = door.home.parent / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    async with door.client() as client:
        if door.kind == "http":  # a path means nothing to a server: refused, not guessed
            with pytest.raises(ConfigError):
                await client.create("look", model=MODEL, world=folder)
            return
        run = await client.create("look", model=MODEL, world=folder)
        await follow(client, run.id)
        assert await client.read(run.id, "notes.txt") == b"mine\n"


async def test_a_run_paused_at_its_turn_limit_resumes_only_with_more_turns(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    looking = {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]}
    play(model_server, looking, {"text": "Seen it."})
    run = await client.create("look", model=MODEL, blueprint={"budget": {"max_turns": 1}})
    async for event in client.events(run.id, follow=True):
        if event.type == "run.paused":
            assert event.data["reason"] == "max_turns"
            break
    with pytest.raises(RunStateError, match="paused at its turn limit: resume it with a higher"):
        await client.resume(run.id)  # 409 over HTTP: it would only pause again
    with pytest.raises(RunStateError, match="has taken 1 turns already"):
        await client.resume(run.id, max_turns=1)
    assert (await client.get(run.id)).status == "paused"  # the refusals changed nothing
    await client.resume(run.id, max_turns=3, max_seconds=600)
    events = await follow(client, run.id)
    assert events[-1].type == "run.completed"
    (resumed,) = [e for e in events if e.type == "run.resumed" and e.data.get("budget")]
    assert (resumed.data["budget"]["max_turns"], resumed.data["budget"]["max_seconds"]) == (3, 600)
