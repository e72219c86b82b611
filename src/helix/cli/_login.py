"""``helix login URL`` and ``helix status``: which server, and how it is doing."""

from __future__ import annotations

import getpass
import sys
from typing import Annotated

import typer

from helix.errors import ConfigError
from helix.kernel.log import EventStore

from ._client import ServerClient, ServerLogin, current_login, remotely, save_login
from ._common import fail, run, with_store


def login(
    url: Annotated[str, typer.Argument(metavar="URL", help="The server, e.g. http://host:8420.")],
    user: Annotated[str | None, typer.Option("--user", help="Username (else asked).")] = None,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from stdin.")
    ] = False,
    token_stdin: Annotated[
        bool, typer.Option("--token-stdin", help="Read an API token from stdin instead.")
    ] = False,
) -> None:
    """Sign in to a server; later commands talk to it (kept under HELIX_HOME)."""
    if not url.startswith(("http://", "https://")):
        fail(f"invalid server URL {url!r}: expected http://HOST:PORT or https://…")
    url = url.rstrip("/")

    def main() -> None:
        if token_stdin:
            token = sys.stdin.readline().strip()
            if not token:
                raise ConfigError("no token on stdin")
        else:
            name = user or input("username: ")
            secret = sys.stdin.readline().rstrip("\r\n") if password_stdin else getpass.getpass()
            anonymous = ServerClient(ServerLogin(url, None))
            answer = anonymous.call(
                "POST", "/auth/login", json={"username": name, "password": secret}
            )
            # Keep a long-lived API token, not the day-long access token.
            session = ServerClient(ServerLogin(url, str(answer["token"])))
            token = str(session.call("POST", "/auth/tokens")["token"])
        me = ServerClient(ServerLogin(url, token)).call("GET", "/me")
        path = save_login(ServerLogin(url, token))
        typer.echo(f"logged in to {url} as {me['user']} (saved in {path})")

    remotely(main)


def status() -> None:
    """Show the server's health and the active runs (or the embedded store's)."""
    from ._remote import Remote

    login_ = remotely(current_login)
    if login_ is not None:
        remotely(Remote(login_).status)
        return

    async def local(store: EventStore) -> None:
        from helix.config import Settings

        typer.echo(f"embedded   {Settings.from_env().db_url}  (no server: HELIX_SERVER unset)")
        page = await store.list_runs(limit=200)
        Remote.active(page.runs)

    run(lambda: with_store(local))
