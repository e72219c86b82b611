"""A question put to a person through an approval request, and the checks of its answer.

A tool source (an MCP server eliciting) may ask a person for a few values while one of
its tools runs. The question rides on ``approval.requested`` (``question``) and the
answer on ``approval.decided`` (``answer``). The schema comes from outside Helix, so it
is read into a closed, flat shape before it is logged (``flat_schema``): an object of
simple fields — string, number, integer, boolean, or a string from an ``enum`` — as MCP
elicitation allows. Every surface that takes an answer (REST, CLI, dashboard, TUI)
checks it with ``answer_problem`` before anything is written.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

MAX_FIELDS = 32
"""Fields a question may ask for."""
MAX_TEXT = 4000
"""Characters in a message, a title, a description or an answered string."""

_KINDS = ("string", "number", "integer", "boolean")
_KEPT = ("title", "description", "minimum", "maximum", "minLength", "maxLength", "default")


class ApprovalQuestion(BaseModel):
    """What a source asks a person: shown, never obeyed (Helix's addition to the approval)."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_by_name=True, serialize_by_alias=True
    )

    source: str
    """The tool source asking (``mcp:github``)."""
    message: str = Field(max_length=MAX_TEXT)
    """The question as the source wrote it."""
    fields: dict[str, JsonValue] = Field(default_factory=dict[str, JsonValue], alias="schema")
    """The answer's ``schema`` (``flat_schema``'s shape); empty: a plain yes or no."""


def flat_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` read into the closed flat shape a question may have (``ValueError`` if not).

    Keeps ``type: object``, ``properties`` (each a simple field with only the keys a
    form needs) and ``required``; drops anything else. An empty schema stays empty.
    """
    if not schema:
        return {}
    if schema.get("type", "object") != "object":
        raise ValueError("the answer's schema must be an object")
    properties = schema.get("properties") or {}
    if not isinstance(properties, Mapping) or len(properties) > MAX_FIELDS:
        raise ValueError(f"the schema's properties must be a mapping of at most {MAX_FIELDS}")
    fields = {str(name): _field(str(name), spec) for name, spec in properties.items()}
    required = schema.get("required") or []
    if not isinstance(required, list) or any(r not in fields for r in required):
        raise ValueError("the schema's required names fields it does not have")
    flat: dict[str, Any] = {"type": "object", "properties": fields}
    if required:
        flat["required"] = [str(r) for r in required]
    return flat


def _field(name: str, spec: Any) -> dict[str, Any]:
    if not isinstance(spec, Mapping):
        raise ValueError(f"field {name!r}: not an object")
    kind = spec.get("type")
    if kind not in _KINDS:
        raise ValueError(f"field {name!r}: type must be one of {', '.join(_KINDS)}, not {kind!r}")
    field: dict[str, Any] = {"type": kind}
    for key in _KEPT:
        if key in spec:
            field[key] = spec[key]
    for key in ("title", "description"):
        if key in field and (not isinstance(field[key], str) or len(field[key]) > MAX_TEXT):
            raise ValueError(f"field {name!r}: {key} must be a string of at most {MAX_TEXT}")
    if "enum" in spec:
        choices = spec["enum"]
        if kind != "string" or not isinstance(choices, list) or not choices:
            raise ValueError(f"field {name!r}: enum must be a non-empty list of strings")
        if not all(isinstance(c, str) and len(c) <= MAX_TEXT for c in choices):
            raise ValueError(f"field {name!r}: enum must be a non-empty list of strings")
        field["enum"] = list(choices)
        names = spec.get("enumNames")
        if isinstance(names, list) and len(names) == len(choices):
            field["enumNames"] = [str(n)[:MAX_TEXT] for n in names]
    return field


def answer_problem(schema: Mapping[str, Any], answer: Mapping[str, Any]) -> str | None:
    """What is wrong with ``answer`` for a question of ``schema`` (flat); ``None`` if nothing."""
    fields: Mapping[str, Any] = schema.get("properties") or {}
    unknown = sorted(set(answer) - set(fields))
    if unknown:
        return f"unknown field(s): {', '.join(unknown)}"
    missing = [name for name in schema.get("required") or [] if name not in answer]
    if missing:
        return f"missing required field(s): {', '.join(missing)}"
    for name, value in answer.items():
        problem = _value_problem(fields[name], value)
        if problem is not None:
            return f"{name}: {problem}"
    return None


def _value_problem(field: Mapping[str, Any], value: Any) -> str | None:
    kind = field["type"]
    if kind == "boolean":
        return None if isinstance(value, bool) else "must be true or false"
    if kind == "string":
        if not isinstance(value, str):
            return "must be a string"
        if "enum" in field and value not in field["enum"]:
            return f"must be one of {', '.join(field['enum'])}"
        if len(value) > min(int(field.get("maxLength", MAX_TEXT)), MAX_TEXT):
            return "is too long"
        if len(value) < int(field.get("minLength", 0)):
            return "is too short"
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "must be a number"
    if kind == "integer" and value != int(value):
        return "must be an integer"
    if "minimum" in field and value < field["minimum"]:
        return f"must be at least {field['minimum']}"
    if "maximum" in field and value > field["maximum"]:
        return f"must be at most {field['maximum']}"
    return None


def parse_field(schema: Mapping[str, Any], name: str, text: str) -> Any:
    """A field's value typed from ``text`` (a command line's ``name=value``); ``ValueError``."""
    fields: Mapping[str, Any] = schema.get("properties") or {}
    field = fields.get(name)
    if field is None:
        known = ", ".join(fields) or "none"
        raise ValueError(f"unknown field {name!r} (the question's fields: {known})")
    kind = field["type"]
    if kind == "boolean":
        lowered = text.strip().lower()
        if lowered in ("true", "yes", "y", "1"):
            return True
        if lowered in ("false", "no", "n", "0"):
            return False
        raise ValueError(f"{name}: must be true or false, not {text!r}")
    if kind in ("number", "integer"):
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{name}: must be a number, not {text!r}") from None
        return int(number) if kind == "integer" and number.is_integer() else number
    return text
