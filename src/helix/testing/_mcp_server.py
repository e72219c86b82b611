"""A small MCP server for tests and benchmarks, written with the official ``mcp`` SDK.

Run it as ``python -m helix.testing._mcp_server stdio`` (or ``MCP_TEST_SERVER_ARGV``),
or over streamable HTTP as ``… http`` (it binds a free port on 127.0.0.1 and prints
``listening on PORT`` once it answers). Its tools cover what an MCP client must
handle:

* ``echo(text)``: read-only, idempotent; returns ``text``.
* ``inspect(probe)``: read-only; what the server sees (its working folder, the top of
  its filesystem, its environment's variable names, whether ``HELIX_TEST_SECRET`` is
  set, whether the path ``probe`` exists).
* ``headers()``: read-only; the names of the HTTP headers of the call (HTTP only).
* ``fetch(url)``: a GET through the proxy its environment names; the status.
* ``delete_item(name)``: destructive; writes ``deleted-NAME`` in its working folder.
* ``grow()``: adds the tool ``late`` and tells the client its tools changed.
* ``confirm(question)``: asks the person (elicitation) and returns the answer.
* ``summarise(text)``: asks the client's model (sampling) and returns its reply.
* ``roots()``: the client's roots.
* ``crash(code)``: the server exits at once with ``code``.
* ``odd(text)``: listed with an input schema that refers to a remote schema.

The module imports the SDK only when run, so importing ``helix.testing`` stays light.
"""

import json
import os
import socket
import sys
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

MODULE = "helix.testing._mcp_server"


def mcp_test_server_argv(transport: str = "stdio") -> list[str]:
    """The command line that runs this server (``stdio`` or ``http``) with this Python."""
    return [sys.executable, "-m", MODULE, transport]


def _build() -> Any:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool

    def odd(text: str) -> str:
        """A tool whose input schema refers outside itself (a client must refuse it)."""
        return text

    remote = {"type": "object", "properties": {"text": {"$ref": "https://schemas.test/x"}}}
    hostile = Tool.from_function(odd).model_copy(update={"parameters": remote})
    server = MCPServer("helix-test", version="1.0", tools=[hostile])
    _host_tools(server)
    _client_tools(server)
    return server


_READ_ONLY = {"read_only_hint": True, "idempotent_hint": True, "open_world_hint": False}


def _host_tools(server: "MCPServer") -> None:
    """Tools that use only the server's own host: echo, inspect, fetch, delete, crash."""
    from mcp.server.mcpserver import Context
    from mcp_types import ToolAnnotations

    read_only = ToolAnnotations(**_READ_ONLY)

    @server.tool(annotations=read_only)
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool(annotations=read_only)
    def inspect(probe: str = "") -> str:
        """What the server sees of its host (and whether the path ``probe`` exists)."""
        return json.dumps(
            {
                "probe": os.path.exists(probe) if probe else None,
                "cwd": os.getcwd(),
                "root": sorted(os.listdir("/")),
                "env": sorted(os.environ),
                "secret_set": bool(os.environ.get("HELIX_TEST_SECRET")),
            }
        )

    @server.tool(annotations=read_only)
    def headers(ctx: Context) -> str:
        """The names of the HTTP headers of this call."""
        return json.dumps(sorted(k.lower() for k in (ctx.headers or {})))

    @server.tool(annotations=read_only)
    def fetch(url: str) -> str:
        """GET ``url`` through the proxy the environment names; its status or the error."""
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                return str(response.status)
        except urllib.error.HTTPError as error:
            return str(error.code)
        except OSError as error:
            return f"error: {error}"

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def delete_item(name: str) -> str:
        """Delete an item (writes a marker file in the working folder)."""
        with open(f"deleted-{name}", "w") as marker:
            marker.write(name)
        return f"deleted {name}"

    @server.tool()
    def crash(code: int = 3) -> str:
        """Exit the server at once."""
        os._exit(code)


def _client_tools(server: "MCPServer") -> None:
    """Tools that ask the client: list_changed, elicitation, sampling, roots."""
    from mcp.server.mcpserver import Context
    from mcp_types import SamplingMessage, TextContent, ToolAnnotations
    from pydantic import BaseModel

    read_only = ToolAnnotations(**_READ_ONLY)

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add the tool ``late`` and announce the change."""

        def late() -> str:
            """A tool that appeared later."""
            return "late"

        server.add_tool(late, annotations=read_only)
        await ctx.session.send_tool_list_changed()
        return "grown"

    class Answer(BaseModel):
        ok: bool

    @server.tool()
    async def confirm(question: str, ctx: Context) -> str:
        """Ask the person a yes/no question."""
        result = await ctx.elicit(question, Answer)
        data = result.data.model_dump() if result.action == "accept" else None
        return json.dumps({"action": result.action, "data": data})

    @server.tool()
    async def summarise(text: str, ctx: Context) -> str:
        """Have the client's model summarise the text."""
        reply = await ctx.session.create_message(
            [SamplingMessage(role="user", content=TextContent(type="text", text=text))],
            max_tokens=64,
            system_prompt="Summarise.",
        )
        content = reply.content
        return f"{reply.model}: {getattr(content, 'text', content)}"

    @server.tool(annotations=read_only)
    async def roots(ctx: Context) -> str:
        """The client's roots."""
        listed = await ctx.session.list_roots()
        return json.dumps([str(r.uri) for r in listed.roots])


def _serve_http(server: Any) -> None:
    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    web = uvicorn.Server(config)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(web.serve, [sock])
            while not web.started:  # uvicorn has no event to wait on  # noqa: ASYNC110
                await anyio.sleep(0.01)
            print(f"listening on {port}", flush=True)

    anyio.run(main)


def main(argv: list[str]) -> None:
    """Run the server over ``stdio`` (default) or ``http``."""
    warnings.simplefilter("ignore")  # the SDK warns that sampling and roots are deprecated
    server = _build()
    if argv[:1] == ["http"]:
        _serve_http(server)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
