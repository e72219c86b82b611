"""Helix as an MCP server: the tools and resources of ``TOOLS``, over ``helix.api``.

``build_mcp_server`` wires the official SDK's low-level ``Server`` to a ``HelixApi``
(whichever door: the local store, or a ``helix serve``). A call never crashes the
server: a Helix error, a refused call or bad arguments come back as a tool result with
``isError`` and ``{"error": {"code", "message"}}``; a resource that cannot be read is
an MCP error with the same code in its data.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from pydantic import ValidationError

from helix._version import __version__
from helix.api import HelixApi
from helix.errors import HelixError

from ._args import EVENTS_PAGE, schema_of
from ._reads import events_page
from ._tools import (
    TOOLS_BY_NAME,
    HelixTool,
    McpServePolicy,
    ToolRefused,
    approvals_refused,
    offered,
)

if TYPE_CHECKING:
    import mcp_types

    from mcp.server import Server

log = logging.getLogger("helix.mcp.server")

RUNS_URI = "helix://runs"
RESOURCE_RUNS = 20
"""How many of the newest runs ``resources/list`` names, each as its own resource."""


def build_mcp_server(api: HelixApi, policy: McpServePolicy, *, door: str = "") -> Server[Any]:
    """An MCP server exposing ``api``; ``door`` says where runs live (for its instructions)."""
    import mcp_types as types

    from mcp.server import Server

    tools = offered(policy)

    async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return types.ListToolsResult(tools=[_declaration(t) for t in tools])

    async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> Any:
        return await call(api, policy, params.name, params.arguments)

    async def list_resources(ctx: Any, params: Any) -> mcp_types.ListResourcesResult:
        listed = [
            types.Resource(
                uri=RUNS_URI, name="runs", title="Runs", mime_type="application/json",
                description="The newest runs, with their status (list_runs pages further).",
            )
        ]  # fmt: skip
        page = await api.runs(limit=RESOURCE_RUNS)
        listed += [
            types.Resource(
                uri=f"{RUNS_URI}/{run.id}", name=run.id, title=_short(run.objective),
                mime_type="application/json", description=f"{run.status} · {run.model}",
            )
            for run in page.runs
        ]  # fmt: skip
        return types.ListResourcesResult(resources=listed)

    async def list_templates(ctx: Any, params: Any) -> mcp_types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=_templates())

    async def read_resource(
        ctx: Any, params: mcp_types.ReadResourceRequestParams
    ) -> mcp_types.ReadResourceResult:
        uri = str(params.uri)
        body = await _read(api, uri)
        text = json.dumps(body, ensure_ascii=False)
        contents = [types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        return types.ReadResourceResult(contents=contents)

    def input_schema(name: str) -> dict[str, Any] | None:
        tool = TOOLS_BY_NAME.get(name)
        return schema_of(tool.args) if tool is not None and tool in tools else None

    return Server(
        "helix",
        version=__version__,
        title="Helix",
        instructions=_instructions(policy, door),
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


def _declaration(tool: HelixTool) -> mcp_types.Tool:
    import mcp_types as types

    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=schema_of(tool.args),
        annotations=types.ToolAnnotations(
            title=tool.title,
            read_only_hint=tool.read_only,
            destructive_hint=tool.destructive,
            idempotent_hint=tool.idempotent,
            open_world_hint=False,
        ),
    )


async def call(
    api: HelixApi, policy: McpServePolicy, name: str, arguments: dict[str, Any] | None
) -> mcp_types.CallToolResult:
    """Call one tool; every failure is an error result, never an exception."""
    tool = TOOLS_BY_NAME.get(name)
    try:
        if tool is None:
            raise ToolRefused("unknown_tool", f"no tool {name!r}: see tools/list")
        if tool.approvals and not policy.allow_approvals:
            raise approvals_refused()
        try:
            args = tool.args.model_validate(arguments or {})
        except ValidationError as error:
            raise ToolRefused("invalid_arguments", f"{name}: {_problems(error)}") from None
        answer = await tool.handler(api, args, policy)
    except ToolRefused as refused:
        return _error(refused.code, refused.message)
    except HelixError as error:
        return _error(error.code, str(error))
    except Exception as error:  # a bug or a lost connection: said, and the server goes on
        log.exception("tool %s failed", name)
        return _error("internal_error", f"{name} failed: {type(error).__name__}: {error}")
    return _result(answer)


def _result(answer: dict[str, Any]) -> mcp_types.CallToolResult:
    import mcp_types as types

    text = json.dumps(answer, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=answer)


def _error(code: str, message: str) -> mcp_types.CallToolResult:
    import mcp_types as types

    body = {"error": {"code": code, "message": message}}
    return types.CallToolResult(
        content=[types.TextContent(text=f"{code}: {message}")],
        structured_content=body,
        is_error=True,
    )


def _problems(error: ValidationError) -> str:
    """Pydantic's errors as one line: ``field: what is wrong; …``."""
    parts = []
    for problem in error.errors(include_url=False):
        where = ".".join(str(p) for p in problem["loc"]) or "arguments"
        parts.append(f"{where}: {problem['msg']}")
    return "; ".join(parts)


