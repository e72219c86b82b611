"""Reactive dependencies: a plugin whose needs are unmet is inactive, with the reason;
when a provider appears, changes or goes, only its dependents are restarted."""

from __future__ import annotations

import shutil
from pathlib import Path

from helix.plugins import PluginChange, Plugins

from ._folders import hooks, simple, write_plugin


def _plugins(root: Path, tmp_path: Path) -> Plugins:
    return Plugins(home=tmp_path / "home", env={"HELIX_PLUGINS": str(root)})


def test_swapping_a_provider_cycles_only_its_dependents(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    write_plugin(root, "llm", simple("llm", provides='"llm.model": "v1"'))
    write_plugin(root, "chat", simple("chat", requires=("llm.model",), provides='"chat.helper": 1'))
    write_plugin(root, "digest", simple("digest", requires=("chat.helper",)))
    write_plugin(root, "other", simple("other", provides='"other.thing": 1'))
    plugins = _plugins(root, tmp_path)
    plugins.refresh_now()
    assert {i.name: i.status for i in plugins.listing() if i.source == "folder"} == dict.fromkeys(
        ["chat", "digest", "llm", "other"], "active"
    )
    assert "start chat [('llm.model', 'v1')]" in hooks(root)
    (root / "hooks.log").unlink()
    seen: list[PluginChange] = []
    plugins.subscribe(seen.append)

    write_plugin(root, "llm", simple("llm", provides='"llm.model": "v2-swapped"'))
    before = plugins.info("llm").version
    changes = plugins.refresh_now()

    assert hooks(root) == [
        "stop digest",
        "stop chat",
        "stop llm",
        "start llm []",
        "start chat [('llm.model', 'v2-swapped')]",
        "start digest [('chat.helper', 1)]",
    ]  # "other" neither stopped nor started
    assert seen == changes
    kinds = {c.name: (c.kind, c.reason) for c in changes}
    assert kinds == {
        "llm": ("reloaded", "files changed"),
        "chat": ("restarted", "a capability it requires changed"),
        "digest": ("restarted", "a capability it requires changed"),
    }
    (reloaded,) = [c for c in changes if c.name == "llm"]
    assert reloaded.previous == before
    assert reloaded.version != before
    assert reloaded.version == plugins.info("llm").version

    # Touching a file without changing it restarts nothing.
    (root / "hooks.log").unlink()
    (root / "llm" / "plugin.py").touch()
    assert plugins.refresh_now() == []
    assert hooks(root) == []


def test_a_plugin_waits_inactive_for_its_provider_and_stops_when_it_goes(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    write_plugin(root, "needy", simple("needy", requires=("store.vectors",)))
    write_plugin(root, "bystander", simple("bystander"))
    plugins = _plugins(root, tmp_path)
    plugins.refresh_now()
    needy = plugins.info("needy")
    assert (needy.status, needy.reason) == (
        "inactive",
        "needs store.vectors, which no plugin provides",
    )
    assert plugins.info("bystander").status == "active"
    (root / "hooks.log").unlink()

    write_plugin(root, "store", simple("store", provides='"store.vectors": "db"'))
    changes = plugins.refresh_now()
    assert {(c.name, c.kind) for c in changes} == {("store", "activated"), ("needy", "activated")}
    assert hooks(root) == ["start store []", "start needy [('store.vectors', 'db')]"]
    assert plugins.info("needy").status == "active"

    (root / "hooks.log").unlink()
    shutil.rmtree(root / "store")
    changes = plugins.refresh_now()
    assert hooks(root) == ["stop needy", "stop store"]
    assert [(c.name, c.kind) for c in changes] == [
        ("needy", "deactivated"),
        ("store", "deactivated"),
    ]
    assert plugins.info("needy").reason == "needs store.vectors, which no plugin provides"
    assert "store" not in plugins.found()


def test_an_inactive_provider_is_named_in_its_dependents_reason(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    write_plugin(
        root, "store", simple("store", requires=("keys.vault",), provides='"store.vectors": 1')
    )
    write_plugin(root, "needy", simple("needy", requires=("store.vectors",)))
    write_plugin(
        root, "broken", simple("broken", provides='"broken.x": 1') + "\nraise SystemExit(3)\n"
    )
    plugins = _plugins(root, tmp_path)
    plugins.refresh_now()
    assert (
        plugins.info("needy").reason == "needs store.vectors from plugin store, which is inactive"
    )
    assert plugins.info("store").reason == "needs keys.vault, which no plugin provides"
    assert plugins.info("broken").status == "failed"
    assert "SystemExit" in plugins.info("broken").reason


def test_a_hook_that_raises_fails_its_plugin_and_leaves_its_dependents_inactive(
    tmp_path: Path,
) -> None:
    root = tmp_path / "plugins"
    write_plugin(
        root,
        "shaky",
        """
        def boom(caps):
            raise ConnectionError("no database")

        plugin = Plugin(name="shaky", version="1", provides={"shaky.db": 1}, activate=boom)
        """,
    )
    write_plugin(root, "user", simple("user", requires=("shaky.db",)))
    plugins = _plugins(root, tmp_path)
    plugins.refresh_now()
    shaky = plugins.info("shaky")
    assert (shaky.status, shaky.reason) == (
        "failed",
        "does not start: ConnectionError: no database",
    )
    assert plugins.info("user").reason == "needs shaky.db from plugin shaky, which is failed"


def test_a_disabled_plugin_is_not_loaded(tmp_path: Path) -> None:
    from helix.plugins import set_disabled

    root = tmp_path / "plugins"
    write_plugin(root, "loud", simple("loud"))
    plugins = _plugins(root, tmp_path)
    assert set_disabled(tmp_path / "home", "loud", True)
    assert not set_disabled(tmp_path / "home", "loud", True)
    plugins.refresh_now()
    assert (plugins.info("loud").status, plugins.info("loud").reason) == ("disabled", "disabled")
    assert hooks(root) == []  # its code never ran
    set_disabled(tmp_path / "home", "loud", False)
    changes = plugins.refresh_now()
    assert [(c.name, c.kind) for c in changes] == [("loud", "activated")]
    assert hooks(root) == ["start loud []"]
