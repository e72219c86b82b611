"""Driving a run in the foreground while showing it live, and answering approvals inline."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from helix.config import Settings
from helix.errors import RunNotFoundError
from helix.kernel.events import Event
from helix.kernel.log import EventStore
from helix.kernel.session import SessionState

from ._control import who
from ._follow import CHILD_WAIT_TRIES, COLOURS, stops_following
from ._render import event_line

if TYPE_CHECKING:  # the engine loads when a run is driven, not at --help or `helix runs`
    from helix.runtime import Engine


def engine_for(store: EventStore, env: dict[str, str] | None = None) -> Engine:
    """The engine of this process, on the store the environment names."""
    from helix.runtime import Engine

    return Engine(store, home=Settings.from_env().home, env=env)


async def drive_and_show(
    engine: Engine, run_id: str, *, json: bool, after: int = -1, interactive: bool | None = None
) -> SessionState:
    """Drive the run here, printing its events as they are appended, until it ends."""
    ask = sys.stdin.isatty() and not json if interactive is None else interactive
    async with asyncio.TaskGroup() as group:
        shower = group.create_task(show(engine.store, run_id, json=json, after=after, ask=ask))
        try:
            state = await engine.drive(run_id)
        finally:
            await asyncio.sleep(0.05)  # let the last events print
            shower.cancel()
    return state


async def show(
    store: EventStore, run_id: str, *, json: bool, after: int, ask: bool, depth: int = 0
) -> None:
    """Print the run's events from ``after`` on; answer approvals when ``ask``.

    Printed for a person, a child run's events follow its ``agent.spawned``, marked ``│``,
    its approvals asked too: the parent waits on it, so it is what is happening. JSON
    stays one run's log (the child's id is in the event, for ``helix logs CHILD``).
    """
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    indent = "│ " * depth
    spent = 0.0
    async with store.subscribe(run_id, after=after) as events, asyncio.TaskGroup() as children:
        async for event in events:
            if json:
                sys.stdout.write(event.to_json() + "\n")
                sys.stdout.flush()
            elif event.type == "gate.decided" and event.data["verdict"] == "allow":
                pass  # allows are in the log; a person wants the asks and denials
            else:
                if event.type == "model.responded" and event.data.get("cost_usd"):
                    spent += float(event.data["cost_usd"])
                line = event_line(event)
                if event.type == "turn.ended":
                    line += f"   (spent ${spent:.4f})"
                style = COLOURS.get(event.type)
                console.print(indent + line, style=style, markup=False)
            if ask and event.type == "approval.requested":
                await _ask(store, run_id, event)
            if event.type == "agent.spawned" and not json:
                child = event.data["child_run_id"]
                children.create_task(_show_child(store, child, ask=ask, depth=depth + 1))
            if stops_following(event, depth):
                return


async def _show_child(store: EventStore, child_id: str, *, ask: bool, depth: int) -> None:
    # The parent logs the child's id just before creating it.
    for _ in range(CHILD_WAIT_TRIES):
        try:
            await store.get_run(child_id)
            break
        except RunNotFoundError:
            await asyncio.sleep(0.05)
    else:
        return  # never created (the parent's process died): nothing to show
    await show(store, child_id, json=False, after=0, ask=ask, depth=depth)


async def _ask(store: EventStore, run_id: str, event: Event) -> None:
    from helix.runtime import decide

    data = event.data
    question = f"allow {data['name']} {data['args']}? [y/n] "
    answer = (await asyncio.to_thread(input, question)).strip().lower()
    decision = "allow" if answer in ("y", "yes") else "deny"
    try:
        await decide(store, run_id, data["request_id"], decision, by=who())
    except Exception as error:  # decided elsewhere meanwhile, or expired
        typer.echo(f"not recorded: {error}", err=True)


def exit_code(state: SessionState) -> int:
    """0 when the run completed; 1 when it failed, was cancelled or was denied."""
    return 0 if state.status == "completed" else 1


def resolve_dir(directory: str | None) -> Path:
    """The world directory: ``--dir`` or the current directory."""
    return Path(directory).expanduser() if directory else Path.cwd()
