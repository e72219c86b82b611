"""Component kinds: a name, the JSON Schema of its props, and how a terminal shows it.

A kind is registered once per process. Helix's own (``table``, ``diff``, ``options``,
``markdown``, ``chart``) are there from the start; a plugin adds its own with
``register_component``, under a name namespaced by its package (``acme.gauge``), and
takes it away with ``unregister_component`` when it is unloaded or reloaded.

Props come from an agent or a plugin's tool: they are hostile. ``validate_component``
bounds their size and nesting before the schema sees them, and its error names the
component and the field.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from helix.errors import InvalidComponentError

MAX_PROPS_BYTES = 256 * 1024
"""The largest props a component may carry, as compact JSON."""
MAX_PROPS_DEPTH = 16
"""How deeply props may nest (objects and arrays)."""
MAX_SCHEMA_BYTES = 64 * 1024
"""The largest schema a plugin's kind may declare, as compact JSON."""

_PLUGIN_NAME = re.compile(r"^[a-z][a-z0-9_-]*(?:\.[a-z][a-z0-9_-]*)+$")
_MESSAGE_CHARS = 200

TextRenderer = Callable[[dict[str, Any]], str]
"""Draws valid props as plain text (the CLI's run view, ``helix replay``)."""
Check = Callable[[dict[str, Any]], str | None]
"""A rule a schema cannot say (ids unique, say): what is wrong, or ``None``."""


@dataclass(frozen=True, slots=True)
class ComponentKind:
    """A kind of component: its name, the JSON Schema of its props, its text renderer.

    ``render_text`` is ``None`` for a kind with no text form: terminals show its props
    as JSON. ``check`` runs after the schema accepted the props.
    """

    name: str
    schema: dict[str, Any]
    render_text: TextRenderer | None = None
    check: Check | None = None


_lock = threading.Lock()
_kinds: dict[str, ComponentKind] = {}
_builtin: set[str] = set()
_validators: dict[str, Any] = {}
"""Each kind's compiled validator, made at its first use."""


def _checked_schema(kind: ComponentKind) -> None:
    """Refuse a schema that is not an object schema, not JSON, too large or not valid."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    schema = kind.schema
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise InvalidComponentError(
            f"component kind {kind.name!r}: its schema must be a JSON Schema object with"
            f' "type": "object" (props are an object)'
        )
    try:
        size = len(json.dumps(schema, separators=(",", ":")))
    except (TypeError, ValueError) as error:
        raise InvalidComponentError(
            f"component kind {kind.name!r}: its schema is not JSON ({error})"
        ) from None
    if size > MAX_SCHEMA_BYTES:
        raise InvalidComponentError(
            f"component kind {kind.name!r}: its schema is {size} bytes (at most {MAX_SCHEMA_BYTES})"
        )
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        where = _path(error.absolute_path) or "schema"
        raise InvalidComponentError(
            f"component kind {kind.name!r}: its schema is not valid at {where}:"
            f" {_short(error.message)}"
        ) from None
    if kind.render_text is not None and not callable(kind.render_text):
        raise InvalidComponentError(f"component kind {kind.name!r}: render_text is not callable")


def _register(kind: ComponentKind, *, builtin: bool) -> None:
    """Add ``kind``, a plugin's after checking its schema.

    Helix's own schemas are checked by its tests: checking them here would load
    ``jsonschema`` with every import of ``helix.ui``.
    """
    if not builtin:
        _checked_schema(kind)
    with _lock:
        if kind.name in _kinds:
            raise InvalidComponentError(f"component kind {kind.name!r} is already registered")
        _kinds[kind.name] = kind
        if builtin:
            _builtin.add(kind.name)


def register_component(kind: ComponentKind) -> None:
    """Add a plugin's component kind.

    Its name is namespaced by its package (``acme.gauge``: lowercase, dotted); a name
    already registered, or a schema that is not a valid JSON Schema for an object, is
    an ``InvalidComponentError`` saying so.
    """
    if not isinstance(kind, ComponentKind):
        raise InvalidComponentError(f"not a ComponentKind: {type(kind).__name__}")
    if not _PLUGIN_NAME.fullmatch(kind.name):
        raise InvalidComponentError(
            f"component kind {kind.name!r}: a plugin's kind is named PACKAGE.KIND"
            " (lowercase letters, digits, '_', '-', dotted: e.g. 'acme.gauge')"
        )
    _register(kind, builtin=False)


def unregister_component(name: str) -> None:
    """Take a plugin's kind away (its plugin was unloaded); Helix's own kinds stay."""
    with _lock:
        if name in _builtin:
            raise InvalidComponentError(f"component kind {name!r} is Helix's own: it stays")
        if _kinds.pop(name, None) is None:
            raise InvalidComponentError(f"no component kind {name!r} is registered")
        _validators.pop(name, None)


def component_kinds() -> dict[str, ComponentKind]:
    """Every registered kind by name (Helix's own first, then plugins', as registered)."""
    with _lock:
        return dict(_kinds)


def component_kind(name: str) -> ComponentKind:
    """The kind called ``name``; ``InvalidComponentError`` lists the known ones."""
    with _lock:
        kind = _kinds.get(name)
        known = ", ".join(_kinds)
    if kind is None:
        raise InvalidComponentError(f"unknown component {name!r}: known components are {known}")
    return kind


def validate_component(name: str, props: Any) -> dict[str, Any]:
    """Check ``props`` for the component ``name``; return them (a JSON object).

    ``InvalidComponentError`` names the component and the field: an unknown kind,
    props that are not an object, too large (``MAX_PROPS_BYTES``) or too deep
    (``MAX_PROPS_DEPTH``), or that fail the kind's schema or its check.
    """
    kind = component_kind(name)
    if not isinstance(props, dict):
        raise InvalidComponentError(
            f"component {name!r}: props must be an object, not {type(props).__name__}"
        )
    _bounded(name, props)
    validator = _validator(kind)
    errors = sorted(validator.iter_errors(props), key=lambda e: (len(e.absolute_path), str(e.path)))
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        where = _path(first.absolute_path) or "props"
        raise InvalidComponentError(f"component {name!r}: {where}: {_short(first.message)}{more}")
    if kind.check is not None:
        problem = kind.check(props)
        if problem:
            raise InvalidComponentError(f"component {name!r}: {problem}")
    return props


def _validator(kind: ComponentKind) -> Any:
    """The kind's compiled validator (``jsonschema`` is loaded at the first validation)."""
    from jsonschema import Draft202012Validator

    with _lock:
        validator = _validators.get(kind.name)
        if validator is None:
            validator = _validators[kind.name] = Draft202012Validator(kind.schema)
    return validator


