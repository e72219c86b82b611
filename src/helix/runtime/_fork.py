"""Fork a run at one of its events with that event replaced (an edited tool result, say).

The log forks only at turn boundaries (``EventStore.fork``): a fork's history is its
parent's up to a ``turn.ended``, ``run.created`` or ``run.forked``, read in place. So a
fork that changes an event inside turn T is made in two parts:

1. an ordinary fork at the boundary before turn T (``fork_with_world``: its own world,
   materialised from the snapshot taken there);
2. appended to the fork's own log: turn T's events from the parent up to the replaced
   one (copies, new times), then the replacement.

Driving the fork then carries on from that state as from any log: the edited result
is what the model reads next. What is copied is history, not work: no model or tool
is called again, and the calls of turn T before the edit changed the parent's world,
not the fork's (which is as it was when turn T began). The parent's lifecycle and
world events of that stretch (started, resumed, paused, snapshots, restarts) are not
copied: they belong to the parent's process, the fork has its own.
"""

from __future__ import annotations

from helix.errors import ForkError
from helix.kernel.events import Event, NewEvent, Payload
from helix.kernel.log import RunRecord

from ._engine import Engine
from ._world_control import fork_with_world

NOT_COPIED = frozenset(
    {
        "run.started",
        "run.resumed",
        "run.paused",
        "budget.exceeded",
        "supervisor.restarted",
        "world.snapshotted",
        "world.file_skipped",
        "world.rolled_back",
        "world.kept",
    }
)
"""Events of the parent's stretch a replacing fork does not copy (they are its process's)."""

REPLACEABLE = frozenset({"model.responded", "tool.completed", "steer.received", "approval.decided"})
"""The events a fork may replace: what a model, a tool or a person said inside a turn."""


async def fork_replacing(
    engine: Engine,
    run_id: str,
    seq: int,
    replacement: Payload,
    *,
    model: str | None = None,
    actor: str = "system",
) -> RunRecord:
    """Fork ``run_id`` so that the event at ``seq`` reads ``replacement`` in the fork.

    ``replacement`` has the replaced event's type (and, for a tool result or an
    approval's answer, its ``call_id``/``request_id``): it is an edit, not an insertion. To add
    a message instead, fork at a turn with ``fork_with_world(…, message=…)``.
    ``ForkError`` for an event that cannot be replaced (not in ``REPLACEABLE``,
    another type, another call). Returns the fork's record; ``drive`` it to go on.
    """
    target = await engine.store.event_at(run_id, seq)
    if target is None:
        raise ForkError(f"run {run_id!r} has no event at seq {seq}")
    _check_replacement(target, replacement)
    turn = target.turn or 0
    if turn < 1:
        raise ForkError(f"the event at seq {seq} of run {run_id!r} belongs to no turn")
    fork = await fork_with_world(engine, run_id, turn - 1, model=model, actor=actor)
    boundary = fork.parent.seq if fork.parent is not None else 0
    stretch = await engine.store.read(run_id, after=boundary, to_seq=seq - 1)
    parse = engine.store.registry.parse
    copies = [
        NewEvent(parse(e.type, e.data), actor=e.actor, turn=e.turn)
        for e in stretch
        if e.type not in NOT_COPIED
    ]
    edited = NewEvent(replacement, actor=target.actor, turn=target.turn)
    await engine.store.append(fork.id, [*copies, edited], expected_seq=fork.next_seq)
    return await engine.store.get_run(fork.id)


def _check_replacement(target: Event, replacement: Payload) -> None:
    if target.type not in REPLACEABLE:
        kinds = ", ".join(sorted(REPLACEABLE))
        raise ForkError(
            f"the event at seq {target.seq} is {target.type}: a fork can replace only {kinds}"
        )
    if target.type != replacement.TYPE:
        raise ForkError(
            f"the event at seq {target.seq} is {target.type}: its replacement must be one"
            f" too, not {replacement.TYPE}"
        )
    for key in ("call_id", "request_id"):
        if key in target.data and getattr(replacement, key, None) != target.data[key]:
            raise ForkError(f"the replacement must keep the event's {key} ({target.data[key]!r})")
