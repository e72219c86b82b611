"""Session snapshots: the state serialises faithfully, and snapshot + tail == full fold.

The property: whatever the session, the snapshot spacing and the point asked for, a
replay that starts from the nearest snapshot (of the run or, for a fork, of its
parent) gives exactly the state a fold of the whole stitched log gives.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helix.errors import ForkError, StoreUnavailableError
from helix.kernel.events import Budget, ForkPoint, NewEvent, SteerReceived, TurnEnded
from helix.kernel.log import FoldSnapshot, MemoryEventStore
from helix.kernel.session import (
    BackgroundProcess,
    BranchProgress,
    CallRequest,
    ChoiceMade,
    LiveState,
    Message,
    PendingApproval,
    PendingChoice,
    SessionState,
    StrategyProgress,
    TaskState,
    Usage,
    decode_state,
    encode_state,
    fold_version,
    replay,
    replay_run,
    save_snapshot,
    snapshot_run,
    turn_boundary,
)
from helix.testing import run_created, turn_events

_EVERY_FIELD = {
    "run_id": "run_a",
    "head": 41,
    "status": "paused",
    "objective": "tidy ✓ the \u2028 README",
    "model": "scripted:demo",
    "world": "/tmp/w",
    "parent": ForkPoint(run_id="run_p", seq=7),
    "turn": 4,
    "in_turn": True,
    "messages": [
        Message("user", "hi"),
        Message("assistant", "ok", tool_calls=(CallRequest("c1", "read", {"p": [1, 2.5]}),)),
        Message("tool", "out", call_id="c1", ok=False, name="read"),
    ],
    "pending_calls": {
        "c2": CallRequest("c2", "write", {"n": None, "x": {"y": True}}),
        "c11": CallRequest("c11", "write", {}, malformed="not JSON", raw_args='{"p": '),
    },
    "running_calls": {"c3", "c4"},
    "interrupted_calls": {"c5"},
    "pending_approvals": {
        "r1": PendingApproval("r1", "c2", "write", {}, "2026-12-01T00:00:00Z"),
        "r2": PendingApproval(
            "r2", "c9", "question", {"source": "mcp:t"}, None, question={"message": "ok?"}
        ),
    },
    "awaiting_model": True,
    "turn_message_ends": {1: 3, 2: 5},
    "context_summary": "turn 1 read the file",
    "compacted_messages": 3,
    "compacted_upto_turn": 1,
    "steering": ["faster"],
    "usage": Usage(10, 20, 0.1 + 0.2, 1),
    "own_usage": Usage(1, 2, 1e-17, 0),
    "usage_by_model": {"a:b": Usage(3, 4, 0.5, 2)},
    "current_model": "a:b",
    "summary": "done",
    "error": "no",
    "children": ["run_c"],
    "children_by_call": {"c6": "run_c"},
    "children_reported": {"run_c"},
    "delegated_usd": 0.7,
    "budget": Budget(usd=2.0, max_turns=9, max_seconds=1.5),
    "pause_reason": "budget",
    "over_budget": "workspace:team",
    "over_cap": "tokens",
    "turn_has_reply": True,
    "last_reply_had_calls": False,
    "mistakes": 3,
    "mistake_turn": 4,
    "last_mistake": "unknown tool 'wrtie'",
    "turn_calls": {"c2", "c12"},
    "tool_called": True,
    "approval_calls": {"c2": "r1"},
    "approved_calls": {"c7"},
    "denied_calls": {"c8": "denied by ann"},
    "turn_files": {"a.txt", "ü/b.txt"},
    "components": {"cmp_1": "table", "cmp_2": "options"},
    "cards": {"cmp_2": {"question": "which?", "choices": [{"id": "a", "label": "A"}]}},
    "pending_choices": {
        "cmp_2": PendingChoice("cmp_2", "c10", ("a", "b"), None, props={"question": "which?"})
    },
    "choice_calls": {"c10": "cmp_2"},
    "choices_made": {"cmp_3": ChoiceMade("b", "user:ann", reason=None)},
    "plan": {"tasks": [{"id": "a", "objective": "x"}], "max_parallel": 4},
    "tasks": {
        "a": TaskState(
            status="failed",
            attempts=2,
            run_id="run_a2",
            runs=["run_a1", "run_a2"],
            objective="x",
            report={"rows": [1, 2.5, None, "ü"]},
            error="its run failed",
            cost_usd=0.25,
            budget_usd=None,
        )
    },
    "started_at": "2026-12-01T07:00:00.123456Z",
    "created_by": "user:ann",
    "live": LiveState(
        {"p1": BackgroundProcess("p1", "npm run dev", "t1c0", 1, running=False, exit_code=0)},
        image="b" * 64,
        tier="gvisor",
    ),
    "strategy": StrategyProgress(
        2,
        [BranchProgress("run_b", "try A", "a:b", "run_j", scored=True, score=0.5, status="done")],
        budget_usd=0.25,
        decided=True,
        chosen="run_b",
        kept=True,
    ),
}


def test_every_field_of_the_state_round_trips() -> None:
    names = {f.name for f in dataclasses.fields(SessionState)}
    assert names == set(_EVERY_FIELD), "a new SessionState field needs a value here"
    state = SessionState(**_EVERY_FIELD)  # type: ignore[arg-type]
    for name, value in _EVERY_FIELD.items():
        assert getattr(SessionState(), name) != value, f"{name}: give it a non-default value"
    back = decode_state(encode_state(state))
    assert back == state
    assert back.messages[1].tool_calls == state.messages[1].tool_calls  # a tuple again
    assert isinstance(back.running_calls, set)
    assert isinstance(back.parent, ForkPoint)
    assert back.usage.cost_usd == 0.1 + 0.2  # floats exactly
    assert back.pending_choices["cmp_2"].choices == ("a", "b")  # a tuple again


def test_what_is_not_a_snapshot_is_refused() -> None:
    for data in (b"", b"not zlib", encode_state(SessionState())[:-3]):
        with pytest.raises(ValueError, match="not a session snapshot"):
            decode_state(data)


def test_the_fold_version_is_a_fingerprint() -> None:
    assert fold_version() == fold_version()
    assert fold_version().startswith("session-")
    assert len(fold_version()) == 24


async def _session(store: MemoryEventStore, turns: list[int]) -> str:
    run_id = (await store.create_run(run_created())).id
    seq = 1
    for turn, calls in enumerate(turns, start=1):
        events = turn_events(turn, calls=calls, final=turn == len(turns))
        if calls == 2:  # steering now and then, folded into the next request
            events.insert(1, NewEvent(SteerReceived(message=f"steer {turn}")))
        seq = await store.append(run_id, events, expected_seq=seq)
    return run_id


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(st.integers(0, 2), min_size=1, max_size=8),
    fork_turns=st.lists(st.integers(0, 2), min_size=0, max_size=4),
    every=st.integers(1, 25),
    where=st.floats(0, 1),
    at=st.floats(0, 1),
    prebuilt=st.booleans(),
)
def test_snapshot_and_tail_equal_the_full_fold(
    turns: list[int],
    fork_turns: list[int],
    every: int,
    where: float,
    at: float,
    prebuilt: bool,
) -> None:
    async def check() -> None:
        store = MemoryEventStore()
        store.snapshot_every = every
        parent = await _session(store, turns)
        if prebuilt:
            await snapshot_run(store, parent)
        ends = [e.seq for e in await store.read(parent) if e.type == "turn.ended"]
        point = ends[int(where * (len(ends) - 1))] if ends else 0
        fork = await store.fork(parent, at_seq=point, message="again")
        seq, turn = fork.next_seq, fork.turns
        for calls in fork_turns:
            turn += 1
            seq = await store.append(fork.id, turn_events(turn, calls=calls), expected_seq=seq)
        for run_id in (parent, fork.id):
            events = await store.read(run_id)
            to_seq = int(at * (len(events) - 1))
            for target in (to_seq, None, to_seq):  # the second read may use a kept snapshot
                expected = replay(events, to_seq=target)
                expected.run_id = run_id
                assert await replay_run(store, run_id, to_seq=target) == expected

    asyncio.run(check())


class _Refusing(MemoryEventStore):
    """A store whose derived data cannot be written (read-only, say)."""

    async def _put_snapshot(self, snapshot: FoldSnapshot) -> None:
        raise StoreUnavailableError("read-only")


async def test_a_store_that_refuses_snapshots_still_replays() -> None:
    store = _Refusing()
    store.snapshot_every = 3
    run_id = await _session(store, [1, 2, 1])
    events = await store.read(run_id)
    assert await replay_run(store, run_id) == replay(events)
    assert await snapshot_run(store, run_id) == 0
    assert await store.nearest_snapshot(run_id, "session", fold_version()) is None


async def test_a_state_that_will_not_encode_is_not_kept() -> None:
    store = MemoryEventStore()
    run_id = (await store.create_run(run_created())).id
    state = SessionState(run_id=run_id, head=0, messages=[Message("user", "a\ud800b")])
    assert not await save_snapshot(store, run_id, state)
    assert await store.nearest_snapshot(run_id, "session", fold_version()) is None


async def test_a_turn_end_missing_from_the_index_is_found_by_its_payload() -> None:
    store = MemoryEventStore()
    run_id = await _session(store, [1])
    ended = NewEvent(TurnEnded(turn=2))  # no turn on the row, as an odd import may have
    head = await store.append(run_id, [ended], expected_seq=(await store.get_run(run_id)).next_seq)
    assert await store.turn_end(run_id, 2) is None
    assert await turn_boundary(store, run_id, 2) == head - 1
    with pytest.raises(ForkError, match="no completed turn 3"):
        await turn_boundary(store, run_id, 3)
