"""Conformance: finding runs by an id prefix, and listing runs of several workspaces.

Every id of these tests starts with a tag of its own, and every listing is narrowed to
workspaces of its own, so backends may share one database between tests.
"""

from __future__ import annotations

import uuid

import pytest

from helix.errors import InvalidEventError
from helix.kernel.log import EventStore
from helix.testing._sessions import run_created


class RunLookupConformance:
    """``find_runs`` and ``list_runs(workspaces=…)``: mixed into ``EventStoreConformance``."""

    async def _named(self, store: EventStore, run_id: str, workspace: str) -> str:
        return (await store.create_run(run_created(), run_id=run_id, workspace=workspace)).id

    async def test_find_runs_by_prefix(self, store: EventStore) -> None:
        tag, ws, other = (f"t{uuid.uuid4().hex[:10]}" for _ in range(3))
        mine = [await self._named(store, f"{tag}-{s}", ws) for s in ("aa2", "aa1", "ab", "b")]
        hidden = await self._named(store, f"{tag}-aa3", other)
        found = await store.find_runs(f"{tag}-a", workspaces=[ws])
        assert [r.id for r in found] == sorted(mine[:3])  # in id order
        assert [r.id for r in await store.find_runs(f"{tag}-aa", workspaces=[ws])] == sorted(
            mine[:2]
        )
        assert [r.id for r in await store.find_runs(f"{tag}-aa", workspaces=[other])] == [hidden]
        everyone = await store.find_runs(f"{tag}-aa")
        assert [r.id for r in everyone] == sorted([*mine[:2], hidden])
        assert len(await store.find_runs(f"{tag}-", workspaces=[ws], limit=2)) == 2
        assert [r.id for r in await store.find_runs(mine[2], workspaces=[ws])] == [mine[2]]
        assert await store.find_runs(f"{tag}-c") == []
        assert await store.find_runs(f"{tag}-a", workspaces=[]) == []
        assert await store.find_runs("") == []

    async def test_find_runs_takes_the_prefix_literally(self, store: EventStore) -> None:
        """``_`` and ``%`` are no wildcards, and ids beyond ASCII are found in byte order."""
        tag, ws = f"t{uuid.uuid4().hex[:10]}", f"ws-{uuid.uuid4().hex[:10]}"
        dash = await self._named(store, f"{tag}-x", ws)
        under = await self._named(store, f"{tag}_x", ws)
        accented = await self._named(store, f"{tag}é9", ws)
        assert [r.id for r in await store.find_runs(f"{tag}_", workspaces=[ws])] == [under]
        assert [r.id for r in await store.find_runs(f"{tag}-", workspaces=[ws])] == [dash]
        assert [r.id for r in await store.find_runs(f"{tag}é", workspaces=[ws])] == [accented]
        every = [r.id for r in await store.find_runs(tag, workspaces=[ws])]
        assert sorted(every) == sorted([dash, under, accented])
        assert await store.find_runs(f"{tag}%", workspaces=[ws]) == []

    async def test_find_runs_bad_limit(self, store: EventStore) -> None:
        with pytest.raises(InvalidEventError):
            await store.find_runs("run_", limit=0)

    async def test_list_runs_of_several_workspaces(self, store: EventStore) -> None:
        tag = f"t{uuid.uuid4().hex[:10]}"
        a, b, c = (f"ws-{uuid.uuid4().hex[:10]}" for _ in range(3))
        ids = {ws: await self._named(store, f"{tag}-{n}", ws) for n, ws in enumerate((a, b, c))}
        both = await store.list_runs(workspaces=[a, b])
        assert sorted(r.id for r in both.runs) == sorted([ids[a], ids[b]])
        assert (await store.list_runs(workspaces=[])).runs == []
        narrowed = await store.list_runs(workspace=b, workspaces=[a, b])
        assert [r.id for r in narrowed.runs] == [ids[b]]
        assert (await store.list_runs(workspace=c, workspaces=[a, b])).runs == []
        newest = await store.list_runs(workspaces=[a, b, c], limit=1)
        assert len(newest.runs) == 1
        assert newest.next_cursor is not None
