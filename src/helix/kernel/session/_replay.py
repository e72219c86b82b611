"""Replay: a pure fold from events to ``SessionState``.

Folding never calls a model or a tool; it reads recorded results back. The same
events always give the same state, whether folded at once or one at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from helix.errors import ForkError
from helix.kernel.events import STATUS_AFTER, Budget, Event, ForkPoint
from helix.kernel.log import EventStore

from ._live import LIVE_HANDLERS, LiveState
from ._mistakes import forget, model_rejected, turn_ended
from ._snapshot import load_snapshot, save_snapshot
from ._state import (
    CallRequest,
    ChoiceMade,
    Message,
    PendingApproval,
    PendingChoice,
    SessionState,
    TaskState,
    Usage,
)
from ._strategy import HANDLERS as _STRATEGY_HANDLERS


def replay(events: Iterable[Event], *, to_seq: int | None = None) -> SessionState:
    """Fold ``events`` (in seq order) into a new state, stopping after ``to_seq``."""
    return fold(SessionState(), events, to_seq=to_seq)


def fold(
    state: SessionState, events: Iterable[Event], *, to_seq: int | None = None
) -> SessionState:
    """Fold more ``events`` into ``state`` (in place) and return it."""
    for event in events:
        if to_seq is not None and event.seq > to_seq:
            break
        apply(state, event)
    return state


async def replay_run(
    store: EventStore, run_id: str, *, to_seq: int | None = None, turn: int | None = None
) -> SessionState:
    """Fold a run's (stitched) log from ``store``, up to ``to_seq`` or the end of ``turn``.

    The fold starts from the nearest session snapshot at or before the target (a
    fork's ancestors' snapshots serve its inherited stretch), so it costs the events
    since that snapshot rather than the whole log. When it folds past a snapshot
    point (every ``store.snapshot_every`` events) with none kept, it keeps the last
    one it passed, so the next replay starts there. ``ForkError`` for a ``turn`` that
    never ended.
    """
    if turn is not None:
        boundary = await turn_boundary(store, run_id, turn)
        to_seq = boundary if to_seq is None else min(to_seq, boundary)
    every = store.snapshot_every
    state = await load_snapshot(store, run_id, at_most=to_seq) if every > 0 else None
    state = state or SessionState(run_id=run_id)
    keep_at = await _next_point(store, run_id, state.head, to_seq) if every > 0 else None
    async for page in store.read_pages(run_id, after=state.head, to_seq=to_seq):
        for event in page:
            apply(state, event)
            if event.seq == keep_at:
                await save_snapshot(store, event.run_id, state)
    state.run_id = run_id
    return state


async def snapshot_run(store: EventStore, run_id: str) -> int:
    """Keep a session snapshot at every snapshot point of the run's log that lacks one.

    Rebuilds what ``EventStore.drop_snapshots`` dropped (or what a log written outside
    a live session never had). Returns how many snapshots were written.
    """
    every = store.snapshot_every
    if every <= 0:
        return 0
    state = await load_snapshot(store, run_id) or SessionState(run_id=run_id)
    written = 0
    async for page in store.read_pages(run_id, after=state.head):
        for event in page:
            apply(state, event)
            if event.seq % every == 0 and await save_snapshot(store, event.run_id, state):
                written += 1
    return written


async def _next_point(store: EventStore, run_id: str, head: int, to_seq: int | None) -> int | None:
    """The last snapshot point a replay from ``head`` to ``to_seq`` passes, if any."""
    every = store.snapshot_every
    end = (await store.get_run(run_id)).head
    end = end if to_seq is None else min(end, to_seq)
    point = end - end % every
    return point if point > head and point > 0 else None


async def turn_boundary(store: EventStore, run_id: str, turn: int) -> int:
    """Return the seq where ``turn`` ends in the run's log (turn 0: where the run starts).

    A lookup in the store's index of turn boundaries. Only when it finds nothing is
    the log scanned (a ``turn.ended`` whose row lacks its turn number, as an imported
    log may hold, is found by its payload), before ``ForkError`` says there is none.
    """
    if turn < 0:
        raise ForkError(f"turn must be 0 or more, not {turn}")
    if turn == 0:
        return 0
    seq = await store.turn_end(run_id, turn)
    if seq is not None:
        return seq
    async for page in store.read_pages(run_id):
        for event in page:
            if event.type == "turn.ended" and event.data["turn"] == turn:
                return event.seq
    raise ForkError(f"run {run_id!r} has no completed turn {turn}")


def apply(state: SessionState, event: Event) -> None:
    """Fold one event into ``state``."""
    state.head = event.seq
    status = STATUS_AFTER.get(event.type)
    if status is not None:
        state.status = status
    handler = _HANDLERS.get(event.type)
    if handler is not None:
        handler(state, event, event.data)


def _run_created(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.run_id = event.run_id
    state.started_at = event.ts
    state.created_by = event.actor
    if data.get("budget") is not None:
        state.budget = Budget.model_validate(data["budget"])
    state.objective = data["objective"]
    state.model = data["model"]
    state.world = data["world"]
    state.messages.append(Message("user", data["objective"]))


def _run_forked(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.run_id = event.run_id
    state.created_by = event.actor
    state.parent = ForkPoint.model_validate(data["parent"])
    state.own_usage = Usage()
    state.usage_by_model = {}
    if data.get("model"):
        state.model = data["model"]
    if data.get("world"):
        state.world = data["world"]
    if data.get("message"):
        state.messages.append(Message("user", data["message"]))
    if data.get("budget") is not None:
        state.budget = Budget.model_validate(data["budget"])
    state.summary = state.error = None
    forget(state)  # a fork (another model, another message) starts its own count


def _run_paused(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.pause_reason = data["reason"]


def _budget_exceeded(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.over_budget = data.get("scope") or "run"
    state.over_cap = "tokens" if data.get("cap_tokens") is not None else "usd"


def _run_resumed(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    if state.pause_reason is not None:  # a person let a paused run go on: mistakes forgiven
        forget(state)
    state.pause_reason = None
    state.over_budget = state.over_cap = None
    if data.get("budget") is not None:
        state.budget = Budget.model_validate(data["budget"])


def _run_completed(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.summary = data["summary"]


def _run_failed(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.error = data["error"]


def _turn_started(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.turn = data["turn"]
    state.in_turn = True
    state.turn_has_reply = False
    state.turn_files.clear()
    state.turn_calls.clear()


def _turn_ended(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.in_turn = False
    state.turn_message_ends[data["turn"]] = len(state.messages)
    turn_ended(state, data["turn"])


def _model_requested(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.awaiting_model = True
    state.current_model = f"{data['provider']}:{data['model']}"
    # Steering received before this call is part of its request.
    for message in state.steering:
        state.messages.append(Message("user", message))
    state.steering.clear()


def _model_responded(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.awaiting_model = False
    calls = tuple(
        CallRequest(c["id"], c["name"], c["args"], c.get("malformed"), c.get("raw_args"))
        for c in data["tool_calls"]
    )
    state.last_reply_had_calls = bool(calls)
    state.turn_has_reply = True
    state.messages.append(Message("assistant", data["text"], tool_calls=calls))
    for call in calls:
        state.pending_calls[call.id] = call
        state.turn_calls.add(call.id)
    answered = data.get("provider"), data.get("model")  # a fallback chain's later model
    model = f"{answered[0]}:{answered[1]}" if all(answered) else state.current_model
    _count(state, event, model or "unknown", data["usage"], data["cost_usd"])


def _count(
    state: SessionState, event: Event, model: str, usage: dict[str, Any], cost: float | None
) -> None:
    counted = [state.usage]
    if event.run_id == state.run_id:
        counted.append(state.own_usage)
        counted.append(state.usage_by_model.setdefault(model, Usage()))
    for totals in counted:
        totals.input_tokens += usage["input_tokens"]
        totals.output_tokens += usage["output_tokens"]
        if cost is None:
            totals.unpriced_calls += 1
        else:
            totals.cost_usd += cost


def _mcp_sampled(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    """A source's sampling is the run's spend, like its own model calls."""
    _count(state, event, data["model"], data["usage"], data["cost_usd"])


def _context_compacted(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    """Older turns summarised: requests send the summary instead; its call is spend."""
    state.context_summary = data["summary"]
    state.compacted_messages = data["messages"]
    state.compacted_upto_turn = data["upto_turn"]
    model = f"{data['provider']}:{data['model']}"
    _count(state, event, model, data["usage"], data["cost_usd"])


def _model_failed(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    if data["retry_in_s"] is None:
        state.awaiting_model = False


def _tool_started(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.running_calls.add(data["call_id"])
    state.approved_calls.discard(data["call_id"])


def _tool_completed(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    call_id = data["call_id"]
    call = state.pending_calls.pop(call_id, None)
    state.running_calls.discard(call_id)
    state.interrupted_calls.discard(call_id)
    state.approved_calls.discard(call_id)
    state.denied_calls.pop(call_id, None)
    state.approval_calls.pop(call_id, None)
    name = call.name if call is not None else None
    state.messages.append(
        Message("tool", data["output"], call_id=call_id, ok=data["ok"], name=name)
    )


def _file_changed(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.turn_files.add(data["path"])


def _tool_interrupted(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.running_calls.discard(data["call_id"])
    state.interrupted_calls.add(data["call_id"])


def _approval_requested(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    question = data.get("question")
    state.pending_approvals[data["request_id"]] = PendingApproval(
        data["request_id"],
        data["call_id"],
        data["name"],
        data["args"],
        data["expires_at"],
        question,
    )
    if question is None:
        state.approval_calls[data["call_id"]] = data["request_id"]


def _approval_decided(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    pending = state.pending_approvals.pop(data["request_id"], None)
    if pending is None or pending.question is not None:
        return
    if data["decision"] == "allow":
        state.approved_calls.add(pending.call_id)
    else:
        who = "automatically" if data.get("auto") else f"by {data['by']}"
        reason = f": {data['reason']}" if data.get("reason") else ""
        state.denied_calls[pending.call_id] = f"denied {who}{reason}"


def _gate_decided(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    # A running command's egress denials are logged against it; they refuse a connection,
    # not the call.
    if data["verdict"] == "deny" and data["call_id"] not in state.running_calls:
        state.denied_calls[data["call_id"]] = f"denied by the {data['gate']} gate: {data['reason']}"


def _steer_received(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.steering.append(data["message"])


def _agent_spawned(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.children.append(data["child_run_id"])
    if data.get("call_id") is not None:
        state.children_by_call[data["call_id"]] = data["child_run_id"]


def _agent_reported(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.children_reported.add(data["child_run_id"])
    if event.run_id == state.run_id:  # like own_usage: a fork's budget starts afresh
        state.delegated_usd += data.get("cost_usd") or 0.0


def _graph_planned(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.plan = data["plan"]
    for task in data["plan"].get("tasks") or ():
        state.tasks.setdefault(task["id"], TaskState())


def _task_started(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    task = state.tasks.setdefault(data["task"], TaskState())
    task.status, task.run_id, task.attempts = "running", data["run_id"], data["attempt"]
    task.budget_usd, task.error, task.objective = data.get("budget_usd"), None, data["objective"]
    task.runs.append(data["run_id"])
    state.children.append(data["run_id"])


def _task_completed(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    task = state.tasks.setdefault(data["task"], TaskState())
    task.status, task.report, task.budget_usd = "completed", data["report"], None
    _task_spent(state, event, task, data)


def _task_failed(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    task = state.tasks.setdefault(data["task"], TaskState())
    task.status = "pending" if data["retrying"] else "failed"
    task.error, task.budget_usd = data["error"], None
    _task_spent(state, event, task, data)


def _task_spent(state: SessionState, event: Event, task: TaskState, data: dict[str, Any]) -> None:
    cost = data.get("cost_usd") or 0.0
    task.cost_usd += cost
    state.children_reported.add(data["run_id"])
    if event.run_id == state.run_id:  # like agent.reported: it counts against the graph
        state.delegated_usd += cost


def _task_retried(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    task = state.tasks.setdefault(data["task"], TaskState())
    task.status, task.attempts = "pending", 0


def _task_skipped(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    task = state.tasks.setdefault(data["task"], TaskState())
    task.status, task.error = "skipped", data["reason"]


def _ui_component(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    if data.get("id") is None:
        return  # a version 1 component: nothing can name it
    state.components[data["id"]] = data["component"]
    if data["component"] == "options":
        state.cards[data["id"]] = data["props"]


def _ui_asked(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    component_id = data["component_id"]
    props = state.cards.get(component_id, {})
    listed = props.get("choices")
    choices = (
        tuple(str(c["id"]) for c in listed or () if isinstance(c, dict) and "id" in c)
        if isinstance(listed, list)
        else ()
    )
    state.pending_choices[component_id] = PendingChoice(
        component_id, data["call_id"], choices, data.get("expires_at"), props
    )
    state.choice_calls[data["call_id"]] = component_id


def _ui_chosen(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    state.pending_choices.pop(data["component_id"], None)
    made = ChoiceMade(data["choice"], data["by"], data.get("reason"))
    state.choices_made[data["component_id"]] = made


_Handler = Callable[[SessionState, Event, dict[str, Any]], None]


def _on_live(handler: Callable[[LiveState, Event, dict[str, Any]], None]) -> _Handler:
    """A live-world handler, folding into the state's ``live`` part."""
    return lambda state, event, data: handler(state.live, event, data)


