"""A server's tool list is hostile: names made safe, schemas bounded, hints read as facets."""

from __future__ import annotations

import re
from typing import Any

import mcp_types as types
import pytest
from pydantic import ValidationError

from helix.errors import BlueprintError, ConfigError, InvalidToolArgumentsError
from helix.mcp.client import McpServerSpec, McpSource, require_sdk, run_name
from helix.mcp.client._tools import MAX_SCHEMA_DEPTH, facets_of, result_text, tool_def
from helix.runtime import Blueprint
from helix.tools import ToolContext, ToolResult

PROVIDER_SAFE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
SPEC = McpServerSpec(name="srv", command="server")


async def never(tool: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raise AssertionError("not called")


def remote(name: str = "t", schema: Any = None, **annotations: Any) -> types.Tool:
    return types.Tool(
        name=name,
        input_schema={"type": "object"} if schema is None else schema,
        annotations=types.ToolAnnotations(**annotations) if annotations else None,
    )


@pytest.mark.parametrize("tool", ["get_time", "a.b/c d", "x" * 300, "ünïcødé", "", "a__b", "-"])
def test_every_name_is_provider_safe_and_distinct(tool: str) -> None:
    name = run_name("srv", tool)
    assert PROVIDER_SAFE.match(name), name
    assert name.startswith("srv__")
    if tool == "get_time":
        assert name == "srv__get_time"
    assert run_name("srv", tool.replace(".", "_")) != name or "." not in tool


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ([], "not a JSON object"),
        ({"type": "string"}, "does not describe an object"),
        (
            {"type": "object", "properties": {"a": {"$ref": "https://evil.test/x"}}},
            "refers outside",
        ),
        ({"type": "object", "description": "x" * 70_000}, "bytes (at most"),
        ({"type": "object", "properties": {"a": {"type": 7}}}, "invalid"),
    ],
)
def test_a_hostile_schema_refuses_the_tool(schema: Any, problem: str) -> None:
    made = tool_def(SPEC, remote(schema={"type": "object"}), never)
    assert not isinstance(made, str)
    refused = tool_def(SPEC, remote(schema={"type": "object"}).model_copy(
        update={"input_schema": schema}), never)  # fmt: skip
    assert isinstance(refused, str)
    assert problem in refused


def test_a_deep_schema_is_refused() -> None:
    node: dict[str, Any] = {"type": "object"}
    for _ in range(MAX_SCHEMA_DEPTH):
        node = {"type": "object", "properties": {"a": node}}
    refused = tool_def(SPEC, remote(schema=node), never)
    assert isinstance(refused, str)
    assert "nested deeper" in refused


def test_a_local_ref_is_kept_and_arguments_are_validated() -> None:
    schema = {
        "type": "object",
        "$defs": {"n": {"type": "integer", "minimum": 1}},
        "properties": {"count": {"$ref": "#/$defs/n"}},
        "required": ["count"],
        "additionalProperties": False,
    }
    made = tool_def(SPEC, remote(schema=schema), never)
    assert not isinstance(made, str)
    assert made.parameters == schema
    made.validate({"count": 2})
    with pytest.raises(InvalidToolArgumentsError, match="count: 0 is less than the minimum"):
        made.validate({"count": 0})
    with pytest.raises(InvalidToolArgumentsError, match="Additional properties"):
        made.validate({"count": 1, "more": 1})


def test_facets_follow_the_hints_and_the_operator_wins() -> None:
    hinted = types.ToolAnnotations(read_only_hint=True, idempotent_hint=True)
    facets, idempotent = facets_of(SPEC, "t", hinted)
    assert (facets.read_only, facets.effect, idempotent) == (True, "none", True)
    facets, idempotent = facets_of(SPEC, "t", types.ToolAnnotations(destructive_hint=True))
    assert (facets.read_only, facets.effect, idempotent) == (False, "external", False)
    facets, _ = facets_of(SPEC, "t", None)  # no hints: not known to be read-only
    assert facets.effect == "external"
    assert facets.sandboxed  # a stdio server's tools run in the sandbox
    operator = McpServerSpec(
        name="srv",
        url="http://x.test/mcp",
        overrides={"t": {"effect": "external"}, "r*": {"read_only": True, "idempotent": True}},
    )
    facets, _ = facets_of(operator, "t", hinted)
    assert (facets.read_only, facets.effect) == (False, "external")
    facets, idempotent = facets_of(operator, "read", types.ToolAnnotations(destructive_hint=True))
    assert (facets.read_only, facets.effect, idempotent) == (True, "none", True)
    assert not facets.sandboxed


