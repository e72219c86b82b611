"""Showing a run live through the door (driving it here when the door says so).

The same view in both modes (``_watch.Watch``): the run as a person reads it (agent
text, tool calls, diffs, a spinner, questions asked), or with ``--json`` its events one
per line as ``api.events(follow=True)`` hands them out.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from helix.config import Settings
from helix.kernel.log import EventStore

if TYPE_CHECKING:  # the engine loads when a run is driven, not at --help or `helix runs`
    from helix.api import HelixApi
    from helix.kernel.session import SessionState
    from helix.memory import Memories
    from helix.runtime import DeltaSink, Engine, RunSetup, Spending

Until = Callable[["SessionState"], bool]
Driving = Callable[[Until], Coroutine[Any, Any, object]]
"""Drives the run here, stopping where ``Until`` holds (the person left, the run paused)."""


def engine_for(
    store: EventStore,
    env: dict[str, str] | None = None,
    spending: Spending | None = None,
    memory: Callable[[], Awaitable[Memories]] | None = None,
    deltas: DeltaSink | None = None,
) -> Engine:
    """The engine of this process, on the store the environment names.

    ``spending``: the budgets its runs reserve against (``with_door`` gives the database's).
    ``memory``: opens the memory its runs' memory tools reach (with it, they are offered).
    ``deltas``: where its runs' replies stream while watched (the door's ``ReplyHub``).
    """
    from helix.runtime import Engine

    doors = None
    if memory is not None:
        from helix.memory import RunMemory

        def doors(setup: RunSetup) -> RunMemory:
            return RunMemory(
                memory, workspace=setup.workspace, run_id=setup.run_id, actor=setup.actor
            )

    home = Settings.from_env().home
    return Engine(store, home=home, env=env, spending=spending, memory=doors, deltas=deltas)


async def drive_and_show(
    engine: Engine,
    run_id: str,
    *,
    json: bool,
    after: int = -1,
    interactive: bool | None = None,
    stdin: TextIO | None = None,
    wait: bool = False,
) -> SessionState:
    """Drive the run here, showing it, until it ends, pauses, or the person leaves it.

    ``interactive``: ask its questions here (default: when stdin is a terminal);
    ``stdin``: where the answers are read (default: this process's); ``wait``: at a
    pause, wait for a resume from elsewhere.
    """
    from helix.api import LocalApi
    from helix.kernel.session import replay

    from ._common import who
    from ._watch import Watch

    ask = asking(json) if interactive is None else interactive
    api = LocalApi(engine, actor=who())

    async def drive(until: Until) -> None:
        await engine.drive(run_id, until=until)

    watch = Watch(api, run_id, json=json, after=after, ask=ask, stdin=stdin, wait=wait)
    await watch.run(drive(watch.until))
    return replay([e.to_kernel() async for e in api.events(run_id)])


async def drive_while_showing(
    api: HelixApi,
    run_id: str,
    driving: Driving | None,
    *,
    json: bool,
    after: int,
    ask: bool,
    wait: bool = False,
    engine: Engine | None = None,
) -> int:
    """Show the run while ``driving`` (or None: another driver) drives it; the exit code.

    0 when it completed; 1 when it failed, was cancelled, or a question went unanswered
    (the input ended); 5 when it paused (``wait``: wait there for a resume instead); 130
    when the person pressed Ctrl-C (a run driven here is paused). ``engine``: the one
    driving it here, whose replies then stream to the view (on a terminal, not JSON).
    """
    from ._watch import Watch

    watch = Watch(api, run_id, json=json, after=after, ask=ask, wait=wait)
    if driving is None:
        return await watch.run(None)
    sink = None if engine is None else watch.deltas()
    if engine is None or sink is None:
        return await watch.run(driving(watch.until))
    before, engine.deltas = engine.deltas, sink
    try:
        return await watch.run(driving(watch.until))
    finally:
        engine.deltas = before


def asking(json: bool) -> bool:
    """Whether approvals are asked here: a person at a terminal, not JSON output."""
    return sys.stdin.isatty() and not json


async def show(api: HelixApi, run_id: str, *, json: bool, after: int, ask: bool) -> str | None:
    """Print the run's events from ``after`` on until it ends; the type of its last event."""
    from ._watch import Watch

    return await Watch(api, run_id, json=json, after=after, ask=ask).follow()


def exit_code(state: SessionState) -> int:
    """0 when the run completed; 1 when it failed, was cancelled or was denied."""
    return 0 if state.status == "completed" else 1


def resolve_dir(directory: str | None) -> Path:
    """The world directory: ``--dir`` or the current directory."""
    return Path(directory).expanduser() if directory else Path.cwd()
