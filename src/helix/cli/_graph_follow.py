"""Following a task graph from a terminal: its task changes as they happen, its logs.

``follow_graph`` shows a graph (driving it here when the door started it here) until it
ends: one line per task change, or the graph's events as JSON Lines. ``print_logs``
prints the graph's events and its tasks' runs' events, each line led by its task's id.
"""

from __future__ import annotations

import asyncio
import contextlib
import json as jsonlib
import sys
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

import typer

from helix.errors import NotFoundError

from ._follow import CHILD_WAIT_TRIES
from ._graph_lines import graph_line

if TYPE_CHECKING:
    from helix.api import GraphRun, HelixApi, RunEvent

    from ._door import Door

GRAPH = "(graph)"
"""What leads a line of the graph's own events in ``helix graph logs``."""


async def follow_graph(door: Door, run_id: str, *, json: bool, after: int) -> int:
    """Show the graph until it ends (driving it here if the door started it); exit code.

    0 when it completed; 1 when it failed or was cancelled. A paused graph (a task
    failed for good, its budget spent) is waited on, as ``helix run`` waits: until
    someone retries the task, resumes or cancels it, from here or elsewhere.
    """
    local = door.local
    driving = None
    if local is not None and run_id in door.here:
        door.here.remove(run_id)
        driving = door.drive_exporting(run_id, local.engine.drive(run_id))
    try:
        async with asyncio.TaskGroup() as group:
            if driving is not None:
                group.create_task(driving)
            await _show(door.api, run_id, json=json, after=after)
    except BaseExceptionGroup as failed:  # the reason, not "a group"
        raise failed.exceptions[0] from None
    final = await door.api.get(run_id)
    return 0 if final.status == "completed" else 1


async def _show(api: HelixApi, run_id: str, *, json: bool, after: int) -> None:
    width = 8
    events = api.events(run_id, after=after, follow=True)
    async with contextlib.aclosing(events):
        async for event in events:
            if event.type == "graph.planned":
                ids = [str(t.get("id", "")) for t in event.data["plan"].get("tasks") or ()]
                width = max([width, *map(len, ids)])
            if json:
                sys.stdout.write(event.to_kernel().to_json() + "\n")
                sys.stdout.flush()
                continue
            line = graph_line(event, run_id, width)
            if line is not None:
                typer.echo(line)


async def print_logs(api: HelixApi, graph: GraphRun, *, follow: bool, json: bool) -> None:
    """The graph's events and its tasks' runs' events, each led by its task's id.

    Without ``follow``: everything logged so far, in time order. With it: as they are
    logged, until the graph and every task run it started have ended.
    """
    width = max([len(GRAPH), *(len(t.id) for t in graph.tasks)])
    if not follow:
        found = [(_owner(e), e) async for e in api.events(graph.run.id)]
        for task in graph.tasks:
            for child in task.runs:
                found += [(task.id, e) async for e in _quietly(api.events(child))]
        found.sort(key=lambda pair: pair[1].ts)  # stable: each log keeps its order
        for owner, event in found:
            _log_line(owner, event, width, json)
        return
    queue: asyncio.Queue[tuple[str, RunEvent]] = asyncio.Queue()
    async with asyncio.TaskGroup() as group:
        printer = group.create_task(_print_from(queue, width, json))
        await _follow_logs(api, graph.run.id, queue, group)
        await queue.join()
        printer.cancel()


async def _follow_logs(
    api: HelixApi,
    run_id: str,
    queue: asyncio.Queue[tuple[str, RunEvent]],
    group: asyncio.TaskGroup,
) -> None:
    children: list[asyncio.Task[None]] = []
    events = api.events(run_id, follow=True)
    async with contextlib.aclosing(events):
        async for event in events:
            await queue.put((_owner(event), event))
            if event.type == "task.started":
                follower = _follow_child(
                    api, str(event.data["run_id"]), str(event.data["task"]), queue
                )
                children.append(group.create_task(follower))
    for child in children:
        await child


async def _follow_child(
    api: HelixApi, run_id: str, task: str, queue: asyncio.Queue[tuple[str, RunEvent]]
) -> None:
    for _ in range(CHILD_WAIT_TRIES):  # its id is logged just before it is created
        try:
            await api.get(run_id)
            break
        except NotFoundError:
            await asyncio.sleep(0.05)
    else:
        return
    async for event in _quietly(api.events(run_id, follow=True)):
        await queue.put((task, event))


async def _print_from(queue: asyncio.Queue[tuple[str, RunEvent]], width: int, json: bool) -> None:
    while True:
        owner, event = await queue.get()
        _log_line(owner, event, width, json)
        queue.task_done()


async def _quietly(events: AsyncGenerator[RunEvent, None]) -> AsyncGenerator[RunEvent, None]:
    """A run's events, or none if it was never created (its graph's process died first)."""
    async with contextlib.aclosing(events):
        with contextlib.suppress(NotFoundError):
            async for event in events:
                yield event


def _owner(event: RunEvent) -> str:
    """The task a graph's own event is about (``task.*``), else the graph."""
    task = event.data.get("task") if event.type.startswith("task.") else None
    return str(task) if task else GRAPH


def _log_line(owner: str, event: RunEvent, width: int, json: bool) -> None:
    from ._render import event_line

    if json:
        data: dict[str, Any] = {"task": None if owner == GRAPH else owner}
        data.update(jsonlib.loads(event.to_kernel().to_json()))
        typer.echo(jsonlib.dumps(data, ensure_ascii=False))
        return
    typer.echo(f"{owner:<{width}}  {event_line(event)}")
