"""Contracts checked at load: each broken declaration is refused with a precise error
(which plugin, which capability, what is wrong), and a broken plugin never crashes
the others or the listing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from helix.errors import PluginError
from helix.gates import Decision
from helix.plugins import Plugin, PluginComponent, Plugins, check_plugin, satisfies
from helix.tools import ToolContext, ToolDef, ToolResult, tool

from ._folders import simple, write_plugin


@tool(read_only=True, effect="none")
async def fine(ctx: ToolContext, text: str) -> ToolResult:
    """A tool that keeps the contract."""
    return ToolResult(ok=True, output=text)


class Gate:
    name = "acme.fine"

    async def __call__(self, call: Any, ctx: Any) -> Decision:
        return Decision("allow", "fine")


class SyncGate:
    name = "acme.sync"

    def __call__(self, call: Any, ctx: Any) -> Decision:
        return Decision("allow", "fine")


def replace_name(gate: Any, name: str) -> Any:
    gate.name = name
    return gate


class Empty(BaseModel):
    pass


def check(**fields: Any) -> Plugin:
    base: dict[str, Any] = {"name": "acme", "version": "1.0"}
    return check_plugin(Plugin(**{**base, **fields}), expected="acme", helix_version="0.4.2")


def test_a_plugin_keeping_its_contract_passes() -> None:
    plugin = check(
        tools=(fine,),
        gates=(Gate(),),
        provides={"acme.store": object()},
        requires=("other.llm",),
        components=(PluginComponent("acme.card", {"type": "object"}),),
        helix=">=0.4,<1",
    )
    assert plugin.summary()["capabilities"] == ["acme.store"]


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"tools": (lambda: None,)}, r"plugin 'acme': tools\[0\]: not a helix.tools.ToolDef"),
        (
            {"tools": (replace(fine, facets=None),)},  # type: ignore[arg-type]
            "plugin 'acme': tool 'fine': no facets",
        ),
        (
            {"tools": (replace(fine, parameters={"type": "string"}),)},
            "tool 'fine': parameters is not a JSON Schema of type object",
        ),
        (
            {"tools": (replace(fine, parameters={"type": "object", "properties": {}}),)},
            r"tool 'fine': parameters \(none\) differ from its arguments \(text\)",
        ),
        (
            {"tools": (replace(fine, name="has space"),)},
            "tool 'has space': a name is 1-64 letters",
        ),
        ({"tools": (fine, fine)}, "tool 'fine': declared twice"),
        (
            {"tools": (ToolDef("t", "d", Empty, fine.function, parameters={"type": "object"}),)},
            None,
        ),
        ({"gates": (object(),)}, "plugin 'acme': gates\\[0\\]: has no name"),
        ({"gates": (SyncGate(),)}, "gate 'acme.sync': needs an async __call__"),
        ({"gates": (replace_name(Gate(), "approval"),)}, "gate 'approval': a built-in gate's name"),
        (
            {"gates": (replace_name(Gate(), "other.gate"),)},
            "gate 'other.gate': outside its namespace",
        ),
        ({"provides": {"vector_store": 1}}, "provides 'vector_store': not a namespaced capability"),
        ({"provides": {"other.store": 1}}, "provides 'other.store': outside its namespace"),
        ({"requires": ("llm",)}, "requires 'llm': a capability key is namespaced"),
        ({"requires": ("x.llm", "x.llm")}, "requires x.llm more than once"),
        ({"helix": ">=1.0"}, "needs helix >=1.0; this is helix 0.4.2"),
        ({"helix": "at least one"}, "helix: 'at least one' is not a version clause"),
        ({"version": "latest"}, "version 'latest' is not a version"),
        (
            {"components": (PluginComponent("acme.card", {"type": "array"}),)},
            "component 'acme.card': schema is not a JSON Schema of type object",
        ),
        ({"providers": {"acme": "not callable"}}, "providers.acme: not callable"),
        ({"activate": 3}, "activate: not callable"),
    ],
)
def test_each_broken_declaration_is_refused_precisely(
    fields: dict[str, Any], error: str | None
) -> None:
    if error is None:
        check(**fields)  # a hand-built ToolDef with a consistent schema is fine
        return
    with pytest.raises(PluginError, match=error):
        check(**fields)


def test_what_is_not_a_plugin_and_a_name_that_disagrees() -> None:
    with pytest.raises(
        PluginError, match=r"plugin acme: declares dict, not a helix\.plugins\.Plugin"
    ):
        check_plugin({}, expected="acme", helix_version="1.0")
    with pytest.raises(PluginError, match="found as 'acme'; the two names must agree"):
        check_plugin(Plugin(name="other", version="1"), expected="acme", helix_version="1.0")
    with pytest.raises(PluginError, match="name must be lowercase words"):
        check_plugin(Plugin(name="Acme!", version="1"), expected="Acme!", helix_version="1.0")


def test_version_constraints() -> None:
    assert satisfies("0.1.0", ">=0.1,<1")
    assert not satisfies("1.0", ">=0.1,<1")
    assert satisfies("1.4.2", "~=1.4")
    assert not satisfies("2.0", "~=1.4")
    assert satisfies("1.2.9", "==1.2.*")
    assert not satisfies("1.3", "==1.2.*")
    assert satisfies("1.2.0rc1+local", "==1.2")
    assert satisfies("2", "!=1.0,>1")


def test_broken_folder_plugins_are_listed_failed_and_the_others_load(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    write_plugin(root, "good", simple("good", provides='"good.store": 1'))
    write_plugin(root, "crashes", "raise RuntimeError('boom at import')\n")
    write_plugin(root, "nothing", "x = 1\n")
    write_plugin(root, "misnamed", simple("other"))
    write_plugin(root, "old", 'plugin = Plugin(name="old", version="1", helix=">=99")\n')
    write_plugin(root, "twin", simple("twin", provides='"good.store": 1'))
    write_plugin(root, "good.extra", simple("good.extra", provides='"good.store": 2'))
    gate = """
    from helix.gates import Decision


    class Check:
        name = "good.check"

        async def __call__(self, call, ctx):
            return Decision("allow", "fine")


    plugin = Plugin(name={name!r}, version="1", gates=(Check(),))
    """
    write_plugin(root, "good.gate1", gate.format(name="good.gate1"))
    write_plugin(root, "good.gate2", gate.format(name="good.gate2"))
    plugins = Plugins(home=tmp_path / "home", env={"HELIX_PLUGINS": str(root)})
    plugins.refresh_now()
    states = {i.name: (i.status, i.reason) for i in plugins.listing()}
    assert states["good"] == ("active", "")
    assert states["crashes"] == (
        "failed",
        "plugin crashes: does not import: RuntimeError: boom at import",
    )
    assert states["nothing"] == ("failed", "plugin nothing: plugin.py defines no `plugin`")
    assert states["misnamed"][0] == "failed"
    assert "found as 'misnamed'; the two names must agree" in states["misnamed"][1]
    assert states["old"][0] == "failed"
    assert "needs helix >=99; this is helix" in states["old"][1]
    assert states["twin"] == (
        "failed",
        "plugin 'twin': provides 'good.store': outside its namespace (names start with twin.)",
    )
    # Two plugins of one namespace providing one key: the second is refused, naming the first.
    assert states["good.extra"] == (
        "failed",
        "provides good.store, which plugin good provides already",
    )
    assert states["good.gate1"] == ("active", "")
    assert states["good.gate2"] == (
        "failed",
        "declares gate good.check, which plugin good.gate1 declares already",
    )


def test_a_secret_in_a_plugins_error_is_masked(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    write_plugin(
        root, "leaky", "raise RuntimeError('the key sk-verysecretvalue-123 was refused')\n"
    )
    env = {"HELIX_PLUGINS": str(root), "ACME_API_KEY": "sk-verysecretvalue-123"}
    plugins = Plugins(home=tmp_path / "home", env=env)
    plugins.refresh_now()
    reason = plugins.info("leaky").reason
    assert reason == "plugin leaky: does not import: RuntimeError: the key [redacted] was refused"