def _templates() -> list[mcp_types.ResourceTemplate]:
    import mcp_types as types

    return [
        types.ResourceTemplate(
            uri_template=f"{RUNS_URI}/{{run_id}}", name="run", title="Run status",
            mime_type="application/json",
            description="One run's status (an id, a unique prefix, or `last`).",
        ),
        types.ResourceTemplate(
            uri_template=f"{RUNS_URI}/{{run_id}}/events{{?after}}", name="run-events",
            title="Run events", mime_type="application/json",
            description=f"Up to {EVENTS_PAGE} of the run's events after seq `after`"
            " (default: from the first); `next_after` and `more` page on.",
        ),
        types.ResourceTemplate(
            uri_template=f"{RUNS_URI}/{{run_id}}/approvals", name="run-approvals",
            title="Pending approvals", mime_type="application/json",
            description="The calls the run waits on a person to allow or deny.",
        ),
    ]  # fmt: skip


async def _read(api: HelixApi, uri: str) -> dict[str, Any]:
    """The JSON a ``helix://`` URI names; an MCP error if it names nothing."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    parts = urlsplit(uri)
    words = [w for w in parts.path.split("/") if w]
    try:
        if parts.scheme != "helix" or parts.netloc != "runs" or len(words) > 2:
            raise ToolRefused("not_found", f"no resource {uri!r}: see resources/templates/list")
        if not words:
            return (await api.runs(limit=RESOURCE_RUNS)).model_dump(mode="json")
        run = await api.get(words[0])
        if len(words) == 1:
            return {"run": run.model_dump(mode="json")}
        if words[1] == "events":
            after = _after(parse_qs(parts.query).get("after", ["-1"])[-1], uri)
            return await events_page(api, run.id, after=after, limit=EVENTS_PAGE, wait_s=0)
        if words[1] == "approvals":
            pending = await api.approvals(run.id)
            return {"run_id": run.id, "approvals": [p.model_dump(mode="json") for p in pending]}
        raise ToolRefused("not_found", f"no resource {uri!r}: see resources/templates/list")
    except ToolRefused as refused:
        code, message = refused.code, refused.message
    except HelixError as error:
        code, message = error.code, str(error)
    raise MCPError(INVALID_PARAMS, message, data={"uri": uri, "code": code})


def _after(value: str, uri: str) -> int:
    try:
        after = int(value)
    except ValueError:
        raise ToolRefused("invalid_arguments", f"{uri}: after must be a seq (an integer)") from None
    if after < -1:
        raise ToolRefused("invalid_arguments", f"{uri}: after must be -1 or more")
    return after


def _short(text: str, width: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _instructions(policy: McpServePolicy, door: str) -> str:
    approvals = (
        "You may answer approvals with approve/deny and options cards with choose: each"
        " decision is logged as the person's, marked [mcp] where it has a reason."
        if policy.allow_approvals
        else "Approvals and choices are the person's: list them with pending_approvals and"
        " pending_choices and tell them (helix approve RUN, helix choose RUN, the"
        " dashboard); you cannot answer them here."
    )
    where = f" Runs live in {door}." if door else ""
    return (
        "Helix runs supervised agents: start_run starts one; follow it with run_events"
        " (after=next_after, wait_s to wait); steer, pause, resume, cancel or fork it;"
        " read its world with list_files, read_file and diff_run. Every consequential"
        f" call of a run passes Helix's gates. {approvals}{where}"
    )
