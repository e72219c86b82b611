"""``helix mcp serve``: Helix's runs as MCP tools and resources for other agents.

The door is chosen as for every command (``HELIX_SERVER`` / ``helix login``: that
server, which drives its runs; else the store here, whose runs this process drives
while it serves, leaving them resumable when it stops). Stdio by default; streamable
HTTP with ``--http PORT``, behind a bearer token. What clients may do beyond reading,
starting and steering runs is the person's choice, made here (docs/mcp-server.md).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlsplit

import typer

from ._common import EXIT_USAGE, fail, run

if TYPE_CHECKING:
    from helix.api import HelixApi
    from helix.mcp.server import McpServePolicy

mcp_app = typer.Typer(
    help="Serve Helix to MCP clients: start, follow and supervise runs from another agent.",
    no_args_is_help=True,
)

TOKEN_ENV = "HELIX_MCP_TOKEN"
MIN_TOKEN = 16
LOOPBACK = ("127.0.0.1", "::1", "localhost")


@mcp_app.command("serve")
def serve(
    http: Annotated[
        int | None,
        typer.Option(
            "--http",
            metavar="PORT",
            min=0,
            max=65535,
            help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (0: a free"
            " port; the URL is printed on stderr).",
        ),
    ] = None,
    host: Annotated[
        str | None,
        typer.Option(help="The address to listen on with --http (default: 127.0.0.1)."),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(
            help=f"A file holding the bearer token HTTP clients must send (default: ${TOKEN_ENV})."
        ),
    ] = None,
    no_auth: Annotated[
        bool,
        typer.Option("--no-auth", help="Serve HTTP without a token: on a loopback address only."),
    ] = False,
    allow_approvals: Annotated[
        bool,
        typer.Option(
            "--allow-approvals",
            help="Let clients approve and deny the calls runs ask about (default: only a"
            " person can, from the CLI, the dashboard or a phone link).",
        ),
    ] = False,
    allow_auto_approve: Annotated[
        bool,
        typer.Option(
            "--allow-auto-approve",
            help="Let clients start runs with auto_approve, whose asks are all allowed.",
        ),
    ] = False,
) -> None:
    """Serve Helix as MCP tools and resources (stdio, or streamable HTTP with --http)."""
    if importlib.util.find_spec("mcp") is None:
        fail("helix mcp serve needs the MCP SDK: pip install 'helix-harness[mcp]'")
    from helix.mcp.server import McpServePolicy

    if http is None and (host is not None or token_file is not None or no_auth):
        fail("--host, --token-file and --no-auth go with --http PORT", EXIT_USAGE)
    policy = McpServePolicy(allow_approvals=allow_approvals, allow_auto_approve=allow_auto_approve)
    if http is None:
        run(lambda: _serve(policy, None, "", None))
        return
    address = host or "127.0.0.1"
    token = _token(token_file, no_auth, address)
    run(lambda: _serve(policy, http, address, token))


def _token(token_file: Path | None, no_auth: bool, host: str) -> str | None:
    """The bearer token HTTP clients must send; ``None`` only with ``--no-auth`` on loopback."""
    if no_auth:
        if token_file is not None:
            fail("--no-auth and --token-file contradict each other", EXIT_USAGE)
        if host not in LOOPBACK:
            fail(f"--no-auth is refused on {host}: serve on 127.0.0.1, or give a token")
        return None
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            fail(f"--token-file {token_file}: cannot read it ({error})")
        source = f"--token-file {token_file}"
    else:
        token = os.environ.get(TOKEN_ENV, "").strip()
        source = TOKEN_ENV
        if not token:
            fail(
                f"serving HTTP needs a token: --token-file FILE or {TOKEN_ENV}"
                " (or --no-auth, on a loopback address only)"
            )
    if len(token) < MIN_TOKEN or any(c.isspace() for c in token):
        fail(f"{source}: the token must be at least {MIN_TOKEN} characters, without spaces")
    return token


async def _serve(policy: McpServePolicy, port: int | None, host: str, token: str | None) -> None:
    """Open the door, say where it leads, serve until the client or a signal ends it."""
    from helix.api import HttpApi, current_login

    login = current_login()
    if login is not None:
        remote = HttpApi(login.url, token=login.token)
        try:
            await remote.runs(limit=1)  # unreachable or refused: said now, not per call
            await _serve_on(remote, policy, port, host, token, f"server {login.url}")
        finally:
            await remote.aclose()
        return
    from helix.api import LocalApi
    from helix.config import Settings
    from helix.kernel.log import open_store

    from ._common import who
    from ._live import engine_for

    settings = Settings.from_env()
    store = await open_store(settings.db_url, durability=settings.durability)
    try:
        local = LocalApi(lambda: engine_for(store), store=store, home=settings.home, actor=who())
        async with local:  # its supervisor drives the runs it starts, while we serve
            door = f"embedded store {_where(settings.db_url)} (runs driven here)"
            await _serve_on(local, policy, port, host, token, door)
    finally:
        await store.close()


async def _serve_on(
    api: HelixApi, policy: McpServePolicy, port: int | None, host: str, token: str | None,
    door: str,
) -> None:  # fmt: skip
    from helix.mcp.server import bind, build_mcp_server, serve_http, serve_stdio, url_of

    server = build_mcp_server(api, policy, door=door)
    approvals = "on" if policy.allow_approvals else "off (a person answers them)"
    if port is None:
        _banner(f"serving on stdio · runs: {door} · approvals via MCP: {approvals}")
        await serve_stdio(server)
        return
    try:
        sock = bind(host, port)
    except OSError as error:
        fail(f"cannot listen on {host}:{port}: {error.strerror}; choose another --http port")
    auth = "bearer token" if token is not None else "NO AUTH"
    _banner(f"serving on {url_of(sock)} ({auth}) · runs: {door} · approvals via MCP: {approvals}")
    try:
        await serve_http(server, sock, token=token)
    finally:
        sock.close()


def _banner(text: str) -> None:
    typer.echo(f"helix mcp: {text}", err=True)


def _where(db_url: str) -> str:
    """The store, named without any credentials its URL holds."""
    parts = urlsplit(db_url)
    if parts.scheme.startswith("sqlite"):
        return db_url.split(":///", 1)[-1]
    host = parts.hostname or "localhost"
    return f"{parts.scheme}://{host}{parts.path}"
