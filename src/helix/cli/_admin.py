"""``helix users|tokens|workspaces``: accounts, on the store ``HELIX_DB`` names, directly.

For bootstrapping and scripts: they work whether or not a server is running.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from helix.config import Settings

from ._common import EXIT_NOT_FOUND, fail, run

if TYPE_CHECKING:
    from helix.accounts import Accounts

T = TypeVar("T")

users_app = typer.Typer(help="Manage users.", no_args_is_help=True)
tokens_app = typer.Typer(help="Manage API tokens.", no_args_is_help=True)
workspaces_app = typer.Typer(help="Manage workspaces.", no_args_is_help=True)


async def _with_accounts(use: Callable[[Accounts], Awaitable[T]]) -> T:
    from helix.accounts import Accounts, open_accounts

    store = await open_accounts(Settings.from_env().db_url)
    try:
        return await use(Accounts(store))
    finally:
        await store.close()


@users_app.command("add")
def add_user(
    name: Annotated[str, typer.Argument(metavar="NAME")],
    workspace: Annotated[
        str | None, typer.Option(help="Also make them a member of this workspace.")
    ] = None,
    role: Annotated[str, typer.Option(help="owner, admin, member or viewer.")] = "member",
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read a password from stdin.")
    ] = False,
) -> None:
    """Add a user (with a personal workspace); no password means tokens only."""
    password = _password_from_stdin() if password_stdin else None

    async def main(accounts: Accounts) -> None:
        await accounts.add_user(name, password=password, workspace=workspace, role=role)
        typer.echo(f"added user {name}" + (f" ({role} of {workspace})" if workspace else ""))

    run(lambda: _with_accounts(main))


@users_app.command("remove")
def remove_user(name: Annotated[str, typer.Argument(metavar="NAME")]) -> None:
    """Remove a user: their tokens and sessions stop working at once; runs stay."""

    async def main(accounts: Accounts) -> None:
        await accounts.store.remove_user(name)
        typer.echo(f"removed user {name} (their workspaces and runs stay)")

    run(lambda: _with_accounts(main))


@users_app.command("passwd")
def set_password(
    name: Annotated[str, typer.Argument(metavar="NAME")],
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the new password from stdin.")
    ] = False,
    remove: Annotated[
        bool, typer.Option("--remove", help="Remove the password: only tokens will work.")
    ] = False,
) -> None:
    """Change a user's password; every session signed in with the old one ends."""
    if password_stdin == remove:
        fail("give exactly one of --password-stdin and --remove")
    password = None if remove else _password_from_stdin()

    async def main(accounts: Accounts) -> None:
        await accounts.set_password(name, password)
        typer.echo(f"{'removed the' if remove else 'changed the'} password of {name}")

    run(lambda: _with_accounts(main))


def _password_from_stdin() -> str:
    password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        fail("no password on stdin")
    return password


@tokens_app.command("create")
def create_token(
    user: Annotated[str, typer.Option("--user", help="Whose token it is.")],
) -> None:
    """Create a long-lived API token; prints the token on stdout and nothing else."""

    async def main(accounts: Accounts) -> None:
        typer.echo(await accounts.create_api_token(user))

    run(lambda: _with_accounts(main))


@tokens_app.command("revoke")
def revoke_tokens(
    user: Annotated[
        str | None, typer.Option("--user", help="Revoke every API token of this user.")
    ] = None,
) -> None:
    """Revoke the API token read from stdin (or, with --user, all of a user's), at once.

    The token is read from stdin so that it never lands in a shell's history.
    """
    token = None if user is not None else sys.stdin.readline().strip()
    if user is None and not token:
        fail("no token on stdin (or give --user NAME)")

    async def main(accounts: Accounts) -> None:
        if user is not None:
            count = await accounts.revoke_api_tokens(user)
            typer.echo(f"revoked {count} API token{'' if count == 1 else 's'} of {user}")
            return
        assert token is not None
        owner = await accounts.revoke_api_token(token)
        if owner is None:
            fail("no such API token (revoked already, or never issued here)", EXIT_NOT_FOUND)
        typer.echo(f"revoked an API token of {owner}")

    run(lambda: _with_accounts(main))


@workspaces_app.command("add")
def add_workspace(
    name: Annotated[str, typer.Argument(metavar="NAME")],
    owner: Annotated[str | None, typer.Option(help="A user to make its owner.")] = None,
) -> None:
    """Add a team workspace."""

    async def main(accounts: Accounts) -> None:
        await accounts.add_workspace(name, owner=owner)
        typer.echo(f"added workspace {name}")

    run(lambda: _with_accounts(main))
