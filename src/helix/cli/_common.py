"""What every command shares: exit codes, opening the store, printing."""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from helix.config import Settings
from helix.errors import (
    AmbiguousRunError,
    ConfigError,
    ConflictError,
    HelixError,
    InvalidChoiceError,
    NotFoundError,
    StoreUnavailableError,
)

if TYPE_CHECKING:
    from helix.kernel.log import EventStore

T = TypeVar("T")

EXIT_OK = 0
EXIT_FAILED = 1
"""A run failed or was denied, or the request was refused (e.g. a conflict)."""
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_UNREACHABLE = 4
"""The server, or the store's database, cannot be reached or opened."""


def exit_code_for(error: HelixError) -> int:
    """Map an error to the contract's exit codes."""
    if isinstance(error, NotFoundError):
        return EXIT_NOT_FOUND
    if isinstance(error, StoreUnavailableError):
        return EXIT_UNREACHABLE
    if isinstance(error, ConfigError | AmbiguousRunError | InvalidChoiceError):
        return EXIT_USAGE
    if isinstance(error, ConflictError):
        return EXIT_FAILED
    return EXIT_FAILED


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``error: message`` to stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def run(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a command's coroutine, turning Helix errors into a message and exit code."""
    import asyncio

    try:
        return asyncio.run(main())
    except HelixError as error:
        fail(str(error), exit_code_for(error))
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        raise typer.Exit(130) from None


def run_now(action: Callable[[], T]) -> T:
    """Do something that may raise a Helix error, turning it into a message and exit code."""
    try:
        return action()
    except HelixError as error:
        fail(str(error), exit_code_for(error))
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        raise typer.Exit(130) from None


async def with_store(use: Callable[[EventStore], Awaitable[T]]) -> T:
    """Open the store the environment names, use it, close it."""
    from helix.kernel.log import open_store

    settings = Settings.from_env()
    store = await open_store(settings.db_url, durability=settings.durability)
    try:
        return await use(store)
    finally:
        await store.close()


def print_json_line(obj: Any) -> None:
    """Print one JSON object on one line."""
    from pydantic_core import to_json

    sys.stdout.write(to_json(obj).decode() + "\n")


def who() -> str:
    """The person at this terminal, as an actor: ``user:<name>``."""
    name = os.environ.get("HELIX_USER") or getpass.getuser() or "local"
    return f"user:{name}"
