"""A world may not hold Helix's own data: its home or its SQLite store.

A run's snapshots read every file of its world and its tools may write them; a world
holding the store would copy it into snapshots, let the agent rewrite the log, and
(opening and closing the database file in the process holding it) drop SQLite's
locks, so that another process's connection could reset the write-ahead log under it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.errors import ConfigError
from helix.kernel.log import MemoryEventStore, SqliteEventStore
from helix.runtime import Blueprint, Engine


async def test_a_world_holding_the_home_is_refused_before_the_run_exists(tmp_path: Path) -> None:
    engine = Engine(MemoryEventStore(), home=tmp_path / "home", env={})
    (tmp_path / "home").mkdir()
    with pytest.raises(ConfigError, match="holds Helix's own data"):
        await engine.create("x", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    assert (await engine.store.list_runs()).runs == []


async def test_a_world_holding_the_store_file_is_refused(tmp_path: Path) -> None:
    store = SqliteEventStore(tmp_path / "project" / "helix.db")
    try:
        engine = Engine(store, home=tmp_path / "home", env={})
        with pytest.raises(ConfigError, match=r"helix\.db"):
            await engine.create(
                "x", blueprint=Blueprint(model="scripted:t"), world=tmp_path / "project"
            )
        inside = tmp_path / "project" / "src"
        inside.mkdir()
        record = await engine.create("x", blueprint=Blueprint(model="scripted:t"), world=inside)
        assert record.world == str(inside.resolve())
    finally:
        await store.close()