_HANDLERS: dict[str, _Handler] = {
    "run.created": _run_created,
    "run.forked": _run_forked,
    "run.paused": _run_paused,
    "run.resumed": _run_resumed,
    "budget.exceeded": _budget_exceeded,
    "run.completed": _run_completed,
    "run.failed": _run_failed,
    "turn.started": _turn_started,
    "turn.ended": _turn_ended,
    "model.requested": _model_requested,
    "model.responded": _model_responded,
    "model.failed": _model_failed,
    "model.rejected": model_rejected,
    "mcp.sampled": _mcp_sampled,
    "context.compacted": _context_compacted,
    "tool.started": _tool_started,
    "tool.completed": _tool_completed,
    "tool.interrupted": _tool_interrupted,
    "file.changed": _file_changed,
    "approval.requested": _approval_requested,
    "approval.decided": _approval_decided,
    "gate.decided": _gate_decided,
    "steer.received": _steer_received,
    "agent.spawned": _agent_spawned,
    "agent.reported": _agent_reported,
    "graph.planned": _graph_planned,
    "task.started": _task_started,
    "task.completed": _task_completed,
    "task.failed": _task_failed,
    "task.retried": _task_retried,
    "task.skipped": _task_skipped,
    "ui.component": _ui_component,
    "ui.asked": _ui_asked,
    "ui.chosen": _ui_chosen,
    **_STRATEGY_HANDLERS,
    **{kind: _on_live(handler) for kind, handler in LIVE_HANDLERS.items()},
}
