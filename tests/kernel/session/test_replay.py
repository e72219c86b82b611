"""Replay is a pure fold: properties over generated sessions (hypothesis)."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from helix.kernel.events import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    ModelFailed,
    NewEvent,
    RunPaused,
    RunResumed,
    SteerReceived,
    ToolInterrupted,
    ToolStarted,
)
from helix.kernel.log import MemoryEventStore
from helix.kernel.session import fold, replay, replay_run
from helix.testing import run_created, turn_events

FAST = settings(max_examples=60, deadline=None)


@st.composite
def sessions(draw: st.DrawFn) -> list[NewEvent]:
    """The events after run.created of a plausible session, built from whole turns."""
    events: list[NewEvent] = []
    turns = draw(st.integers(0, 5))
    for turn in range(1, turns + 1):
        if draw(st.booleans()):
            events.append(NewEvent(SteerReceived(message=f"steer {turn}"), actor="user:u1"))
        if draw(st.integers(0, 4)) == 0:
            events += [NewEvent(RunPaused(reason="user")), NewEvent(RunResumed())]
        final = turn == turns and draw(st.booleans())
        body = turn_events(
            turn,
            calls=draw(st.integers(0, 3)),
            output=draw(st.text(max_size=20)),
            cost_usd=draw(st.one_of(st.none(), st.floats(0, 1))),
            final=final,
        )
        if draw(st.booleans()):
            body.insert(1, NewEvent(ModelFailed(error="429", attempt=1, retry_in_s=0.5), turn=turn))
        events += body
    if draw(st.booleans()):
        # A turn the process died in: a call running, another waiting for approval.
        turn = turns + 1
        events += turn_events(turn, calls=2)[:-6]  # cut before the second call's result
        events += [
            NewEvent(ToolInterrupted(call_id=f"t{turn}c0", reason="process died"), turn=turn),
            NewEvent(
                ApprovalRequested(
                    request_id="a1",
                    call_id=f"t{turn}c1",
                    name="read_file",
                    args={},
                    expires_at=None,
                ),
                turn=turn,
            ),
        ]
        if draw(st.booleans()):
            events += [
                NewEvent(ApprovalDecided(request_id="a1", decision="allow", by="user:u1")),
                NewEvent(ToolStarted(call_id=f"t{turn}c1", sandbox="process"), turn=turn),
            ]
    return events


def as_stored(run_id: str, events: list[NewEvent], first_seq: int = 0) -> list[Event]:
    return [
        Event(
            run_id,
            first_seq + i,
            e.type,
            1,
            "t",
            e.turn,
            e.actor,
            e.payload.model_dump(mode="json"),
        )
        for i, e in enumerate(events)
    ]


def full_log(run_id: str, body: list[NewEvent]) -> list[Event]:
    return as_stored(run_id, [NewEvent(run_created(), turn=0), *body])


@FAST
@given(sessions(), st.data())
def test_folding_in_steps_equals_folding_at_once(body: list[NewEvent], data: st.DataObject) -> None:
    log = full_log("r1", body)
    at_once = replay(log)
    one_by_one = replay([])
    for event in log:
        fold(one_by_one, [event])
    assert one_by_one == at_once
    split = data.draw(st.integers(0, len(log)))
    assert fold(replay(log[:split]), log[split:]) == at_once


@FAST
@given(sessions(), st.data())
def test_to_seq_equals_a_prefix(body: list[NewEvent], data: st.DataObject) -> None:
    log = full_log("r1", body)
    to_seq = data.draw(st.integers(0, len(log) - 1))
    assert replay(log, to_seq=to_seq) == replay(log[: to_seq + 1])
    assert replay(log, to_seq=to_seq).head == to_seq


@FAST
@given(sessions(), sessions(), st.data())
def test_fork_replays_as_parent_prefix_plus_own_events(
    parent_body: list[NewEvent], fork_body: list[NewEvent], data: st.DataObject
) -> None:
    async def scenario() -> None:
        async with MemoryEventStore() as store:
            parent = (await store.create_run(run_created())).id
            if parent_body:
                await store.append(parent, parent_body, expected_seq=1)
            parent_log = await store.read(parent)
            boundaries = [0] + [e.seq for e in parent_log if e.type == "turn.ended"]
            at = data.draw(st.sampled_from(boundaries))
            fork = await store.fork(parent, at_seq=at, message="branch")
            own = [e for e in fork_body if e.type != "run.created"]
            if own:
                await store.append(fork.id, own, expected_seq=fork.next_seq)
            forked = await store.read(fork.id)
            expected = fold(replay(parent_log[: at + 1]), forked[at + 1 :])
            assert await replay_run(store, fork.id) == expected
            # The registry row agrees with the fold of the fork's own events.
            record = await store.get_run(fork.id)
            assert record.status == expected.status
            assert record.input_tokens == expected.own_usage.input_tokens
            assert record.cost_usd == expected.own_usage.cost_usd

    asyncio.run(scenario())


@FAST
@given(sessions())
def test_registry_row_agrees_with_the_fold(body: list[NewEvent]) -> None:
    async def scenario() -> None:
        async with MemoryEventStore() as store:
            run_id = (await store.create_run(run_created())).id
            if body:
                await store.append(run_id, body, expected_seq=1)
            state = await replay_run(store, run_id)
            record = await store.get_run(run_id)
            assert (record.status, record.turns, record.head) == (
                state.status,
                state.turn,
                state.head,
            )
            assert record.output_tokens == state.usage.output_tokens
            assert abs(record.cost_usd - state.usage.cost_usd) < 1e-9

    asyncio.run(scenario())


def test_interrupted_and_pending_work_is_visible() -> None:
    body = turn_events(1, calls=2)[:-6]
    body += [
        NewEvent(ToolInterrupted(call_id="t1c0", reason="process died"), turn=1),
        NewEvent(SteerReceived(message="hurry"), actor="user:u1"),
    ]
    state = replay(full_log("r1", body))
    assert state.interrupted_calls == {"t1c0"}
    assert set(state.pending_calls) == {"t1c0", "t1c1"}
    assert state.in_turn
    assert not state.at_turn_boundary
    assert state.steering == ["hurry"]
    assert state.status == "queued"
