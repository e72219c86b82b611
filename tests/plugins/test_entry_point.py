"""An installed plugin (the example package, through its entry point) in a real run:
its tool is offered and served, its gate decides calls, its component is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.errors import PluginError
from helix.kernel.log import MemoryEventStore
from helix.plugins import Plugins
from helix.providers import Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.sandbox import ProcessSandbox


def _engine(tmp_path: Path, scenario: Scenario) -> Engine:
    def model(_setup: RunSetup) -> ScriptedModel:
        return ScriptedModel(scenario, label="test")

    return Engine(
        MemoryEventStore(),
        home=tmp_path / "home",
        sandbox=ProcessSandbox(),
        model_factory=model,
        env={},
    )


async def test_the_example_plugin_serves_its_tool_and_its_gate_decides(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    (world / "notes.txt").write_text("one two three\n")
    leak = "sk-" + "x" * 24
    scenario = Scenario.of(
        {
            "text": "",
            "tool_calls": [{"name": "count_words", "args": {"path": "notes.txt"}, "id": "a"}],
        },
        {"text": "", "tool_calls": [{"name": "count_words", "args": {"path": leak}, "id": "b"}]},
        {"text": "done"},
    )
    engine = _engine(tmp_path, scenario)
    blueprint = Blueprint.model_validate(
        {"model": "scripted:t", "tools": ["read_file"], "plugins": ["example"]}
    )
    record = await engine.create("count", blueprint=blueprint, world=world, attended=False)
    state = await engine.drive(record.id)
    assert state.status == "completed", state
    log = await engine.store.read(record.id)

    (loaded,) = [e.data for e in log if e.type == "plugin.loaded"]
    version = engine.plugins.info("example").version
    assert version is not None
    assert version.startswith("0.1.0+")
    assert loaded == {
        "name": "example",
        "version": version,
        "source": "entry_point",
        "tools": ["count_words"],
        "gates": ["example.no-secrets"],
        "components": ["example.counts"],
    }
    started = [e.data for e in log if e.type == "tool.started"]
    assert [s["origin"] for s in started] == [f"plugin:example@{version}"]
    completed = [e.data for e in log if e.type == "tool.completed"]
    assert completed[0]["output"] == "notes.txt: 1 lines, 3 words, 14 characters"
    decided = [
        (e.data["call_id"], e.data["gate"], e.data["verdict"])
        for e in log
        if e.type == "gate.decided"
    ]
    assert ("a", "example.no-secrets", "allow") in decided
    assert ("b", "example.no-secrets", "deny") in decided
    gates = [g for c, g, _ in decided if c == "a"]
    assert gates.index("example.no-secrets") == len(gates) - 2, gates  # just before approval
    assert gates[-1] == "approval"
    kinds = [c.name for c in engine.plugins.components()]
    assert [k for k in kinds if not k.startswith("engineering.")] == ["example.counts"]
    shown = [e.data for e in log if e.type == "ui.component"]
    assert [(s["component"], s["props"], s["call_id"]) for s in shown] == [
        ("example.counts", {"path": "notes.txt", "lines": 1, "words": 3}, "a")
    ]


async def test_a_run_without_the_plugin_has_none_of_it(tmp_path: Path) -> None:
    scenario = Scenario.of(
        {"text": "", "tool_calls": [{"name": "count_words", "args": {"path": "x"}, "id": "a"}]},
        {"text": "done"},
    )
    engine = _engine(tmp_path, scenario)
    record = await engine.create(
        "count", blueprint=Blueprint(model="scripted:t", tools=("read_file",)), attended=False
    )
    await engine.drive(record.id)
    log = await engine.store.read(record.id)
    assert not [e for e in log if e.type.startswith("plugin.")]
    assert not [e for e in log if e.type == "tool.started"]  # unknown tool: refused by the gates


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("nowhere", "unknown plugin 'nowhere'; known plugins are engineering, example"),
        ("example", "disabled"),
    ],
)
async def test_a_blueprint_naming_a_plugin_it_cannot_have_is_refused_at_create(
    tmp_path: Path, name: str, why: str
) -> None:
    engine = _engine(tmp_path, Scenario.of({"text": "done"}))
    if why == "disabled":
        from helix.plugins import set_disabled

        set_disabled(engine.home, "example", True)
    with pytest.raises(PluginError, match=why) as refused:
        await engine.create("x", blueprint=Blueprint(model="scripted:t", plugins=(name,)))
    assert refused.value.code == "invalid_plugin"
    assert await engine.store.list_runs() is not None
    assert (await engine.store.list_runs()).runs == []


def test_a_fresh_registry_loads_nothing_until_refreshed(tmp_path: Path) -> None:
    plugins = Plugins(home=tmp_path, env={})
    assert plugins.listing() == []
    assert plugins.found() == ["engineering", "example"]  # the shipped pack, the example
    plugins.refresh_now()
    assert plugins.info("example").status == "active"
