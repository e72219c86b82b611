"""A model this process cannot open (no SDK, no key) is a configuration error: said once.

Refused before the run exists when it is created or resumed; a drive that still meets
one (the key vanished after the run was checked) fails the run once, with the whole
message, and is never restarted by the supervisor.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helix.api import LocalApi
from helix.errors import ConfigError, MissingKeyError
from helix.kernel.log import EventStore, open_store
from helix.runtime import Engine
from helix.testing import MockModelServer

ANTHROPIC = "anthropic:claude-sonnet-4-5"


async def _runs(store: EventStore) -> list[str]:
    return [r.id for r in (await store.list_runs(limit=100)).runs]


async def test_a_missing_key_is_refused_before_the_run_exists(
    tmp_path: Path, helix_home: Path
) -> None:
    store = await open_store(f"sqlite:///{helix_home / 'h.db'}")
    try:
        engine = Engine(store, home=helix_home, env={})
        with pytest.raises(MissingKeyError, match="set ANTHROPIC_API_KEY"):
            await engine.create("hello", model=ANTHROPIC, world=tmp_path)
        async with LocalApi(engine) as api:
            with pytest.raises(MissingKeyError, match="set ANTHROPIC_API_KEY"):
                await api.create("hello", model=ANTHROPIC, world=tmp_path)
            # a fallback chain is checked whole: the second name fails it too
            with pytest.raises(MissingKeyError, match="set OPENAI_API_KEY"):
                await engine.create("hi", model=["scripted:x.yaml", "openai:gpt-4.1"])
        assert await _runs(store) == []
    finally:
        await store.close()


async def test_a_missing_sdk_names_the_install_command(
    tmp_path: Path, helix_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # as if the extra were not installed
    store = await open_store(f"sqlite:///{helix_home / 'h.db'}")
    try:
        engine = Engine(store, home=helix_home, env={"ANTHROPIC_API_KEY": "k"})
        with pytest.raises(ConfigError) as caught:
            await engine.create("hello", model=ANTHROPIC, world=tmp_path)
        assert "pip install 'helix-harness[anthropic]'" in str(caught.value)
        assert await _runs(store) == []
    finally:
        await store.close()


async def test_keyless_local_servers_need_no_key(tmp_path: Path, helix_home: Path) -> None:
    store = await open_store(f"sqlite:///{helix_home / 'h.db'}")
    try:
        engine = Engine(store, home=helix_home, env={})
        record = await engine.create("hello", model="ollama:qwen2.5-coder:7b", world=tmp_path)
        assert record.status == "queued"
    finally:
        await store.close()


async def test_a_key_gone_by_the_drive_fails_the_run_once_with_the_whole_message(
    tmp_path: Path,
    helix_home: Path,
) -> None:
    store = await open_store(f"sqlite:///{helix_home / 'h.db'}")
    try:
        with_key = Engine(store, home=helix_home, env={"ANTHROPIC_API_KEY": "k"})
        record = await with_key.create("hello", model=ANTHROPIC, world=tmp_path)
        without = Engine(store, home=helix_home, env={})
        state = await without.drive(record.id)
        assert state.status == "failed"
        events = await store.read(record.id)
        types = [e.type for e in events]
        assert "supervisor.restarted" not in types
        assert types.count("run.failed") == 1
        failed = events[-1]
        assert failed.type == "run.failed"
        assert failed.data["error"] == "anthropic needs an API key: set ANTHROPIC_API_KEY"
    finally:
        await store.close()


async def test_resuming_without_the_key_is_refused_and_leaves_the_run_as_it_was(
    tmp_path: Path,
    helix_home: Path,
) -> None:
    store = await open_store(f"sqlite:///{helix_home / 'h.db'}")
    try:
        with_key = Engine(store, home=helix_home, env={"ANTHROPIC_API_KEY": "k"})
        record = await with_key.create("hello", model=ANTHROPIC, world=tmp_path)
        before = (await store.get_run(record.id)).next_seq
        async with LocalApi(Engine(store, home=helix_home, env={})) as api:
            with pytest.raises(MissingKeyError, match="ANTHROPIC_API_KEY"):
                await api.resume(record.id)
        after = await store.get_run(record.id)
        assert (after.status, after.next_seq) == ("queued", before)
    finally:
        await store.close()


async def test_the_demo_model_is_usable_with_its_mock_server(
    tmp_path: Path, helix_home: Path
) -> None:
    """What ``helix demo`` does: the OpenAI dialect, a key and a base URL of its own."""
    with MockModelServer() as server:
        store = await open_store(f"sqlite:///{helix_home / 'h.db'}")
        try:
            env = {"OPENAI_API_KEY": "demo", "OPENAI_BASE_URL": server.openai_base_url}
            engine = Engine(store, home=helix_home, env=env)
            record = await engine.create("hello", model="openai:scripted-demo", world=tmp_path)
            assert record.status == "queued"
        finally:
            await store.close()
