"""Showing a run live through the door (driving it here when the door says so).

The same view in both modes: the run's events as ``api.events(follow=True)`` hands
them out, a child's after its ``agent.spawned`` (marked ``│``), approvals asked inline.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from helix.config import Settings
from helix.errors import NotFoundError
from helix.kernel.log import EventStore

from ._common import who
from ._follow import CHILD_WAIT_TRIES, COLOURS, stops_following
from ._render import event_line

if TYPE_CHECKING:  # the engine loads when a run is driven, not at --help or `helix runs`
    from helix.api import Decision, HelixApi, RunEvent
    from helix.kernel.session import SessionState
    from helix.runtime import Engine


def engine_for(store: EventStore, env: dict[str, str] | None = None) -> Engine:
    """The engine of this process, on the store the environment names."""
    from helix.runtime import Engine

    return Engine(store, home=Settings.from_env().home, env=env)


async def drive_and_show(
    engine: Engine, run_id: str, *, json: bool, after: int = -1, interactive: bool | None = None
) -> SessionState:
    """Drive the run here, printing its events as they are appended, until it ends."""
    from helix.api import LocalApi

    ask = asking(json) if interactive is None else interactive
    api = LocalApi(engine, actor=who())
    states: list[SessionState] = []

    async def drive() -> None:
        states.append(await engine.drive(run_id))

    await drive_while_showing(api, run_id, drive(), json=json, after=after, ask=ask)
    return states[0]


async def drive_while_showing(
    api: HelixApi,
    run_id: str,
    driving: Coroutine[Any, Any, None] | None,
    *,
    json: bool,
    after: int,
    ask: bool,
) -> str | None:
    """Show the run while ``driving`` (a coroutine, or None) drives it; its last event's type."""
    final: list[str | None] = []
    try:
        async with asyncio.TaskGroup() as group:
            if driving is not None:
                group.create_task(driving)
            final.append(await show(api, run_id, json=json, after=after, ask=ask))
    except BaseExceptionGroup as failed:  # the drive failed: say why, not "a group"
        raise failed.exceptions[0] from None
    return final[0]


def asking(json: bool) -> bool:
    """Whether approvals are asked here: a person at a terminal, not JSON output."""
    return sys.stdin.isatty() and not json


async def show(
    api: HelixApi, run_id: str, *, json: bool, after: int, ask: bool, depth: int = 0
) -> str | None:
    """Print the run's events from ``after`` on until it ends; the type of its last event.

    Printed for a person, a child run's events follow its ``agent.spawned``, marked ``│``,
    its approvals asked too: the parent waits on it meanwhile, so following the child to
    its end before reading on loses nothing. JSON stays one run's log (the child's id is
    in the event, for ``helix logs CHILD``).
    """
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    indent = "│ " * depth
    spent = 0.0
    events = api.events(run_id, after=after, follow=True)
    async with contextlib.aclosing(events):
        async for event in events:
            if json:
                sys.stdout.write(event.to_kernel().to_json() + "\n")
                sys.stdout.flush()
            elif event.type == "gate.decided" and event.data["verdict"] == "allow":
                pass  # allows are in the log; a person wants the asks and denials
            else:
                if event.type == "model.responded" and event.data.get("cost_usd"):
                    spent += float(event.data["cost_usd"])
                line = event_line(event)
                if event.type == "turn.ended":
                    line += f"   (spent ${spent:.4f})"
                console.print(indent + line, style=COLOURS.get(event.type), markup=False)
            if ask and event.type == "approval.requested":
                await _ask(api, run_id, event)
            if event.type == "agent.spawned" and not json:
                await _show_child(api, str(event.data["child_run_id"]), ask=ask, depth=depth + 1)
            if stops_following(event, depth):
                return event.type
    return None


async def _show_child(api: HelixApi, child_id: str, *, ask: bool, depth: int) -> None:
    # The parent logs the child's id just before creating it.
    for _ in range(CHILD_WAIT_TRIES):
        try:
            await api.get(child_id)
            break
        except NotFoundError:
            await asyncio.sleep(0.05)
    else:
        return  # never created (the parent's process died): nothing to show
    await show(api, child_id, json=False, after=0, ask=ask, depth=depth)


async def _ask(api: HelixApi, run_id: str, event: RunEvent) -> None:
    data = event.data
    question = f"allow {data['name']} {data['args']}? [y/n] "
    answer = (await asyncio.to_thread(input, question)).strip().lower()
    decision: Decision = "allow" if answer in ("y", "yes") else "deny"
    try:
        await api.decide(run_id, str(data["request_id"]), decision)
    except Exception as error:  # decided elsewhere meanwhile, or expired
        typer.echo(f"not recorded: {error}", err=True)


def exit_code(state: SessionState) -> int:
    """0 when the run completed; 1 when it failed, was cancelled or was denied."""
    return 0 if state.status == "completed" else 1


def resolve_dir(directory: str | None) -> Path:
    """The world directory: ``--dir`` or the current directory."""
    return Path(directory).expanduser() if directory else Path.cwd()
