"""One conformance suite for memory: the store and the rules of who may do what.

Run on SQLite (FTS5) and on PostgreSQL (full text search), through ``Memories``, the
service every surface uses.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helix.errors import MemoryDeniedError, MemoryInputError, MemoryNotFoundError
from helix.memory import (
    MAX_ARTIFACT_BYTES,
    Memories,
    Person,
    export_lines,
    import_lines,
    open_memory,
)

ANN = Person.of_actor("user:ann", {"team": "member", "ann": "owner"})
BOB = Person.of_actor("user:bob", {"team": "owner"})
VIV = Person.of_actor("user:viv", {"team": "viewer"})
EVE = Person.of_actor("user:eve", {"other": "owner"})


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'helix.db'}"
    url = request.getfixturevalue("fresh_postgres_url")
    assert isinstance(url, str)
    return url


@pytest.fixture
async def memories(database: str) -> AsyncIterator[Memories]:
    store = await open_memory(database)
    try:
        yield Memories(store)
    finally:
        await store.close()


async def test_recall_is_ranked_full_text_search_in_the_scopes_one_may_read(
    memories: Memories,
) -> None:
    await memories.remember(ANN, "team", "personal", "Ann prefers tabs over spaces")
    deploy, _ = await memories.remember(
        ANN, "team", "workspace", "Deploys go out on Tuesdays", tags=["deploy"]
    )
    await memories.remember(
        BOB, "team", "workspace", "The deploy script lives in ops/deploy.sh; deploy deploy"
    )
    await memories.remember(BOB, "team", "personal", "Bob's secret deploy notes")

    found = await memories.recall(ANN, "team", "deploy")
    texts = [m.text for m in found]
    assert "Bob's secret deploy notes" not in texts  # bob's personal: never ann's
    assert set(texts) == {"Deploys go out on Tuesdays", texts[0]}
    assert texts[0].startswith("The deploy script")  # three mentions rank first
    assert all(m.rank is not None for m in found)
    assert found[0].rank is not None
    assert found[-1].rank is not None
    assert found[0].rank >= found[-1].rank
    # every word must match; tags are searched too
    assert [m.id for m in await memories.recall(ANN, "team", "deploy tuesdays")] == [deploy.id]
    assert [m.text for m in await memories.recall(ANN, "team", "tabs")] == [
        "Ann prefers tabs over spaces"
    ]
    assert await memories.recall(ANN, "team", "tabs", scope="workspace") == []
    assert [m.text for m in await memories.recall(BOB, "team", "tabs")] == []  # an owner too


@pytest.mark.parametrize(
    "query",
    [
        '"',
        'deploy"',
        "deploy OR",
        "NEAR(deploy tuesdays)",
        "deploy*",
        "-deploy",
        "text:deploy",
        "deploy AND NOT x",
        "(",
        "'); DROP TABLE memory_items; --",
        "^deploy",
        "deploy\x00",
        "",
        "   ",
        "ünïcödé ∑ 🙂",
    ],
)
async def test_hostile_queries_are_words_never_syntax(memories: Memories, query: str) -> None:
    await memories.remember(ANN, "team", "workspace", "Deploys go out on Tuesdays deploy")
    found = await memories.recall(ANN, "team", query)  # never an error
    assert all(m.scope == "workspace" for m in found)
    assert len(await memories.recall(ANN, "team", "")) == 1  # the table is still there


async def test_a_key_replaces_and_an_edit_changes_the_search(memories: Memories) -> None:
    first, replaced = await memories.remember(ANN, "team", "workspace", "old text", key="style")
    again, replaced_now = await memories.remember(ANN, "team", "workspace", "new text", key="style")
    assert (replaced, replaced_now, again.id) == (False, True, first.id)
    assert [m.text for m in await memories.list(ANN, "team")] == ["new text"]
    edited = await memories.update(BOB, "team", first.id, text="brand words", tags=["x"])
    assert (edited.text, edited.tags, edited.by) == ("brand words", ["x"], "user:bob")
    assert await memories.recall(ANN, "team", "new") == []
    assert [m.id for m in await memories.recall(ANN, "team", "brand")] == [first.id]
    await memories.forget(ANN, "team", first.id)
    assert await memories.recall(ANN, "team", "brand") == []
    with pytest.raises(MemoryNotFoundError):
        await memories.forget(ANN, "team", first.id)
    trail = await memories.audit_trail(ANN, "team", scope="workspace")
    assert [(e.action, e.by) for e in trail] == [
        ("forget", "user:ann"),
        ("update", "user:bob"),
        ("remember", "user:ann"),
        ("remember", "user:ann"),
    ]


async def test_who_may_do_what(memories: Memories) -> None:
    mine, _ = await memories.remember(ANN, "team", "personal", "ann only")
    shared, _ = await memories.remember(ANN, "team", "workspace", "team note")
    # a viewer reads workspace memory, writes none
    assert [m.id for m in await memories.list(VIV, "team", scope="workspace")] == [shared.id]
    with pytest.raises(MemoryDeniedError, match="viewer"):
        await memories.remember(VIV, "team", "workspace", "nope")
    with pytest.raises(MemoryDeniedError):
        await memories.update(VIV, "team", shared.id, text="nope")
    with pytest.raises(MemoryDeniedError):
        await memories.save_artifact(VIV, "team", "workspace", "a.txt", b"x")
    await memories.remember(VIV, "team", "personal", "a viewer's own note")  # their own: fine
    # nobody reads, edits or deletes another's personal memory, an owner neither
    for other in (BOB, VIV):
        assert mine.id not in [m.id for m in await memories.list(other, "team")]
        with pytest.raises(MemoryNotFoundError):
            await memories.get(other, "team", mine.id)
        with pytest.raises(MemoryNotFoundError):
            await memories.forget(other, "team", mine.id)
    # a non-member sees nothing of the workspace
    with pytest.raises(MemoryNotFoundError):
        await memories.list(EVE, "team", scope="workspace")
    with pytest.raises(MemoryNotFoundError):
        await memories.recall(EVE, "team", "team")
    with pytest.raises(MemoryNotFoundError):
        await memories.get(EVE, "other", shared.id)  # another workspace's id
    # a run with no person has no personal memory
    system = Person(user=None, roles={"team": "member"}, by="run:x")
    with pytest.raises(MemoryDeniedError, match="no person"):
        await memories.remember(system, "team", "personal", "x")
    assert [m.id for m in await memories.list(system, "team")] == [shared.id]


async def test_artifacts_are_versioned_and_scoped(memories: Memories) -> None:
    one = await memories.save_artifact(ANN, "team", "workspace", "plan.md", b"# v1")
    two = await memories.save_artifact(BOB, "team", "workspace", "plan.md", b"# v2")
    await memories.save_artifact(ANN, "team", "personal", "diary.txt", b"dear diary")
    assert (one.version, two.version, two.media_type, two.size) == (1, 2, "text/markdown", 4)
    latest, content = await memories.artifact(ANN, "team", "plan.md")
    assert (latest.version, content) == (2, b"# v2")
    assert (await memories.artifact(VIV, "team", "plan.md", version=1))[1] == b"# v1"
    assert {a.name for a in await memories.artifacts(ANN, "team")} == {"plan.md", "diary.txt"}
    assert {a.name for a in await memories.artifacts(BOB, "team")} == {"plan.md"}
    with pytest.raises(MemoryNotFoundError):
        await memories.artifact(BOB, "team", "diary.txt")
    with pytest.raises(MemoryDeniedError):
        await memories.delete_artifact(VIV, "team", "workspace", "plan.md")
    assert await memories.delete_artifact(BOB, "team", "workspace", "plan.md") == 2
    with pytest.raises(MemoryNotFoundError):
        await memories.artifact(ANN, "team", "plan.md", scope="workspace")


@pytest.mark.parametrize(
    "name", ["../x", "a/b", "..", ".hidden", "a\\b", "tab\there", "", "x" * 201, " pad"]
)
async def test_bad_artifact_names_are_refused(memories: Memories, name: str) -> None:
    with pytest.raises(MemoryInputError):
        await memories.save_artifact(ANN, "team", "workspace", name, b"x")


async def test_bad_input_is_refused_with_the_reason(memories: Memories) -> None:
    with pytest.raises(MemoryInputError, match="at most"):
        await memories.save_artifact(
            ANN, "team", "workspace", "big.bin", b"x" * (MAX_ARTIFACT_BYTES + 1)
        )
    with pytest.raises(MemoryInputError, match="empty"):
        await memories.remember(ANN, "team", "workspace", "   ")
    with pytest.raises(MemoryInputError, match="tag"):
        await memories.remember(ANN, "team", "workspace", "x", tags=["bad tag"])
    with pytest.raises(MemoryInputError, match="scope"):
        await memories.remember(ANN, "team", "everyone", "x")
    with pytest.raises(MemoryInputError, match="media type"):
        await memories.save_artifact(
            ANN, "team", "workspace", "a.html", b"x", media_type="text/html; x"
        )


async def test_export_then_import_round_trips_and_a_bad_file_imports_nothing(
    memories: Memories,
) -> None:
    await memories.remember(ANN, "team", "workspace", "shared fact", tags=["a"], key="k")
    await memories.remember(ANN, "team", "personal", "private fact")
    await memories.save_artifact(ANN, "team", "workspace", "r.txt", b"one")
    await memories.save_artifact(ANN, "team", "workspace", "r.txt", b"two")
    lines = await export_lines(memories, ANN, "team")
    kinds = [json.loads(line).get("kind") for line in lines[1:]]
    assert sorted(kinds) == ["artifact", "artifact", "memory"]  # no personal one unasked
    assert len(await export_lines(memories, ANN, "team", personal=True)) == len(lines) + 1
    # into another workspace: all of it, or nothing
    owner = Person.of_actor("user:ann", {"copy": "owner"})
    counts = await import_lines(memories, owner, "copy", "\n".join(lines))
    assert counts == (1, 2)
    assert [m.text for m in await memories.list(owner, "copy", scope="workspace")] == [
        "shared fact"
    ]
    assert (await memories.artifact(owner, "copy", "r.txt"))[1] == b"two"
    good = "\n".join(lines)
    bad_lines = [
        good + "\n{not json",
        good + '\n{"kind": "memory", "scope": "workspace", "text": "x", "extra": 1}',
        good + '\n{"kind": "artifact", "scope": "workspace", "name": "../up",'
        ' "content_base64": "eA=="}',
        good + '\n{"kind": "artifact", "scope": "workspace", "name": "a", "content_base64": "!!"}',
        good + '\n{"kind": "other"}',
        '{"helix": "something else", "version": 1}',
        "",
    ]
    empty = Person.of_actor("user:ann", {"fresh": "owner"})
    for bad in bad_lines:
        with pytest.raises(MemoryInputError, match=r"line|empty"):
            await import_lines(memories, empty, "fresh", bad)
    assert await memories.list(empty, "fresh", scope="workspace") == []
    assert await memories.artifacts(empty, "fresh", scope="workspace") == []
    # a viewer imports nothing into the workspace
    with pytest.raises(MemoryDeniedError, match="line 2"):
        await import_lines(memories, VIV, "team", good)
