"""Helix's own component kinds: their props' schemas and their text forms.

- ``table``: ``columns`` (strings), ``rows`` (arrays of cells: string, number, boolean,
  null; one per column)
- ``diff``: ``diff`` (unified diff text), ``path``?
- ``options``: ``question``, ``choices`` (``{id, label, description?}``, ids unique)
- ``markdown``: ``text``
- ``chart``: ``kind`` (``line`` or ``bar``), ``labels`` (the x axis), ``series``
  (``{name, points}``, a point per label; ``null`` for none)

Each may have a ``title``. Props beyond these are refused.
"""

from __future__ import annotations

from typing import Any

from ._kinds import ComponentKind, _register

_TITLE = {"type": "string", "maxLength": 200}
_CELL = {"type": ["string", "number", "boolean", "null"]}
CHOICE_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
"""What an options card's choice id looks like (short, safe in a URL and a command line)."""

TABLE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": _TITLE,
        "columns": {
            "type": "array",
            "items": {"type": "string", "maxLength": 200},
            "minItems": 1,
            "maxItems": 50,
        },
        "rows": {
            "type": "array",
            "items": {"type": "array", "items": _CELL, "maxItems": 50},
            "maxItems": 2000,
        },
    },
    "required": ["columns", "rows"],
    "additionalProperties": False,
}

DIFF_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": _TITLE,
        "path": {"type": "string", "maxLength": 1000},
        "diff": {"type": "string", "maxLength": 200_000},
    },
    "required": ["diff"],
    "additionalProperties": False,
}

OPTIONS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": _TITLE,
        "question": {"type": "string", "minLength": 1, "maxLength": 2000},
        "choices": {
            "type": "array",
            "minItems": 1,
            "maxItems": 20,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "pattern": CHOICE_ID},
                    "label": {"type": "string", "minLength": 1, "maxLength": 200},
                    "description": {"type": "string", "maxLength": 1000},
                },
                "required": ["id", "label"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["question", "choices"],
    "additionalProperties": False,
}

MARKDOWN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"title": _TITLE, "text": {"type": "string", "maxLength": 100_000}},
    "required": ["text"],
    "additionalProperties": False,
}

CHART_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": _TITLE,
        "kind": {"enum": ["line", "bar"]},
        "labels": {
            "type": "array",
            "items": {"type": "string", "maxLength": 100},
            "minItems": 1,
            "maxItems": 500,
        },
        "series": {
            "type": "array",
            "minItems": 1,
            "maxItems": 10,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 100},
                    "points": {
                        "type": "array",
                        "items": {"type": ["number", "null"]},
                        "maxItems": 500,
                    },
                },
                "required": ["name", "points"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["kind", "labels", "series"],
    "additionalProperties": False,
}


def _check_table(props: dict[str, Any]) -> str | None:
    width = len(props["columns"])
    for index, row in enumerate(props["rows"]):
        if len(row) != width:
            return f"rows.{index}: has {len(row)} cells, the table has {width} columns"
    return None


def _check_options(props: dict[str, Any]) -> str | None:
    seen: set[str] = set()
    for index, choice in enumerate(props["choices"]):
        if choice["id"] in seen:
            return f"choices.{index}.id: {choice['id']!r} is used twice (ids are unique)"
        seen.add(choice["id"])
    return None


def _check_chart(props: dict[str, Any]) -> str | None:
    count = len(props["labels"])
    for index, series in enumerate(props["series"]):
        if len(series["points"]) != count:
            return (
                f"series.{index}.points: has {len(series['points'])} points,"
                f" the chart has {count} labels"
            )
    return None


def _heading(props: dict[str, Any]) -> list[str]:
    title = props.get("title")
    return [str(title)] if title else []


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    text = text.replace("\n", " ")
    return text if len(text) <= 40 else text[:39] + "…"


def render_table(props: dict[str, Any]) -> str:
    """Aligned columns under a header and a rule; long cells are cut at 40 characters."""
    columns = [_cell(c) for c in props["columns"]]
    rows = [[_cell(c) for c in row] for row in props["rows"]]
    widths = [
        max([len(c), *(len(r[i]) for r in rows if i < len(r))]) for i, c in enumerate(columns)
    ]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(cells)).rstrip()

    out = [*_heading(props), line(columns), "  ".join("─" * w for w in widths)]
    out += [line(row) for row in rows]
    if not rows:
        out.append("(no rows)")
    return "\n".join(out)


def render_diff(props: dict[str, Any]) -> str:
    """The diff as it is, under its path."""
    head = _heading(props) + ([f"--- {props['path']}"] if props.get("path") else [])
    return "\n".join([*head, props["diff"].rstrip("\n")])


def render_options(props: dict[str, Any]) -> str:
    """The question, then the choices numbered from 1 (with their ids)."""
    out = [*_heading(props), props["question"]]
    for number, choice in enumerate(props["choices"], start=1):
        line = f"  {number}. {choice['label']} [{choice['id']}]"
        if choice.get("description"):
            line += f" — {choice['description']}"
        out.append(line)
    return "\n".join(out)


def render_markdown(props: dict[str, Any]) -> str:
    """The Markdown source (a terminal reads it well as it is)."""
    return "\n".join([*_heading(props), props["text"].rstrip("\n")])


_SPARKS = "▁▂▃▄▅▆▇█"
_BAR_WIDTH = 30


def render_chart(props: dict[str, Any]) -> str:
    """A bar chart as rows of blocks, a line chart as one sparkline per series."""
    out = _heading(props)
    labels = [_cell(label) for label in props["labels"]]
    values = [p for s in props["series"] for p in s["points"] if p is not None]
    top = max((abs(v) for v in values), default=0) or 1
    if props["kind"] == "bar":
        width = max(len(label) for label in labels)
        for series in props["series"]:
            out.append(f"{series['name']}:")
            for label, point in zip(labels, series["points"], strict=False):
                bar = "" if point is None else "█" * round(abs(point) / top * _BAR_WIDTH)
                shown = "-" if point is None else f"{point:g}"
                out.append(f"  {label.ljust(width)} {bar} {shown}")
        return "\n".join(out)
    low = min(values, default=0)
    span = (max(values, default=0) - low) or 1
    for series in props["series"]:
        line = "".join(
            " " if p is None else _SPARKS[round((p - low) / span * (len(_SPARKS) - 1))]
            for p in series["points"]
        )
        out.append(f"{series['name']}: {line}  ({low:g}…{low + span:g})")
    out.append(f"  {labels[0]} … {labels[-1]}")
    return "\n".join(out)


BUILTIN_KINDS: tuple[ComponentKind, ...] = (
    ComponentKind("table", TABLE_SCHEMA, render_table, _check_table),
    ComponentKind("diff", DIFF_SCHEMA, render_diff),
    ComponentKind("options", OPTIONS_SCHEMA, render_options, _check_options),
    ComponentKind("markdown", MARKDOWN_SCHEMA, render_markdown),
    ComponentKind("chart", CHART_SCHEMA, render_chart, _check_chart),
)
"""Helix's own kinds, registered when ``helix.ui`` is imported."""

for _kind in BUILTIN_KINDS:
    _register(_kind, builtin=True)
