"""An MCP server's tools as Helix tools: names, checked schemas, facets, results.

Everything here comes from a server, so it is hostile until checked: a tool's name is
made safe for every model provider, its input schema must be a bounded JSON object
schema with local references only (else the tool is refused, and the refusal
logged), its description is cut, and what it returns is turned into bounded text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from pydantic import RootModel, model_validator

from helix.tools import Effect, EffectKind, Facets, ToolContext, ToolDef, ToolResult

from ._spec import McpServerSpec

SEPARATOR = "__"
"""Between a server's name and its tool's: ``time__get_current_time``."""
MAX_NAME = 64
"""The longest tool name every provider accepts (``^[a-zA-Z0-9_-]{1,64}$``)."""
MAX_SCHEMA_BYTES = 64 * 1024
MAX_SCHEMA_DEPTH = 32
MAX_DESCRIPTION = 4096
MAX_TOOLS = 256
"""Tools of one server the run takes; the rest are refused."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

Caller = Callable[[str, dict[str, Any], ToolContext], Awaitable[ToolResult]]
"""Calls a server's tool by its name on the server, with validated arguments."""


def run_name(server: str, tool: str) -> str:
    """The name the run gives ``tool`` of ``server``: ``SERVER__TOOL``, provider-safe.

    Characters other than letters, digits, ``_`` and ``-`` become ``_``; a name that
    had any, or that is too long, ends in 8 hex digits of its original's hash, so two
    tools never meet under one name.
    """
    clean = _UNSAFE.sub("_", tool) or "_"
    name = f"{server}{SEPARATOR}{clean}"
    if clean == tool and len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(tool.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    room = MAX_NAME - len(server) - len(SEPARATOR) - len(digest) - 1
    return f"{server}{SEPARATOR}{clean[:room]}_{digest}"


def schema_problem(schema: object) -> str | None:
    """Why a tool's input schema is refused, or ``None``: a bounded, local JSON object schema."""
    if not isinstance(schema, dict):
        return "its input schema is not a JSON object"
    if schema.get("type") != "object":
        return "its input schema does not describe an object (type: object)"
    try:
        size = len(json.dumps(schema))
    except (TypeError, ValueError):
        return "its input schema is not JSON"
    if size > MAX_SCHEMA_BYTES:
        return f"its input schema is {size} bytes (at most {MAX_SCHEMA_BYTES})"
    problem = _walk(schema, 0)
    if problem is not None:
        return problem
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return f"its input schema is invalid: {error.message[:200]}"
    return None


def _walk(node: object, depth: int) -> str | None:
    if depth > MAX_SCHEMA_DEPTH:
        return f"its input schema is nested deeper than {MAX_SCHEMA_DEPTH}"
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef", "$recursiveRef") and not (
                isinstance(value, str) and value.startswith("#")
            ):
                return f"its input schema refers outside itself ({key}: {str(value)[:100]})"
            problem = _walk(value, depth + 1)
            if problem is not None:
                return problem
    elif isinstance(node, list):
        for item in node:
            problem = _walk(item, depth + 1)
            if problem is not None:
                return problem
    return None


def as_shown(schema: dict[str, Any]) -> dict[str, Any]:
    """The server's schema as the model is shown it and calls are checked against.

    Its titles and its properties' (a generator's repetition of the names: noise to a
    model) are dropped, and arguments the schema does not name are refused unless it
    says otherwise (``additionalProperties``), as for Helix's own tools: a misspelt
    argument is an error, not silently ignored.
    """
    shown = {k: v for k, v in schema.items() if k != "title"}
    properties = shown.get("properties")
    if isinstance(properties, dict):
        shown["properties"] = {
            name: {k: v for k, v in prop.items() if k != "title"}
            if isinstance(prop, dict)
            else prop
            for name, prop in properties.items()
        }
    shown.setdefault("additionalProperties", False)
    return shown


def arguments_model(name: str, schema: dict[str, Any]) -> type[RootModel[dict[str, Any]]]:
    """A model validating a call's arguments against the server's schema (``jsonschema``)."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)

    class Arguments(RootModel[dict[str, Any]]):
        @model_validator(mode="after")
        def _fits(self) -> Arguments:
            errors = sorted(validator.iter_errors(self.root), key=lambda e: list(e.path))[:5]
            if errors:
                raise ValueError(
                    "; ".join(
                        f"{'.'.join(str(p) for p in e.path) or 'arguments'}: {e.message[:200]}"
                        for e in errors
                    )
                )
            return self

    Arguments.__name__ = f"{name}_arguments"
    return Arguments


def facets_of(spec: McpServerSpec, tool: str, annotations: Any) -> tuple[Facets, bool]:
    """A tool's facets and idempotence: its annotations' hints, the operator's overrides over them.

    ``readOnlyHint`` makes it read-only with no effect; anything else is ``external``
    (done outside the world, and neither withheld nor undoable), so it asks by default.
    """
    override = spec.override(tool)
    hinted_read_only = bool(getattr(annotations, "read_only_hint", None))
    hinted_idempotent = bool(getattr(annotations, "idempotent_hint", None))
    read_only = hinted_read_only if override.read_only is None else override.read_only
    default: EffectKind = "none" if read_only else "external"
    effect = default if override.effect is None else override.effect
    idempotent = hinted_idempotent if override.idempotent is None else override.idempotent
    if read_only and effect != "none":
        read_only = False  # an effect the operator named outranks a read-only hint
    facets = Facets(read_only=read_only, effect=effect, sandboxed=spec.command is not None)
    return facets, idempotent


def tool_def(spec: McpServerSpec, tool: Any, call: Caller) -> ToolDef | str:
    """The Helix tool for an MCP ``tool`` (an ``mcp_types.Tool``), or why it is refused."""
    schema = tool.input_schema
    problem = schema_problem(schema)
    if problem is not None:
        return problem
    schema = as_shown(schema)
    name = run_name(spec.name, tool.name)
    facets, idempotent = facets_of(spec, tool.name, tool.annotations)
    description = (tool.description or tool.title or tool.name)[:MAX_DESCRIPTION]
    remote = tool.name
    done = Effect(
        "irreversible", {"server": spec.name, "tool": remote}, f"mcp:{spec.name} {remote}"
    )

    async def run(ctx: ToolContext, root: dict[str, Any]) -> ToolResult:
        result = await call(remote, root, ctx)
        if facets.effect == "external" and result.ok:
            # Done outside the world: a rollback past the call says it cannot undo it.
            result = replace(result, effects=(*result.effects, done))
        return result

    return ToolDef(
        name=name,
        description=description,
        arguments=arguments_model(name, schema),
        function=run,
        facets=facets,
        idempotent=idempotent,
        concurrent=facets.read_only,
        parameters=dict(schema),
        origin=f"mcp:{spec.name}",
    )


def result_text(result: Any, limit: int) -> str:
    """What an ``mcp_types.CallToolResult`` says, as text: its text, the rest summarised.

    Images, audio and binary resources are named with their type and size, a resource
    link by its URI; structured content is shown as JSON when there is no text.
    """
    parts: list[str] = []
    for item in result.content or ():
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} {item.mime_type}, {len(item.data) * 3 // 4} bytes]")
        elif kind == "resource_link":
            parts.append(f"[resource {item.uri}]")
        elif kind == "resource":
            inner = item.resource
            text = getattr(inner, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource {inner.uri}, binary]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    text = "\n".join(parts)
    if len(text) > limit:
        text = f"{text[:limit]}\n[output truncated: {len(text) - limit} more characters]"
    return text
