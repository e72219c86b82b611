"""A plugin's contract, checked when it is loaded.

Every error says which plugin, which capability and what is wrong; a plugin that
fails its contract is never activated.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from helix.errors import PluginError
from helix.gates import build_gate_pipeline
from helix.sandbox import Sandbox
from helix.tools import Facets, ToolDef

from ._declare import Plugin, PluginComponent
from ._versions import release, satisfies

_NAME = re.compile(r"[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)*")
_KEY = re.compile(r"[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+")
_TOOL = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What every model provider accepts as a tool's name."""
_BUILTIN_GATES = frozenset(build_gate_pipeline().names)


def check_plugin(found: object, *, expected: str, helix_version: str) -> Plugin:
    """``found`` if it is a ``Plugin`` keeping its contract, else ``PluginError``.

    ``expected`` is the name it was found under (its entry point, its folder): the
    declaration must agree. ``helix_version`` is checked against its ``helix`` range.
    """
    if not isinstance(found, Plugin):
        raise PluginError(
            f"plugin {expected}: declares {type(found).__name__}, not a helix.plugins.Plugin"
            " (a module's `plugin` attribute, or the entry point's object)"
        )
    plugin = found
    where = f"plugin {plugin.name!r}" if isinstance(plugin.name, str) else f"plugin {expected}"
    if not isinstance(plugin.name, str) or not _NAME.fullmatch(plugin.name):
        raise PluginError(f"{where}: name must be lowercase words joined by dots (acme.search)")
    if plugin.name != expected:
        raise PluginError(f"{where}: found as {expected!r}; the two names must agree")
    _check_version(where, plugin, helix_version)
    _check_keys(where, plugin)
    _check_tools(where, plugin.tools)
    _check_gates(where, plugin)
    _check_components(where, plugin)
    _check_callables(where, "providers", plugin.providers, lambda name: _NAME.fullmatch(name))
    _check_callables(where, "notifiers", plugin.notifiers, lambda name: bool(name))
    _check_callables(where, "renderers", plugin.renderers, lambda name: bool(name))
    for name, sandbox in plugin.sandboxes.items():
        if not isinstance(sandbox, Sandbox):
            raise PluginError(f"{where}: sandboxes.{name}: not a helix.sandbox.Sandbox")
    for hook in ("activate", "deactivate", "prepare_world"):
        value = getattr(plugin, hook)
        if value is not None and not callable(value):
            raise PluginError(f"{where}: {hook}: not callable")
    return plugin


def _check_version(where: str, plugin: Plugin, helix_version: str) -> None:
    try:
        release(plugin.version)
    except (TypeError, ValueError):
        raise PluginError(f"{where}: version {plugin.version!r} is not a version (1.2.0)") from None
    if plugin.helix is None:
        return
    try:
        fits = satisfies(helix_version, plugin.helix)
    except (TypeError, ValueError) as error:
        raise PluginError(f"{where}: helix: {error}") from None
    if not fits:
        raise PluginError(f"{where}: needs helix {plugin.helix}; this is helix {helix_version}")


def _check_keys(where: str, plugin: Plugin) -> None:
    for key in plugin.requires:
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise PluginError(
                f"{where}: requires {key!r}: a capability key is namespaced (acme.vector_store)"
            )
    doubled = sorted({k for k in plugin.requires if plugin.requires.count(k) > 1})
    if doubled:
        raise PluginError(f"{where}: requires {', '.join(doubled)} more than once")
    for key in plugin.provides:
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise PluginError(f"{where}: provides {key!r}: not a namespaced capability key")
        _own(where, "provides", key, plugin.namespace)
        if key in plugin.requires:
            raise PluginError(f"{where}: provides {key} and requires it too")


def _own(where: str, kind: str, key: str, namespace: str) -> None:
    if not key.startswith(namespace + "."):
        raise PluginError(
            f"{where}: {kind} {key!r}: outside its namespace (names start with {namespace}.)"
        )


