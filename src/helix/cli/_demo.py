"""``helix demo``: a scripted agent, over real HTTP, through the whole engine.

A ``MockModelServer`` plays a scripted model in the OpenAI dialect; the run talks to it
through the official SDK like any other. The agent writes files, tries a catastrophic
command (the command rules deny it), asks approval for a command that changes the world
(the demo answers, as ``user:demo``), and finishes. Then it shows what the log makes
possible: it forks the session after its first turn with a different instruction (the
fork gets its own copy of the world as it was then, and goes its own way), and replays
the original up to that turn from its log alone. Everything else is real: the gates, the
sandbox, the log in the local store. No key is needed and nothing leaves the machine.
The runs' model is labelled ``scripted``.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import TYPE_CHECKING, Any

import typer

from helix.config import Settings

from ._common import run, with_store

if TYPE_CHECKING:  # the kernel, engine and mock server load when the demo runs, not at --help
    from helix.kernel.log import EventStore
    from helix.kernel.session import SessionState
    from helix.runtime import Engine

_MODEL = "openai:scripted-demo"
_BUILD = "mkdir -p build && wc -l notes/todo.md > build/lines.txt"
_STEPS: tuple[dict[str, Any], ...] = (
    {
        "text": "I'll start by writing the project notes.",
        "tool_calls": [
            {"name": "write_file", "args": {"path": "notes/todo.md",
             "content": "# TODO\n\n- write the tests\n- ship it\n"}},
            {"name": "write_file", "args": {"path": "README.md",
             "content": "# Demo project\n\nNotes live in notes/.\n"}},
        ],
    },
    {
        "text": "The old build output is in the way; clearing everything.",
        "tool_calls": [{"name": "run_command", "args": {"command": "rm -rf /"}}],
    },
    {
        "text": "That was refused, and rightly: too broad. I'll make the build folder instead.",
        "tool_calls": [{"name": "run_command", "args": {"command": _BUILD}}],
    },
    {
        "text": "Done: wrote notes/todo.md and README.md, was refused a destructive"
        " command, and recorded the line count in build/lines.txt after approval.",
    },
)  # fmt: skip
_FORK_MESSAGE = "Make the README a table of contents for notes/ instead."
_TABLE = "# Demo project\n\n| file | what |\n|---|---|\n| notes/todo.md | the plan |\n"
_FORK_STEPS: tuple[dict[str, Any], ...] = (
    {
        "text": "A table of contents, then.",
        "tool_calls": [
            {"name": "write_file", "args": {"path": "README.md", "content": _TABLE}},
        ],
    },
    {"text": "Done: README.md is now a table of contents for notes/."},
)  # fmt: skip


def demo() -> None:
    """Run a scripted agent end to end: writes, a denied command, an approval, done."""
    from helix.kernel.session import replay_run, turn_boundary
    from helix.providers import Price, PriceBook, Scenario
    from helix.runtime import Engine, fork_with_world
    from helix.testing import MockModelServer

    from ._live import exit_code

    async def main(store: EventStore) -> int:
        settings = Settings.from_env()
        world = settings.home / "demo" / time.strftime("%Y%m%d-%H%M%S")
        world.mkdir(parents=True, exist_ok=True)
        with MockModelServer(Scenario.of(*_STEPS)) as server:
            env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
            env |= {"OPENAI_API_KEY": "demo-no-key", "OPENAI_BASE_URL": server.openai_base_url}
            prices = PriceBook({_MODEL: Price(input=0.0, output=0.0)})  # scripted: free
            engine = Engine(store, home=settings.home, env=env, prices=prices)
            record = await engine.create(
                "Set up notes for the demo project and record their size in build/",
                model=_MODEL,
                world=world,
            )
            typer.echo(
                f"demo run {record.id}: a SCRIPTED model (a mock server playing a script over"
                f" HTTP; no key, nothing leaves this machine)\nworld: {world}\n"
            )
            state = await _drive_shown(engine, record.id, approve=True)
            if state.status != "completed":
                return exit_code(state)
            typer.echo(f"\nfork: the session after turn 1, told: {_FORK_MESSAGE!r}")
            server.play(Scenario.of(*_FORK_STEPS))
            seq = await turn_boundary(store, record.id, 1)
            fork = await fork_with_world(
                engine, record.id, 1, message=_FORK_MESSAGE, actor="user:demo"
            )
            typer.echo(f"fork {fork.id}, with its own copy of the world: {fork.world}\n")
            forked = await _drive_shown(engine, fork.id, approve=False, after=seq)
        then = await replay_run(store, record.id, to_seq=seq)
        typer.echo(
            f"\nreplay: {record.id} rebuilt from its log up to seq {seq} (the end of turn 1),"
            f" nothing run again: {then.status}, {then.turn} turn, {len(then.messages)}"
            f" messages, ${then.usage.cost_usd:.4f}"
        )
        typer.echo(
            f"\n{state.status}: {state.turn} turns, cost ${state.usage.cost_usd:.4f} (scripted);"
            f" the fork {forked.status} in {forked.turn - 1} more"
            f"\nnext: helix logs {record.id} · helix replay {record.id} --to {seq}"
            f" · helix compare {record.id} {fork.id} · helix runs"
        )
        return exit_code(state)

    raise typer.Exit(run(lambda: with_store(main)))


async def _drive_shown(
    engine: Engine, run_id: str, *, approve: bool, after: int = -1
) -> SessionState:
    """Drive a run to its end while its events past ``after`` print (approvals answered)."""
    from helix.api import LocalApi

    from ._live import show

    store = engine.store
    api = LocalApi(engine, actor="user:demo")
    async with asyncio.TaskGroup() as group:
        shower = group.create_task(show(api, run_id, json=False, after=after, ask=False))
        approver = group.create_task(_approve_as_demo(store, run_id)) if approve else None
        state = await engine.drive(run_id)
        await asyncio.sleep(0.1)  # let the last events print
        shower.cancel()
        if approver is not None:
            approver.cancel()
    return state


async def _approve_as_demo(store: EventStore, run_id: str) -> None:
    from helix.runtime import decide

    async with store.subscribe(run_id) as events:
        async for event in events:
            if event.type == "approval.requested":
                await decide(store, run_id, event.data["request_id"], "allow", by="user:demo")
