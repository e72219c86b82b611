"""A plugin's declaration: what it provides to Helix and what it needs from others.

A plugin is a Python module (an installed package's entry point in the
``helix.plugins`` group, or a development folder) that builds one ``Plugin``::

    from helix.plugins import Plugin, PluginComponent

    plugin = Plugin(
        name="acme.search",
        version="1.2.0",
        helix=">=0.1",
        requires=("acme.vector_store",),      # capability keys other plugins provide
        provides={"acme.searcher": Searcher()},
        tools=(search,),                      # helix.tools.ToolDef, with facets
        gates=(NoSecretsGate(),),             # before approval, after the budget gate
        components=(PluginComponent("acme.hits", HITS_SCHEMA, render_hits),),
        activate=connect,                     # given the capabilities it requires
        deactivate=disconnect,
    )

Nothing here is trusted: ``helix.plugins.check_plugin`` checks every field when the
plugin is loaded and names what is wrong (docs/plugins.md, "Contracts").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Capabilities = Mapping[str, Any]
"""The capabilities a plugin requires, by key, as their providers gave them."""
Hook = Callable[[Capabilities], None]
"""Called when a plugin becomes active (with what it requires) or stops being active."""


@dataclass(frozen=True, slots=True)
class WorldRequest:
    """A run about to be created, whose world a plugin may prepare (``Plugin.prepare_world``)."""

    run_id: str
    """The id the run will have."""
    world: Path
    """The world the run was asked for (absolute, resolved; a previous plugin's, if one
    prepared it first)."""
    home: Path
    """Helix's home: where a plugin may keep folders of its own (never inside ``world``)."""


WorldHook = Callable[[WorldRequest], Awaitable[Path | None]]
"""Prepares a run's world before the run is created: returns the world the run gets
instead (a git worktree, say), or ``None`` to leave it as asked."""


@dataclass(frozen=True, slots=True)
class PluginComponent:
    """A generative UI component kind a plugin adds (``ui.component`` events of it)."""

    name: str
    """The kind, namespaced like the plugin's capabilities (``acme.hits``)."""
    schema: Mapping[str, Any]
    """The JSON Schema its props must meet (an object schema)."""
    render_text: Callable[[dict[str, Any]], str] | None = None
    """How a terminal shows it, from its props; ``None``: as JSON."""


@dataclass(frozen=True, slots=True)
class Plugin:
    """What a plugin provides and needs (see the module's documentation)."""

    name: str
    """Lowercase, dot-separated words (``acme`` or ``acme.search``); its first word is
    its namespace: the capabilities, gates and components it provides start with it."""
    version: str
    """Its own version (``1.2.0``); Helix appends a hash of its files."""
    helix: str | None = None
    """The Helix versions it works with (``>=0.1,<1``); ``None``: any."""
    requires: tuple[str, ...] = ()
    """Capability keys it needs (``acme.vector_store``): inactive until all are provided."""
    provides: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Capability key → the object given to the plugins that require it."""
    tools: tuple[Any, ...] = ()
    """``helix.tools.ToolDef``s offered to the runs that name the plugin."""
    gates: tuple[Any, ...] = ()
    """``helix.gates.Gate``s every call of those runs passes (before approval)."""
    providers: Mapping[str, Callable[[str], Any]] = field(default_factory=dict[str, Any])
    """Model providers: name → opener of ``name:MODEL`` (``helix.providers.register_provider``)."""
    notifiers: Mapping[str, Callable[..., Any]] = field(default_factory=dict[str, Any])
    """Notification channels: name → an async callable given a ``helix.notify.Notice``."""
    sandboxes: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Sandbox tiers: name → a ``helix.sandbox.Sandbox``."""
    components: tuple[PluginComponent, ...] = ()
    renderers: Mapping[str, Callable[[dict[str, Any]], str]] = field(default_factory=dict[str, Any])
    """Event renderers: component kind or event type → text from its data."""
    activate: Hook | None = None
    deactivate: Hook | None = None
    prepare_world: WorldHook | None = None
    """Called (awaited) by ``Engine.create`` for each run naming the plugin, before the
    run is created; what it returns becomes the run's world (docs/plugins.md, "Runs")."""

    @property
    def namespace(self) -> str:
        """The first word of its name: what its capability keys start with."""
        return self.name.split(".", 1)[0]

    def summary(self) -> dict[str, list[str]]:
        """What it provides, by kind, as names (for listings and events)."""
        return {
            "tools": [str(getattr(t, "name", t)) for t in self.tools],
            "gates": [str(getattr(g, "name", g)) for g in self.gates],
            "components": [getattr(c, "name", str(c)) for c in self.components],
            "capabilities": list(self.provides),
            "providers": list(self.providers),
            "notifiers": list(self.notifiers),
            "sandboxes": list(self.sandboxes),
            "renderers": list(self.renderers),
        }