def _bounded(name: str, props: dict[str, Any]) -> None:
    """Refuse props nested deeper than ``MAX_PROPS_DEPTH`` or larger than ``MAX_PROPS_BYTES``.

    Walked without recursion, so hostile nesting cannot exhaust the stack; the size is
    measured after, on props known to be shallow.
    """
    stack: list[tuple[Any, int]] = [(props, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_PROPS_DEPTH:
            raise InvalidComponentError(
                f"component {name!r}: props nest deeper than {MAX_PROPS_DEPTH} levels"
            )
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise InvalidComponentError(f"component {name!r}: props keys must be strings")
                stack.append((item, depth + 1))
        elif isinstance(value, list | tuple):
            stack.extend((item, depth + 1) for item in value)
        elif not (value is None or isinstance(value, str | int | float | bool)):
            raise InvalidComponentError(
                f"component {name!r}: props must be JSON (found a {type(value).__name__})"
            )
    try:
        size = len(json.dumps(props, separators=(",", ":"), allow_nan=False))
    except ValueError:
        raise InvalidComponentError(
            f"component {name!r}: props must be JSON (NaN and infinity are not)"
        ) from None
    if size > MAX_PROPS_BYTES:
        raise InvalidComponentError(
            f"component {name!r}: props are {size} bytes as JSON (at most {MAX_PROPS_BYTES})"
        )


def render_text(name: str, props: Mapping[str, Any]) -> str:
    """The component as plain text: its kind's renderer, else its props as JSON.

    Never raises: a kind that is unknown here (a plugin not loaded in this process), or
    a renderer that fails, falls back to JSON under the component's name.
    """
    with _lock:
        kind = _kinds.get(name)
    if kind is not None and kind.render_text is not None:
        try:
            return kind.render_text(dict(props))
        except Exception:  # a plugin's renderer must not break a transcript
            pass
    return f"[{name}]\n" + json.dumps(props, indent=2, ensure_ascii=False, default=str)


def _path(parts: Any) -> str:
    return ".".join(str(p) for p in parts)


def _short(message: str) -> str:
    """A schema error's message, cut so hostile props cannot flood it."""
    if len(message) <= _MESSAGE_CHARS:
        return message
    return message[: _MESSAGE_CHARS - 1] + "…"
