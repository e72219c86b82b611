"""The world, branches, the log as a file, and spend, through the one door."""

from __future__ import annotations

import json

import pytest

from helix import AsyncClient
from helix.api import Comparison, FileEntry, Kept, Rollback, Run, Spend
from helix.errors import (
    ConfigError,
    ConflictError,
    ForkError,
    InvalidEventError,
    RunExistsError,
    RunNotFoundError,
)
from helix.testing import MockModelServer

from .conftest import MODEL, follow, play


def _write(path: str, content: str) -> dict[str, object]:
    return {"name": "write_file", "args": {"path": path, "content": content}}


async def _two_turns(client: AsyncClient, model_server: MockModelServer) -> Run:
    play(
        model_server,
        {"text": "First.", "tool_calls": [_write("a.txt", "one\n")]},
        {"text": "Second.", "tool_calls": [_write("a.txt", "two\n"), _write("b.txt", "b\n")]},
        {"text": "Done."},
    )
    run = await client.create("write twice", model=MODEL, auto_approve=True)
    await follow(client, run.id)
    return await client.get(run.id)


async def test_files_diff_rollback(client: AsyncClient, model_server: MockModelServer) -> None:
    run = await _two_turns(client, model_server)
    assert run.status == "completed"
    now = await client.files(run.id)
    assert all(isinstance(f, FileEntry) for f in now)
    assert {f.path for f in now} == {"a.txt", "b.txt"}
    assert {f.path for f in await client.files(run.id, turn=1)} == {"a.txt"}
    assert await client.files(run.id, turn="start") == []
    assert await client.read(run.id, "a.txt") == b"two\n"
    assert await client.read(run.id, "a.txt", turn=1) == b"one\n"
    diff = await client.diff(run.id, start=1)
    assert "-one\n" in diff
    assert "+two\n" in diff
    assert "b.txt" in await client.diff(run.id, path="b.txt")

    rolled = await client.rollback(run.id, to=1)
    assert isinstance(rolled, Rollback)
    assert (rolled.to_turn, rolled.restored, rolled.removed) == (1, ["a.txt"], ["b.txt"])
    assert await client.read(run.id, "a.txt") == b"one\n"
    assert {f.path for f in await client.files(run.id)} == {"a.txt"}
    events = [e async for e in client.events(run.id)]
    assert events[-1].type == "world.rolled_back"
    # Following an ended run stops at its last event, even one logged after its end.
    assert [e.seq async for e in client.events(run.id, after=events[-3].seq, follow=True)] == [
        e.seq for e in events[-2:]
    ]
    assert [e async for e in client.events(run.id, after=events[-1].seq, follow=True)] == []


async def test_fork_compare_keep(client: AsyncClient, model_server: MockModelServer) -> None:
    run = await _two_turns(client, model_server)
    play(model_server, {"text": "Another way.", "tool_calls": [_write("c.txt", "c\n")]},
         {"text": "Done differently."})  # fmt: skip
    fork = await client.fork(run.id, turn=1, message="do it another way")
    assert fork.parent is not None
    assert fork.parent.run_id == run.id
    assert fork.id != run.id
    await follow(client, fork.id, after=fork.parent.seq)
    done = await client.get(fork.id)
    assert done.status == "completed"
    assert {f.path for f in await client.files(fork.id)} == {"a.txt", "c.txt"}
    assert await client.read(fork.id, "a.txt") == b"one\n"

    compared = await client.compare(run.id, fork.id)
    assert isinstance(compared, Comparison)
    assert [r.id for r in compared.runs] == [run.id, fork.id]
    assert "c.txt" in compared.diff
    assert "b.txt" in compared.diff

    kept = await client.keep(fork.id)
    assert isinstance(kept, Kept)
    assert kept.original == run.id
    assert sorted(kept.restored) == ["a.txt", "c.txt"]
    assert kept.removed == ["b.txt"]
    assert {f.path for f in await client.files(run.id)} == {"a.txt", "c.txt"}
    with pytest.raises(ConflictError):  # the original works in its own folder: nothing to keep
        await client.keep(run.id)
    with pytest.raises(ForkError):
        await client.fork(run.id, turn=99)


async def test_export_import_and_spend(client: AsyncClient, model_server: MockModelServer) -> None:
    run = await _two_turns(client, model_server)
    lines = [line async for line in client.export(run.id)]
    assert len(lines) == run.events
    imported = await client.import_run(lines, as_id="copy-1")
    assert (imported.id, imported.status, imported.events) == ("copy-1", "completed", run.events)
    copy = await client.get("copy-1")
    assert copy.world != run.world  # a new, empty folder: never the file's
    assert [e.type async for e in client.events("copy-1")] == [
        e.type async for e in client.events(run.id)
    ]
    with pytest.raises(RunExistsError):
        await client.import_run(lines, as_id="copy-1")
    with pytest.raises(InvalidEventError):
        await client.import_run(lines[1:], as_id="copy-2")
    # Its settings are checked as a blueprint file is, through either door.
    created = json.loads(lines[0])
    created["data"]["settings"]["blueprint"] = {"approvals": {"timeout_s": -1}}
    with pytest.raises(InvalidEventError, match=r"settings\.blueprint\.approvals\.timeout_s"):
        await client.import_run([json.dumps(created), *lines[1:]], as_id="copy-3")
    with pytest.raises(RunNotFoundError):
        await client.get("copy-3")

    spent = await client.spend()
    assert isinstance(spent, Spend)
    assert spent.runs == 2  # the run and its copy, each counting its own calls
    assert spent.total.input_tokens > 0
    assert set(spent.by_model) == {MODEL}
    assert spent.by_provider["openai"].output_tokens == spent.total.output_tokens
    assert (await client.spend(workspace="nobody-here")).runs == 0


async def test_spend_by_role(client: AsyncClient, model_server: MockModelServer) -> None:
    await _two_turns(client, model_server)
    spent = await client.spend(by="role")
    assert spent.by == "role"
    assert set(spent.groups) == {"main"}  # a run's own turns
    assert spent.by_role["main"].output_tokens == spent.total.output_tokens > 0
    with pytest.raises(ConfigError, match="role"):
        await client.spend(by="roles")
