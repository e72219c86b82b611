"""A run's trace and spend grouped over time, through both doors (and the REST words)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helix import AsyncClient
from helix.api import Decision, Span, Spend
from helix.errors import ConfigError, RunNotFoundError
from helix.testing import MockModelServer

from .conftest import MODEL, Door, follow, play, raw_client


def _delegating(model_server: MockModelServer) -> None:
    play(
        model_server,
        {"text": "Listing.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Over to you.", "tool_calls": [
            {"name": "delegate", "args": {"objective": "list the files"}}]},
        {"text": "Child looks.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Nothing there."},
        {"text": "The worker found nothing."},
    )  # fmt: skip


def _walk(span: Span) -> list[Span]:
    return [span, *(s for child in span.children for s in _walk(child))]


async def test_trace_times_model_gates_and_tools_and_nests_the_child(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    _delegating(model_server)
    run = await client.create("look around", model=MODEL, auto_approve=True)
    await follow(client, run.id)
    root = await client.trace(run.id)
    assert (root.kind, root.run_id, root.status) == ("run", run.id, "completed")
    turns = [s for s in root.children if s.kind == "turn"]
    assert [t.turn for t in turns] == [1, 2, 3]
    first = turns[0]
    assert [s.kind for s in first.children] == ["model", "call"]
    model, call = first.children
    assert model.name == MODEL
    assert model.status == "ok"
    assert model.input_tokens > 0
    assert model.cost_usd > 0
    assert model.duration_ms is not None
    assert model.end_ms is not None
    assert [s.kind for s in call.children] == ["gates", "tool"]
    gates, tool = call.children
    assert gates.status == "allow"
    assert tool.status == "ok"
    assert tool.name == "list_files"
    assert gates.end_ms is not None
    assert tool.start_ms >= gates.end_ms >= gates.start_ms
    assert tool.start_ms >= model.end_ms  # in the order they happened
    # per-turn tokens and cost are the turn's model calls'
    assert first.cost_usd == model.cost_usd
    assert first.input_tokens == model.input_tokens
    assert root.cost_usd == pytest.approx(sum(t.cost_usd for t in turns))
    # the delegated child is nested under the delegate call, on the same time axis
    delegate = next(s for s in turns[1].children if s.kind == "call")
    child = next(s for s in delegate.children if s.kind == "run")
    assert child.run_id != run.id
    assert child.status == "completed"
    assert child.start_ms >= delegate.start_ms
    assert any(s.kind == "tool" and s.name == "list_files" for s in _walk(child))
    assert child.cost_usd > 0
    with pytest.raises(RunNotFoundError):
        await client.trace("run_nothing_here")


async def test_spend_groups_buckets_and_filters(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    _delegating(model_server)
    run = await client.create("look around", model=MODEL, auto_approve=True)
    await follow(client, run.id)
    spent = await client.spend(by="run", bucket="day")
    assert isinstance(spent, Spend)
    assert spent.runs == 2  # the run and its child, each its own calls
    assert spent.by == "run"
    assert set(spent.groups) == set(spent.by_run)
    assert run.id in spent.groups
    assert spent.total.cost_usd > 0
    assert sum(u.cost_usd for u in spent.groups.values()) == pytest.approx(spent.total.cost_usd)
    assert {p.key for p in spent.series} == set(spent.by_run)
    assert sum(p.usage.cost_usd for p in spent.series) == pytest.approx(spent.total.cost_usd)
    assert all(p.start.endswith("T00:00:00Z") for p in spent.series)
    assert set(spent.by_workspace) == {"default"}
    hourly = await client.spend(by="provider", bucket="hour")
    assert {p.key for p in hourly.series} == {"openai"}
    assert all(p.start.endswith(":00:00Z") for p in hourly.series)
    # filters: a model, a time window, a person
    assert (await client.spend(model=MODEL)).total == spent.total
    assert (await client.spend(model="openai:other")).runs == 0
    assert (await client.spend(since="2000-01-01", until="2999-01-01")).total == spent.total
    assert (await client.spend(since="2999-01-01")).total.cost_usd == 0
    assert (await client.spend(since="7d")).runs == 2
    assert (await client.spend(person="user:nobody")).runs == 0
    for bad in ({"by": "colour"}, {"bucket": "week"}, {"since": "yesterday-ish"}):
        with pytest.raises(ConfigError):
            await client.spend(**bad)


async def test_spend_and_trace_words_over_rest(
    server_door: Door, model_server: MockModelServer
) -> None:
    async with server_door.client() as client:
        _delegating(model_server)
        run = await client.create("look around", model=MODEL, auto_approve=True)
        await follow(client, run.id)
    with raw_client(server_door) as rest:
        answer = rest.get("/spend", params={"by": "model", "bucket": "day", "from": "1d"})
        assert answer.status_code == 200
        assert answer.json()["groups"][MODEL]["cost_usd"] > 0
        for params in ({"by": "colour"}, {"bucket": "week"}, {"from": "nope"}, {"to": "x" * 65}):
            refused = rest.get("/spend", params=params)
            assert refused.status_code == 422, (params, refused.text)
            assert set(refused.json()) == {"error"}
        assert rest.get(f"/runs/{run.id}/trace").json()["kind"] == "run"
        missing = rest.get("/runs/run_nothing/trace")
        assert missing.status_code == 404
        assert set(missing.json()) == {"error"}


async def test_another_workspace_sees_neither_trace_nor_spend(
    server_door: Door, model_server: MockModelServer
) -> None:
    from tests.server.conftest import Admin

    assert server_door.live is not None
    async with server_door.client() as client:
        _delegating(model_server)
        run = await client.create("look around", model=MODEL, auto_approve=True)
        await follow(client, run.id)
    admin = Admin(server_door.live.config.db_url)
    admin.user("mallory")  # in a workspace of her own only
    token = admin.api_token("mallory")
    async with AsyncClient(server_door.url, token=token) as other:
        assert (await other.spend()).runs == 0
        assert (await other.spend(workspace="default")).total.cost_usd == 0
        assert (await other.spend(by="run")).groups == {}
        with pytest.raises(RunNotFoundError):
            await other.trace(run.id)


async def test_trace_gates_include_the_approval_wait_and_show_a_refusal(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    ask = {"name": "run_command", "args": {"command": "touch out.txt"}}
    play(
        model_server,
        {"text": "Writing.", "tool_calls": [ask]},
        {"text": "Again.", "tool_calls": [ask]},
        {"text": "Stopped."},
    )
    run = await client.create("write out.txt", model=MODEL)
    decisions: Iterator[Decision] = iter(["allow", "deny"])
    async for event in client.events(run.id, follow=True):
        if event.type == "approval.requested":
            await client.decide(run.id, None, next(decisions))
    root = await client.trace(run.id)
    calls = [s for turn in root.children for s in turn.children if s.kind == "call"]
    assert [c.status for c in calls] == ["ok", "failed"]
    allowed, refused = (c.children for c in calls)
    assert [s.kind for s in allowed] == ["gates", "tool"]
    assert allowed[0].status == "allow"
    assert allowed[0].detail is not None  # the gate that asked, and why
    assert [s.kind for s in refused] == ["gates"]  # never started: no tool span
    assert refused[0].status == "deny"
    # the gates span runs from the request to the start: the approval's wait is in it
    events = [e async for e in client.events(run.id)]
    asked = next(e for e in events if e.type == "approval.decided")
    started = next(e for e in events if e.type == "tool.started")
    assert allowed[0].end == started.ts
    assert allowed[0].start <= asked.ts <= allowed[0].end
