"""``Plugin.prepare_world``: a plugin gives a run another world before the run is created.

Folder plugins on disk, a real engine: the hook's answer becomes ``run.created``'s
world; a hook that raises or answers nonsense refuses the run, naming the plugin, and
nothing is created; a hook that is not callable breaks the plugin's contract.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.errors import PluginError
from helix.kernel.log import MemoryEventStore
from helix.plugins import Plugins
from helix.providers import Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.sandbox import ProcessSandbox

from ._folders import write_plugin

HOOKED = """
async def prepare(request):
    note(" ".join([request.run_id, request.world.name, request.home.name]))
    target = request.home / "prepared" / request.run_id
    target.mkdir(parents=True)
    return {answer}


plugin = Plugin(name="hooked", version="1.0", prepare_world=prepare)
"""


def _engine(tmp_path: Path, root: Path) -> Engine:
    def model(_setup: RunSetup) -> ScriptedModel:
        return ScriptedModel(Scenario.of({"text": "done"}), label="x")

    home = tmp_path / "home"
    return Engine(
        MemoryEventStore(),
        home=home,
        sandbox=ProcessSandbox(),
        model_factory=model,
        env={},
        plugins=Plugins(home=home, env={"HELIX_PLUGINS": str(root)}),
    )


BLUEPRINT = {"model": "scripted:x", "tools": [], "plugins": ["hooked"]}


async def test_the_hook_answer_is_the_run_world(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    write_plugin(root, "hooked", HOOKED.replace("{answer}", "target"))
    engine = _engine(tmp_path, root)
    asked = tmp_path / "asked"
    asked.mkdir()
    record = await engine.create("x", blueprint=Blueprint.model_validate(BLUEPRINT), world=asked)
    expected = (tmp_path / "home" / "prepared" / record.id).resolve()
    assert Path(record.world) == expected
    (created,) = [e for e in await engine.store.read(record.id) if e.type == "run.created"]
    assert created.data["world"] == str(expected)
    assert (root / "hooks.log").read_text() == f"{record.id} asked home\n"
    state = await engine.drive(record.id)
    assert state.status == "completed"


async def test_a_hook_answering_none_leaves_the_world(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    write_plugin(root, "hooked", HOOKED.replace("{answer}", "None"))
    engine = _engine(tmp_path, root)
    asked = tmp_path / "asked"
    asked.mkdir()
    record = await engine.create("x", blueprint=Blueprint.model_validate(BLUEPRINT), world=asked)
    assert Path(record.world) == asked.resolve()


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("1 / 0", "plugin hooked: could not prepare the world: ZeroDivisionError"),
        ("'relative'", "plugin hooked: prepare_world answered 'relative', not a folder"),
        ("target / 'missing'", "not a folder"),
    ],
)
async def test_a_failing_hook_refuses_the_run(tmp_path: Path, answer: str, said: str) -> None:
    root = tmp_path / "plugins"
    write_plugin(root, "hooked", HOOKED.replace("{answer}", answer))
    engine = _engine(tmp_path, root)
    asked = tmp_path / "asked"
    asked.mkdir()
    with pytest.raises(PluginError, match=said):
        await engine.create("x", blueprint=Blueprint.model_validate(BLUEPRINT), world=asked)
    assert (await engine.store.list_runs()).runs == []


def test_a_hook_that_is_not_callable_breaks_the_contract(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    write_plugin(root, "hooked", 'plugin = Plugin(name="hooked", version="1.0", prepare_world=3)\n')
    plugins = Plugins(home=tmp_path / "home", env={"HELIX_PLUGINS": str(root)})
    plugins.refresh_now()
    info = plugins.info("hooked")
    assert info.status == "failed"
    assert info.reason == "plugin 'hooked': prepare_world: not callable"
