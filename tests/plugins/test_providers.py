"""A plugin's model provider: registered while the plugin is active, so a run whose
blueprint names the plugin can use its models; gone when the plugin goes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helix.errors import ModelNameError
from helix.kernel.log import MemoryEventStore
from helix.providers import parse_model_name, unregister_provider
from helix.runtime import Blueprint, Engine

from ._folders import write_plugin

HOUSE = """
from helix.providers import Scenario, ScriptedModel


def open_house(model: str) -> ScriptedModel:
    reply = {"text": f"hello from the house model {model}"}
    return ScriptedModel(Scenario.of(reply), label="house")


plugin = Plugin(name="house", version="2.0", providers={"house": open_house})
"""


async def test_a_run_uses_a_model_its_plugin_provides(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    write_plugin(root, "house", HOUSE)
    engine = Engine(MemoryEventStore(), home=tmp_path / "home", env={"HELIX_PLUGINS": str(root)})
    try:
        blueprint = Blueprint.model_validate({"model": "house:small", "plugins": ["house"]})
        record = await engine.create("say hello", blueprint=blueprint, attended=False)
        state = await engine.drive(record.id)
        assert state.status == "completed", state
        log = await engine.store.read(record.id)
        (done,) = [e.data for e in log if e.type == "run.completed"]
        assert done["summary"] == "hello from the house model small"

        shutil.rmtree(root / "house")
        await engine.plugins.refresh()
        assert "house" not in engine.plugins.found()
        with pytest.raises(ModelNameError, match="unknown provider 'house'"):
            parse_model_name("house:small")
    finally:
        unregister_provider("house")