def test_results_are_text_with_the_rest_summarised() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="hello"),
            types.ImageContent(type="image", data="aGVsbG8h", mime_type="image/png"),
            types.ResourceLink(type="resource_link", name="f", uri="file:///f.txt"),
        ]
    )
    assert (
        result_text(result, 1000) == "hello\n[image image/png, 6 bytes]\n[resource file:///f.txt]"
    )
    structured = types.CallToolResult(content=[], structured_content={"a": 1})
    assert result_text(structured, 1000) == '{"a": 1}'
    long = types.CallToolResult(content=[types.TextContent(type="text", text="x" * 50)])
    assert result_text(long, 10) == "x" * 10 + "\n[output truncated: 40 more characters]"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"name": "a"}, "either command (stdio) or url (http)"),
        ({"name": "a", "command": "x", "url": "http://x"}, "either command"),
        ({"name": "a__b", "command": "x"}, "name"),
        ({"name": "a", "url": "http://x", "env": {"A": "B"}}, "are for stdio servers"),
        ({"name": "a", "command": "x", "headers": {"A": "B"}}, "headers are for http"),
        ({"name": "a", "command": "x", "env": {"A": "not a name"}}, "env maps"),
        ({"name": "a", "command": "x", "cwd": "../up"}, "cwd is a folder inside the world"),
        ({"name": "a", "command": "x", "surprise": 1}, "surprise"),
        ({"name": "a", "command": "x", "mounts": ["/"]}, "a mount is an absolute host folder"),
        ({"name": "a", "command": "x", "mounts": ["opt/x"]}, "a mount is an absolute host"),
        ({"name": "a", "command": "x", "mounts": ["/opt/../root"]}, "a mount is an absolute"),
    ],
)
def test_bad_server_declarations_are_refused_with_the_reason(
    entry: dict[str, Any], problem: str
) -> None:
    with pytest.raises(BlueprintError, match=re.escape(problem)):
        Blueprint.parse({"mcp": [entry]}, source="bp.yaml")


def test_server_names_are_unique_in_a_blueprint() -> None:
    with pytest.raises(BlueprintError, match="two MCP servers are named a"):
        Blueprint.parse({"mcp": [{"name": "a", "command": "x"}] * 2}, source="bp.yaml")
    with pytest.raises(ValidationError):
        McpServerSpec(name="", command="x")


def test_the_allowlist_and_denylist_take_globs() -> None:
    spec = McpServerSpec(name="s", command="x", tools=("get_*", "list"), deny=("get_secret",))
    assert [t for t in ("get_a", "get_secret", "list", "put") if spec.offers(t)] == [
        "get_a",
        "list",
    ]


def test_without_the_sdk_a_server_is_a_config_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a)
    )
    with pytest.raises(ConfigError, match=re.escape("pip install 'helix-harness[mcp]'")):
        require_sdk()
    with pytest.raises(ConfigError, match="mcp SDK is not installed"):
        McpSource(SPEC)


def test_creating_a_run_with_servers_and_no_sdk_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    from helix.tools import builtin_registry

    blueprint = Blueprint.parse({"mcp": [{"name": "a", "command": "x"}]}, source="bp.yaml")
    blueprint.check(builtin_registry())
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a)
    )
    with pytest.raises(ConfigError, match=re.escape("helix-harness[mcp]")):
        blueprint.check(builtin_registry())
