"""``helix users|tokens|workspaces``: accounts, on the store ``HELIX_DB`` names, directly.

For bootstrapping and scripts: they work whether or not a server is running.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from helix.config import Settings

from ._common import fail, run

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
    password = None
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            fail("no password on stdin")

    async def main(accounts: Accounts) -> None:
        await accounts.add_user(name, password=password, workspace=workspace, role=role)
        typer.echo(f"added user {name}" + (f" ({role} of {workspace})" if workspace else ""))

    run(lambda: _with_accounts(main))


@tokens_app.command("create")
def create_token(
    user: Annotated[str, typer.Option("--user", help="Whose token it is.")],
) -> None:
    """Create a long-lived API token; prints the token on stdout and nothing else."""

    async def main(accounts: Accounts) -> None:
        typer.echo(await accounts.create_api_token(user))

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
