"""``helix approve|deny|steer|pause|cancel``: run control, from any terminal.

Each is an append to the run's log; the process driving the run (this one or another)
acts on it within a fraction of a second.
"""

from __future__ import annotations

import getpass
import os
from typing import Annotated

import typer

from helix.kernel.log import EventStore

from ._client import remotely
from ._common import run, with_store
from ._remote import connected


def who() -> str:
    """The person at this terminal, as an actor: ``user:<name>``."""
    name = os.environ.get("HELIX_USER") or getpass.getuser() or "local"
    return f"user:{name}"


RunArg = Annotated[str, typer.Argument(metavar="RUN")]


def approve(
    run_id: RunArg,
    request: Annotated[str | None, typer.Argument(metavar="[REQUEST]")] = None,
    reason: Annotated[str | None, typer.Option(help="Why (recorded in the log).")] = None,
) -> None:
    """Allow a pending tool call (the run's only pending one if REQUEST is left out)."""
    _decide(run_id, request, "allow", reason)


def deny(
    run_id: RunArg,
    request: Annotated[str | None, typer.Argument(metavar="[REQUEST]")] = None,
    reason: Annotated[str | None, typer.Option(help="Why (the model is told).")] = None,
) -> None:
    """Refuse a pending tool call; the model is told and adapts."""
    _decide(run_id, request, "deny", reason)


def _decide(run_id: str, request: str | None, decision: str, reason: str | None) -> None:
    from helix.runtime import decide

    if (remote := connected()) is not None:
        decided = remotely(lambda: remote.decide(run_id, request, decision, reason))
        typer.echo(f"{decision}ed {decided}" if decision == "allow" else f"denied {decided}")
        return

    async def main(store: EventStore) -> None:
        decided = await decide(store, run_id, request, decision, by=who(), reason=reason)
        typer.echo(f"{decision}ed {decided}" if decision == "allow" else f"denied {decided}")

    run(lambda: with_store(main))


def steer(run_id: RunArg, message: Annotated[str, typer.Argument(metavar="MESSAGE")]) -> None:
    """Tell the agent something; it reads it before its next model call."""
    from helix.runtime import steer as send

    if (remote := connected()) is not None:
        remotely(lambda: remote.control(run_id, "steer", {"message": message}))
        typer.echo("sent")
        return

    async def main(store: EventStore) -> None:
        await send(store, run_id, message, by=who())
        typer.echo("sent")

    run(lambda: with_store(main))


def pause(run_id: RunArg) -> None:
    """Pause the run at its next safe point (a running tool finishes first)."""
    from helix.runtime import pause as stop

    if (remote := connected()) is not None:
        remotely(lambda: remote.control(run_id, "pause"))
        typer.echo("paused")
        return

    async def main(store: EventStore) -> None:
        await stop(store, run_id, by=who())
        typer.echo("paused")

    run(lambda: with_store(main))


def cancel(run_id: RunArg) -> None:
    """Cancel the run: a running command is killed and the run ends cancelled."""
    from helix.runtime import cancel as end

    if (remote := connected()) is not None:
        remotely(lambda: remote.control(run_id, "cancel"))
        typer.echo("cancelled")
        return

    async def main(store: EventStore) -> None:
        await end(store, run_id, by=who())
        typer.echo("cancelled")

    run(lambda: with_store(main))
