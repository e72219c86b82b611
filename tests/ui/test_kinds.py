"""helix.ui: the kinds' schemas, validation errors, bounds, plugin kinds, text forms."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from helix.errors import InvalidComponentError
from helix.ui import (
    BUILTIN_KINDS,
    MAX_PROPS_BYTES,
    MAX_PROPS_DEPTH,
    ComponentKind,
    component_kinds,
    register_component,
    render_text,
    unregister_component,
    validate_component,
)

GOOD: dict[str, dict[str, Any]] = {
    "table": {"columns": ["a", "b"], "rows": [[1, "x"], [None, True]]},
    "diff": {"path": "src/a.py", "diff": "@@ -1 +1 @@\n-a\n+b\n"},
    "options": {
        "question": "Go?",
        "choices": [{"id": "yes", "label": "Yes"}, {"id": "no", "label": "No"}],
    },
    "markdown": {"text": "**bold**"},
    "chart": {
        "kind": "line",
        "labels": ["1", "2", "3"],
        "series": [{"name": "s", "points": [1, None, 3]}],
    },
}
GAUGE = ComponentKind(
    "acme.gauge",
    {"type": "object", "properties": {"value": {"type": "number"}}, "required": ["value"]},
    lambda props: f"gauge at {props['value']}",
)


@pytest.fixture
def gauge() -> Iterator[ComponentKind]:
    register_component(GAUGE)
    try:
        yield GAUGE
    finally:
        unregister_component(GAUGE.name)


def test_helix_kinds_are_registered_and_accept_good_props() -> None:
    from jsonschema import Draft202012Validator

    assert list(component_kinds())[:5] == ["table", "diff", "options", "markdown", "chart"]
    for kind in BUILTIN_KINDS:  # not checked when registered (that would load jsonschema)
        Draft202012Validator.check_schema(kind.schema)
        assert kind.schema["type"] == "object"
    for name, props in GOOD.items():
        assert validate_component(name, props) is props


def test_importing_helix_ui_loads_no_schema_library() -> None:
    import subprocess
    import sys

    code = "import sys, helix.ui; print('jsonschema' in sys.modules)"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("name", "props", "message"),
    [
        ("table", {"columns": ["a"]}, "component 'table': props: 'rows' is a required property"),
        (
            "table",
            {"columns": ["a"], "rows": [[{"x": 1}]]},
            "component 'table': rows.0.0: {'x': 1} is not of type",
        ),
        (
            "table",
            {"columns": ["a"], "rows": [[1, 2]]},
            "component 'table': rows.0: has 2 cells, the table has 1 columns",
        ),
        ("diff", {"diff": 3}, "component 'diff': diff: 3 is not of type 'string'"),
        (
            "options",
            {"question": "q", "choices": []},
            "component 'options': choices: [] should be non-empty",
        ),
        (
            "options",
            {"question": "q", "choices": [{"id": "a b", "label": "x"}]},
            "component 'options': choices.0.id: 'a b' does not match",
        ),
        (
            "markdown",
            {"text": "x", "html": "<b>"},
            "component 'markdown': props: Additional properties are not allowed",
        ),
        (
            "chart",
            {"kind": "pie", "labels": ["a"], "series": [{"name": "s", "points": [1]}]},
            "component 'chart': kind: 'pie' is not one of",
        ),
        (
            "chart",
            {"kind": "bar", "labels": ["a"], "series": [{"name": "s", "points": [1, 2]}]},
            "component 'chart': series.0.points: has 2 points, the chart has 1 labels",
        ),
        (
            "nope",
            {},
            "unknown component 'nope': known components are table, diff, options, markdown, chart",
        ),
        ("table", [1], "component 'table': props must be an object, not list"),
    ],
)
def test_errors_name_the_component_and_the_field(name: str, props: Any, message: str) -> None:
    with pytest.raises(InvalidComponentError) as caught:
        validate_component(name, props)
    assert str(caught.value).startswith(message)


def test_hostile_props_are_bounded_before_the_schema_sees_them() -> None:
    deep: dict[str, Any] = {"text": "x"}
    node = deep
    for _ in range(100_000):  # deeper than Python's recursion limit
        node["n"] = {}
        node = node["n"]
    with pytest.raises(InvalidComponentError, match=f"nest deeper than {MAX_PROPS_DEPTH} levels"):
        validate_component("markdown", deep)
    huge = {"text": "x" * MAX_PROPS_BYTES}
    with pytest.raises(InvalidComponentError, match=f"at most {MAX_PROPS_BYTES}"):
        validate_component("markdown", huge)
    with pytest.raises(InvalidComponentError, match=r"NaN and infinity"):
        validate_component(
            "chart", {**GOOD["chart"], "series": [{"name": "s", "points": [float("nan")] * 3}]}
        )
    with pytest.raises(InvalidComponentError, match=r"must be JSON"):
        validate_component("markdown", {"text": object()})
    long = {"columns": ["a"], "rows": [["y" * 5000, 2]]}
    with pytest.raises(InvalidComponentError) as caught:
        validate_component("table", long)
    assert len(str(caught.value)) < 300  # a hostile value cannot flood the message


def test_a_plugin_kind_is_validated_and_rendered(gauge: ComponentKind) -> None:
    assert component_kinds()["acme.gauge"] is gauge
    assert validate_component("acme.gauge", {"value": 3}) == {"value": 3}
    with pytest.raises(
        InvalidComponentError, match=r"component 'acme.gauge': value: 'x' is not of type 'number'"
    ):
        validate_component("acme.gauge", {"value": "x"})
    assert render_text("acme.gauge", {"value": 3}) == "gauge at 3"


def test_plugin_kinds_are_namespaced_unique_and_object_schemas(gauge: ComponentKind) -> None:
    with pytest.raises(InvalidComponentError, match=r"'acme.gauge' is already registered"):
        register_component(gauge)
    with pytest.raises(InvalidComponentError, match=r"a plugin's kind is named PACKAGE.KIND"):
        register_component(ComponentKind("gauge", {"type": "object"}))
    with pytest.raises(InvalidComponentError, match=r"a plugin's kind is named PACKAGE.KIND"):
        register_component(ComponentKind("table", {"type": "object"}))
    with pytest.raises(
        InvalidComponentError, match=r'must be a JSON Schema object with "type": "object"'
    ):
        register_component(ComponentKind("acme.list", {"type": "array"}))
    with pytest.raises(InvalidComponentError, match=r"must be a JSON Schema object"):
        register_component(ComponentKind("acme.list", [1]))  # type: ignore[arg-type]
    bad = {"type": "object", "properties": {"v": {"type": "nonsense"}}}
    with pytest.raises(InvalidComponentError, match=r"acme.bad'.*not valid at properties.v.type"):
        register_component(ComponentKind("acme.bad", bad))
    with pytest.raises(InvalidComponentError, match=r"is Helix's own"):
        unregister_component("table")
    with pytest.raises(InvalidComponentError, match=r"no component kind 'acme.none'"):
        unregister_component("acme.none")
    assert "acme.list" not in component_kinds()
    assert "acme.bad" not in component_kinds()


def test_text_forms() -> None:
    assert render_text("table", {"title": "T", **GOOD["table"]}) == (
        "T\na  b\n─  ────\n1  x\n   True"
    )
    assert render_text(
        "options",
        {
            **GOOD["options"],
            "choices": [
                {"id": "yes", "label": "Yes", "description": "go on"},
                {"id": "no", "label": "No"},
            ],
        },
    ) == ("Go?\n  1. Yes [yes] — go on\n  2. No [no]")
    assert render_text("diff", GOOD["diff"]) == "--- src/a.py\n@@ -1 +1 @@\n-a\n+b"
    assert render_text("markdown", GOOD["markdown"]) == "**bold**"
    assert render_text("chart", GOOD["chart"]) == "s: ▁ █  (1…3)\n  1 … 3"
    bars = render_text(
        "chart", {"kind": "bar", "labels": ["a", "b"], "series": [{"name": "n", "points": [1, 2]}]}
    )
    assert bars.splitlines() == ["n:", "  a " + "█" * 15 + " 1", "  b " + "█" * 30 + " 2"]


def test_unknown_or_failing_renderers_fall_back_to_json() -> None:
    assert render_text("other.kind", {"a": 1}) == '[other.kind]\n{\n  "a": 1\n}'
    broken = ComponentKind("acme.broken", {"type": "object"}, lambda props: 1 / 0)  # type: ignore[arg-type,return-value]
    register_component(broken)
    try:
        assert render_text("acme.broken", {"b": 2}).startswith("[acme.broken]\n")
    finally:
        unregister_component("acme.broken")
