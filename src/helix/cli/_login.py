"""``helix login URL`` and ``helix status``: which server, and how it is doing.

What they ask a server (sign in, mint a token, who am I, health) is about the server,
not about runs, so it is plain HTTP here; where the login is kept is ``helix.api``'s
(``Client.from_env()`` reads it too).
"""

from __future__ import annotations

import getpass
import sys
from typing import Annotated, Any

import typer

from helix.config import Settings
from helix.errors import ConfigError, StoreUnavailableError

from ._common import fail, run, run_now
from ._door import Door, with_door
from ._runs import newest, print_active


def _call(url: str, token: str | None, method: str, path: str, **kwargs: Any) -> Any:
    """One request to the server's API; its JSON, or the Helix error its answer stands for."""
    import httpx

    from helix.api import error_of

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        answer = httpx.request(method, f"{url}/api/v1{path}", headers=headers, timeout=30.0,
                               **kwargs)  # fmt: skip
    except httpx.TransportError as error:
        raise StoreUnavailableError(f"cannot reach the server at {url}: {error}") from None
    if answer.status_code >= 400:
        raise error_of(answer.status_code, answer.content)
    return answer.json()


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
    from helix.api import ServerLogin, save_login

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
            body = {"username": name, "password": secret}
            session = str(_call(url, None, "POST", "/auth/login", json=body)["token"])
            # Keep a long-lived API token, not the day-long access token.
            token = str(_call(url, session, "POST", "/auth/tokens")["token"])
        me = _call(url, token, "GET", "/me")
        path = save_login(ServerLogin(url, token))
        typer.echo(f"logged in to {url} as {me['user']} (saved in {path})")

    run_now(main)


def status() -> None:
    """Show the server's health and the active runs (or the embedded store's)."""
    from helix.api import current_login

    where = run_now(current_login)

    async def main(door: Door) -> None:
        if where is None:
            typer.echo(f"embedded   {Settings.from_env().db_url}  (no server: HELIX_SERVER unset)")
        else:
            health = _call(where.url, where.token, "GET", "/health")
            me = _call(where.url, where.token, "GET", "/me")
            roles = ", ".join(f"{w}: {r}" for w, r in me["workspaces"].items())
            typer.echo(f"server     {where.url}  ({health['status']}, helix {health['version']})")
            typer.echo(f"user       {me['user']}  ({roles})")
        print_active(await newest(door, None, 200))

    run(lambda: with_door(main))