def _check_tools(where: str, tools: Iterable[object]) -> None:
    seen: set[str] = set()
    for index, definition in enumerate(tools):
        label = f"{where}: tools[{index}]"
        if not isinstance(definition, ToolDef):
            raise PluginError(f"{label}: not a helix.tools.ToolDef (declare it with @tool)")
        label = f"{where}: tool {definition.name!r}"
        if not isinstance(definition.name, str) or not _TOOL.fullmatch(definition.name):
            raise PluginError(f"{label}: a name is 1-64 letters, digits, '_' or '-'")
        if definition.name in seen:
            raise PluginError(f"{label}: declared twice")
        seen.add(definition.name)
        if not isinstance(definition.facets, Facets):
            raise PluginError(f"{label}: no facets (the gates read what it does from them)")
        if not inspect.iscoroutinefunction(definition.function):
            raise PluginError(f"{label}: its function is not async")
        _check_schema(label, definition)


def _check_schema(label: str, definition: ToolDef) -> None:
    schema = definition.parameters
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise PluginError(f"{label}: parameters is not a JSON Schema of type object")
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping) or not all(
        isinstance(p, Mapping) for p in properties.values()
    ):
        raise PluginError(f"{label}: parameters.properties must map names to schemas")
    required = schema.get("required", [])
    if not isinstance(required, list) or not set(required) <= set(properties):
        raise PluginError(f"{label}: parameters.required names arguments it does not define")
    if not (isinstance(definition.arguments, type) and issubclass(definition.arguments, BaseModel)):
        raise PluginError(f"{label}: arguments is not a pydantic model")
    fields = set(definition.arguments.model_fields)
    if set(properties) != fields:
        raise PluginError(
            f"{label}: parameters ({', '.join(sorted(properties)) or 'none'}) differ from"
            f" its arguments ({', '.join(sorted(fields)) or 'none'})"
        )
    missing = sorted(definition.facets.arguments - fields)
    if missing:
        raise PluginError(f"{label}: facets name arguments it does not have: {', '.join(missing)}")


def _check_gates(where: str, plugin: Plugin) -> None:
    seen: set[str] = set()
    for index, gate in enumerate(plugin.gates):
        name = getattr(gate, "name", None)
        if not isinstance(name, str) or not name:
            raise PluginError(f"{where}: gates[{index}]: has no name")
        label = f"{where}: gate {name!r}"
        if name in _BUILTIN_GATES:
            raise PluginError(f"{label}: a built-in gate's name")
        _own(where, "gate", name, plugin.namespace)
        if name in seen:
            raise PluginError(f"{label}: declared twice")
        seen.add(name)
        call = type(gate).__call__ if callable(gate) else None
        if not inspect.iscoroutinefunction(call):
            raise PluginError(f"{label}: needs an async __call__(call, ctx) returning a Decision")
        for facet in getattr(gate, "facets", None) or ():
            try:
                Facets().declares(facet)
            except ValueError as error:
                raise PluginError(f"{label}: {error}") from None


def _check_components(where: str, plugin: Plugin) -> None:
    seen: set[str] = set()
    for index, component in enumerate(plugin.components):
        if not isinstance(component, PluginComponent):
            raise PluginError(f"{where}: components[{index}]: not a helix.plugins.PluginComponent")
        label = f"{where}: component {component.name!r}"
        _own(where, "component", component.name, plugin.namespace)
        if component.name in seen:
            raise PluginError(f"{label}: declared twice")
        seen.add(component.name)
        schema = component.schema
        if not isinstance(schema, Mapping) or schema.get("type") != "object":
            raise PluginError(f"{label}: schema is not a JSON Schema of type object")
        if component.render_text is not None and not callable(component.render_text):
            raise PluginError(f"{label}: render_text is not callable")


def _check_callables(where: str, kind: str, entries: Mapping[str, Any], valid: Any) -> None:
    if not isinstance(entries, Mapping):
        raise PluginError(f"{where}: {kind}: a mapping of names")
    for name, value in entries.items():
        if not isinstance(name, str) or not valid(name):
            raise PluginError(f"{where}: {kind}: {name!r} is not a valid name")
        if not callable(value):
            raise PluginError(f"{where}: {kind}.{name}: not callable")
