"""Run ids as people type them, through both doors: prefixes, ``last``, and errors.

Runs get ids the test chooses (imports ``as_id``), so which prefix is unique and which
is ambiguous is known; the same suite runs against ``LocalApi`` and ``HttpApi``.
"""

from __future__ import annotations

import pytest

from helix import AsyncClient
from helix.api import Run
from helix.errors import AmbiguousRunError, ConfigError, RunNotFoundError
from helix.testing import MockModelServer

from .conftest import MODEL, follow, play

ASK = {"name": "run_command", "args": {"command": "echo hi > out.txt"}}
NAMES = ("run_aaaa1111", "run_aaaa2222", "run_bbbb0000")


async def _named_runs(client: AsyncClient, model_server: MockModelServer) -> Run:
    """Three imported runs named ``NAMES``, then a real one made after them (``last``)."""
    play(model_server, {"text": "First."})
    first = await client.create("say one thing", model=MODEL)
    await follow(client, first.id)
    lines = [line async for line in client.export(first.id)]
    for name in NAMES:
        assert (await client.import_run(lines, as_id=name)).id == name
    play(model_server, {"text": "Second."})
    newest = await client.create("say another", model=MODEL)
    await follow(client, newest.id)
    return newest


async def test_a_unique_prefix_names_the_run(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    await _named_runs(client, model_server)
    for ref in ("run_aaaa1", "aaaa1", "aaaa1111", "run_aaaa1111"):
        assert (await client.get(ref)).id == "run_aaaa1111", ref
    assert (await client.get("bbbb")).id == "run_bbbb0000"
    # Whatever comes back carries the full id, never the prefix typed.
    events = [event async for event in client.events("aaaa2")]
    assert {event.run_id for event in events[1:]} == {"run_aaaa2222"}
    exported = [line async for line in client.export("run_bbbb")]
    assert '"run_id":"run_bbbb0000"' in exported[-1]
    compared = await client.compare("aaaa1", "aaaa2")
    assert [r.id for r in compared.runs] == ["run_aaaa1111", "run_aaaa2222"]
    assert await client.files("aaaa1") == await client.files("run_aaaa1111")
    fork = await client.fork("bbbb", turn=0, message="again")
    assert fork.parent is not None
    assert (fork.parent.run_id, fork.parent.turn) == ("run_bbbb0000", 0)
    play(model_server, {"text": "Forked."})
    await follow(client, fork.id, after=fork.parent.seq)


async def test_an_ambiguous_prefix_lists_candidates(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    await _named_runs(client, model_server)
    for call in (
        lambda: client.get("aaaa"),
        lambda: client.steer("run_aaaa", "hello"),
        lambda: client.files("aaaa"),
    ):
        with pytest.raises(AmbiguousRunError) as ambiguous:
            await call()
        assert ambiguous.value.candidates == ["run_aaaa1111", "run_aaaa2222"]
        assert "is ambiguous" in str(ambiguous.value)
        assert "run_aaaa1111, run_aaaa2222" in str(ambiguous.value)
    with pytest.raises(AmbiguousRunError):
        [event async for event in client.events("aaaa")]


async def test_unknown_ids_and_prefixes_are_not_found(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    await _named_runs(client, model_server)
    for ref in ("zzzz", "run_zzzz", "aaaa3", "../etc", "a b", "%", "."):
        with pytest.raises(RunNotFoundError):
            await client.get(ref)
    with pytest.raises(RunNotFoundError):
        await client.pause("cccc")


async def test_last_is_the_newest_run(client: AsyncClient, model_server: MockModelServer) -> None:
    with pytest.raises(RunNotFoundError, match="no runs yet"):
        await client.get("last")
    newest = await _named_runs(client, model_server)
    assert (await client.get("last")).id == newest.id
    listed = await client.runs(limit=1)
    assert [r.id for r in listed.runs] == [newest.id]
    events = [event async for event in client.events("last")]
    assert events[0].run_id == newest.id
    with pytest.raises(ConfigError, match="names the newest run"):
        await client.import_run([line async for line in client.export("last")], as_id="last")


async def test_an_exact_id_wins_over_a_longer_one_it_starts(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Done."})
    run = await client.create("say it", model=MODEL)
    await follow(client, run.id)
    lines = [line async for line in client.export(run.id)]
    for name in ("copy", "copy-1", "copy-2"):
        await client.import_run(lines, as_id=name)
    assert (await client.get("copy")).id == "copy"
    with pytest.raises(AmbiguousRunError):
        await client.get("copy-")


async def test_importing_a_taken_id_gets_a_fresh_one(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Done."})
    run = await client.create("say it", model=MODEL)
    await follow(client, run.id)
    lines = [line async for line in client.export(run.id)]
    again = await client.import_run(lines)
    assert again.original_id == run.id
    assert again.id != run.id
    assert again.id.startswith("run_")
    assert (await client.get(again.id)).objective == run.objective


async def test_driven_says_whether_something_drives_the_run(
    client: AsyncClient, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Writing.", "tool_calls": [ASK]}, {"text": "Wrote it."})
    run = await client.create("write out.txt", model=MODEL)
    async for event in client.events(run.id, follow=True):
        if event.type == "approval.requested":
            break
    waiting = await client.get(run.id[:10])
    assert waiting.status == "waiting"
    assert waiting.driven is True  # the door's own driver waits on the decision
    assert not waiting.stalled
    assert [r.driven for r in (await client.runs()).runs] == [True]
    await client.decide(run.id[4:12], None, "allow")
    await follow(client, run.id)
    done = await client.get("last")
    assert (done.status, done.driven) == ("completed", None)  # ended: nothing to drive
