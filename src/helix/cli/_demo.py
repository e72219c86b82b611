"""``helix demo``: a scripted session written to the real store, forked and replayed.

No model is called and no tool runs: the session is a script, labelled as such. What
is real is everything the log does with it: typed events appended to the embedded
SQLite store, a fork that copies nothing, and replays that rebuild both branches.
"""

from __future__ import annotations

import typer

from helix.kernel.events import (
    ModelRequested,
    ModelResponded,
    NewEvent,
    RunCompleted,
    RunStarted,
    SteerReceived,
    TurnEnded,
    TurnStarted,
    Usage,
)
from helix.kernel.log import EventStore
from helix.kernel.session import replay_run, turn_boundary
from helix.testing import run_created, turn_events

from ._common import run, with_store
from ._render import event_line


def _closing_turn(turn: int, text: str) -> list[NewEvent]:
    return [
        NewEvent(TurnStarted(turn=turn), turn=turn),
        NewEvent(ModelRequested(provider="scripted", model="demo"), turn=turn),
        NewEvent(
            ModelResponded(
                text=text,
                usage=Usage(input_tokens=420, output_tokens=35),
                cost_usd=0.0008,
                latency_ms=9.0,
            ),
            actor="agent",
            turn=turn,
        ),
        NewEvent(TurnEnded(turn=turn), turn=turn),
        NewEvent(RunCompleted(summary=text), turn=turn),
    ]


def demo() -> None:
    """Write a scripted session to the local store, fork it, and replay both branches."""

    async def main(store: EventStore) -> None:
        objective = "Summarise the three TODO files in this folder"
        record = await store.create_run(run_created(objective=objective, world="."))
        seq = await store.append(record.id, [NewEvent(RunStarted())], expected_seq=1)
        seq = await store.append(record.id, turn_events(1, calls=2), expected_seq=seq)
        steer = NewEvent(SteerReceived(message="keep it to one line each"), actor="user:demo")
        seq = await store.append(record.id, [steer, *turn_events(2)], expected_seq=seq)
        await store.append(
            record.id, _closing_turn(3, "Three TODOs, one line each."), expected_seq=seq
        )

        typer.echo(f"scripted run {record.id} (model scripted:demo — no model was called)\n")
        async for page in store.read_pages(record.id):
            for event in page:
                typer.echo(event_line(event))

        at = await turn_boundary(store, record.id, 1)
        fork = await store.fork(record.id, at_seq=at, message="Try a table instead")
        await store.append(
            fork.id, _closing_turn(2, "A table of three TODOs."), expected_seq=fork.next_seq
        )
        typer.echo(f"\nforked {fork.id} at seq {at} (end of turn 1): nothing copied")
        for event in await store.read(fork.id, after=at):
            typer.echo(event_line(event))

        for run_id in (record.id, fork.id):
            state = await replay_run(store, run_id)
            typer.echo(
                f"\nreplayed {run_id}: {state.status}, {state.turn} turns,"
                f" {len(state.messages)} messages, ${state.usage.cost_usd:.4f},"
                f" summary {state.summary!r}"
            )
        typer.echo(
            f"\nnext: helix logs {record.id} · helix replay {fork.id} · helix runs ·"
            " helix bench eventlog"
        )

    run(lambda: with_store(main))
