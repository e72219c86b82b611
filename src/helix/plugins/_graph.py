"""Reactive dependencies: which plugins are active, and who restarts when one changes.

A plugin is active when it loaded, keeps its contract, is not disabled, and every
capability it requires is provided by an active plugin. When a plugin appears,
changes (a new version) or goes, only it and the plugins that depend on it, directly
or through others, are stopped (``deactivate``, last started first) and started again
(``activate``, given what they require, providers first); every other plugin is left
exactly as it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from helix.errors import InvalidComponentError
from helix.providers import register_provider, unregister_provider
from helix.ui import ComponentKind, component_kind, register_component, unregister_component

from ._declare import Plugin

Status = Literal["active", "inactive", "failed", "disabled"]


@dataclass
class Slot:
    """One plugin as the graph knows it (its current version, or why it has none)."""

    name: str
    plugin: Plugin | None
    status: Status
    reason: str = ""
    """Why it is not active (empty when it is)."""


@dataclass
class Graph:
    """The plugins' states, and the ones started now, in the order they were started."""

    slots: dict[str, Slot] = field(default_factory=dict[str, Slot])
    running: dict[str, tuple[Plugin, dict[str, Any]]] = field(
        default_factory=dict[str, tuple[Plugin, dict[str, Any]]]
    )
    """name → the version started and what it was given, in start order."""
    kinds: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    """name → the component kinds it registered in ``helix.ui`` (one process-wide
    registry: a kind another ``Plugins`` registered with the same schema is shared,
    and stays its)."""

    def dependents(self, names: Iterable[str]) -> set[str]:
        """``names`` and every plugin needing a capability of one of them, transitively."""
        closure = set(names)
        while True:
            keys = {k for n in closure for p in self._versions(n) for k in p.provides}
            more = {
                s.name
                for s in self.slots.values()
                if s.name not in closure
                and any(k in keys for p in self._versions(s.name) for k in p.requires)
            }
            if not more:
                return closure
            closure |= more

    def _versions(self, name: str) -> list[Plugin]:
        """Its current declaration and the one running (they differ during a reload)."""
        found = [self.running[name][0]] if name in self.running else []
        slot = self.slots.get(name)
        if slot is not None and slot.plugin is not None:
            found.append(slot.plugin)
        return found

    def settle(self, changed: Iterable[str]) -> set[str]:
        """Restart ``changed`` and their dependents; return the names stopped or started.

        A hook that raises makes its plugin ``failed`` (the reason says why); its
        dependents then stay inactive.
        """
        affected = self.dependents(changed)
        touched: set[str] = set()
        for name in reversed(list(self.running)):
            if name in affected:
                self._stop(name)
                touched.add(name)
        pending = [
            n
            for n in self.slots
            if n in affected and self.slots[n].status not in ("failed", "disabled")
        ]
        provided = self._provided()
        progress = True
        while progress:
            progress = False
            for name in list(pending):
                plugin = self.slots[name].plugin
                assert plugin is not None
                if not all(k in provided for k in plugin.requires):
                    continue
                pending.remove(name)
                progress = True
                touched.add(name)
                problem = self._start(name, plugin, provided)
                if problem is not None:
                    self.slots[name].status, self.slots[name].reason = "failed", problem
                    continue
                provided.update({k: (name, v) for k, v in plugin.provides.items()})
        for name in pending:
            slot = self.slots[name]
            slot.status, slot.reason = "inactive", self._missing(slot.plugin, provided)
        return touched

    def _provided(self) -> dict[str, tuple[str, Any]]:
        return {k: (n, v) for n, (p, _) in self.running.items() for k, v in p.provides.items()}

    def _start(
        self, name: str, plugin: Plugin, provided: Mapping[str, tuple[str, Any]]
    ) -> str | None:
        for key in plugin.provides:
            if key in provided:
                return f"provides {key}, which plugin {provided[key][0]} provides already"
        gates = {g.name: n for n, (p, _) in self.running.items() for g in p.gates}
        for gate in plugin.gates:
            if gate.name in gates:  # one run's pipeline could not hold both
                return (
                    f"declares gate {gate.name}, which plugin {gates[gate.name]} declares already"
                )
        given = {k: provided[k][1] for k in plugin.requires}
        registered: list[str] = []
        kinds: list[str] = []
        try:
            for provider, opener in plugin.providers.items():
                register_provider(provider, opener)
                registered.append(provider)
            for component in plugin.components:
                if _registered_alike(component.name, component.schema):
                    continue
                register_component(
                    ComponentKind(component.name, dict(component.schema), component.render_text)
                )
                kinds.append(component.name)
            if plugin.activate is not None:
                plugin.activate(given)
        except Exception as error:
            for provider in registered:
                unregister_provider(provider)
            for kind in kinds:
                unregister_component(kind)
            return f"does not start: {type(error).__name__}: {error}"
        self.running[name] = (plugin, given)
        self.kinds[name] = kinds
        slot = self.slots[name]
        slot.status, slot.reason = "active", ""
        return None

    def _stop(self, name: str) -> None:
        plugin, given = self.running.pop(name)
        for provider in plugin.providers:
            unregister_provider(provider)
        for kind in self.kinds.pop(name, []):
            with contextlib.suppress(InvalidComponentError):
                unregister_component(kind)
        if plugin.deactivate is not None:
            # a plugin that fails to stop must not keep the others from starting
            with contextlib.suppress(Exception):
                plugin.deactivate(given)
        slot = self.slots.get(name)
        if slot is not None and slot.status == "active":
            slot.status, slot.reason = "inactive", "restarting"

    def _missing(self, plugin: Plugin | None, provided: Mapping[str, tuple[str, Any]]) -> str:
        assert plugin is not None
        needs: list[str] = []
        for key in plugin.requires:
            if key in provided:
                continue
            owners = [
                s for s in self.slots.values() if s.plugin is not None and key in s.plugin.provides
            ]
            if owners:
                owner = owners[0]
                needs.append(f"needs {key} from plugin {owner.name}, which is {owner.status}")
            else:
                needs.append(f"needs {key}, which no plugin provides")
        return "; ".join(needs)


def _registered_alike(name: str, schema: Mapping[str, Any]) -> bool:
    """Whether ``helix.ui`` has the kind ``name`` already, with this schema."""
    try:
        return component_kind(name).schema == dict(schema)
    except InvalidComponentError:
        return False
