"""Child runs: what ``delegate`` does when a run hands a sub-task to another agent.

A child is an ordinary run: its own log, supervised by the engine, resumable, forkable.
It works in its parent's world, so its changes land in the parent's next snapshot, and
it can never do more than its parent: its tools and ceiling are the intersection of
both blueprints, its approval rules, sandbox and egress are the parent's, and its budget
is at most what the parent has left (what it spends is then counted against the parent).

The parent's log records the child's id *before* the child is created, so a ``delegate``
call re-run after a crash (it is declared idempotent) finds its child again instead of
starting a second one; a child already reported on is not counted twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from helix.errors import BlueprintError, ConfigError, HelixError, RunNotFoundError, RunStateError
from helix.kernel.events import TERMINAL_EVENTS, AgentReported, AgentSpawned, NewEvent
from helix.kernel.log import new_run_id
from helix.kernel.session import SessionState, replay_run
from helix.providers import ModelSpec
from helix.tools import Delegation

from ._blueprint import Blueprint
from ._control import cancel
from ._roles import worker_model
from ._session import LiveSession
from ._setup import RunSetup

if TYPE_CHECKING:
    from ._engine import Engine

LEASE_SLACK_S = 0.05
"""How long after a lease could have lapsed a waiting driver tries it again."""
MAX_DEPTH = 3
"""How deep delegation may nest: a child's child's child may not delegate again."""


class ChildRuns:
    """The runtime's ``Delegator`` for one run: creates, drives and reports its children."""

    def __init__(self, engine: Engine, setup: RunSetup, session: LiveSession) -> None:
        self.engine, self.setup, self.session = engine, setup, session

    async def delegate(self, objective: str, blueprint: str | None, *, call_id: str) -> Delegation:
        """Run the call's child to its end (starting it unless it exists) and report it."""
        child_id, final, report = await run_child(
            self.engine,
            self.setup,
            self.session,
            call_id,
            objective,
            lambda: self._child_blueprint(blueprint),
            what="child",
        )
        return Delegation(child_id, final.status, report)

    def _child_blueprint(self, path: str | None) -> Blueprint:
        """The child's settings: its own blueprint's, narrowed to what the parent may do."""
        if self.setup.depth + 1 > MAX_DEPTH:
            raise ConfigError(
                f"delegation is already nested {MAX_DEPTH} deep: do this sub-task yourself"
            )
        own = self._load(path) if path is not None else self.setup.blueprint
        left = usd_left(self.session.state)
        model = own.role_model("main") if path is not None else None
        return narrowed(self.setup, own, tools=own.tools, usd_left=left, model=model)

    def _load(self, path: str) -> Blueprint:
        return load_in_world(self.setup.world, path, "the child's blueprint")


async def run_child(
    engine: Engine,
    setup: RunSetup,
    session: LiveSession,
    call_id: str,
    objective: str,
    settings: Callable[[], Blueprint],
    *,
    what: str,
) -> tuple[str, SessionState, str]:
    """Run the child of a tool call to its end, starting it unless the log names one.

    The child's id is logged (``agent.spawned``, with ``call_id``) before the child is
    created, so the call re-run after a crash finds it again; ``settings`` are made (and
    may refuse the call) before anything is logged. A cancelled parent cancels its
    child. Returns the child's id, its final state and its report, logged once
    (``agent.reported``).
    """
    child_id = session.state.children_by_call.get(call_id)
    made: Blueprint | Callable[[], Blueprint] = settings
    if child_id is None:
        made = settings()  # refused before anything is logged
        child_id = new_run_id()
        spawned = AgentSpawned(child_run_id=child_id, objective=objective, call_id=call_id)
        await session.append([NewEvent(spawned, turn=session.state.turn)])
    await create_child(engine, setup, child_id, objective, made, what=what)
    try:
        final = await settle(engine, child_id, stop_when_paused=True)
    except asyncio.CancelledError:  # the parent was cancelled: so is the child
        await asyncio.shield(cancel_quietly(engine, child_id))
        raise
    report = child_report(final)
    if child_id not in session.state.children_reported:
        reported = AgentReported(
            child_run_id=child_id, report=report, status=final.status, cost_usd=final.spent_usd
        )
        await session.append([NewEvent(reported, turn=session.state.turn)])
    return child_id, final, report


def usd_left(state: SessionState) -> float | None:
    """What a run may still spend under its USD cap (``None``: no cap): its children's cap."""
    cap = state.budget.usd if state.budget is not None else None
    return None if cap is None else max(0.0, cap - state.spent_usd)


async def create_child(
    engine: Engine,
    setup: RunSetup,
    child_id: str,
    objective: str,
    settings: Blueprint | Callable[[], Blueprint],
    *,
    what: str,
) -> None:
    """Create a child run the parent's log names (``child_id``), unless it exists.

    A log is data (it may have been imported): an existing run it names must be a child
    the parent could have made, in its workspace and its world, or it is not driven
    (``ConfigError``). ``settings``: the child's (or how to make them, if it is new).
    """
    try:
        record = await engine.store.get_run(child_id)
    except RunNotFoundError:
        pass  # logged as started, but the process died before creating it
    else:
        if record.workspace != setup.workspace or record.world != str(setup.world):
            raise ConfigError(
                f"the log names run {child_id} as this call's {what}, but that run is not"
                " one of this run's children (another workspace or world): not touched"
            )
        return
    await engine.create(
        objective,
        blueprint=settings if isinstance(settings, Blueprint) else settings(),
        world=setup.world,
        auto_approve=setup.auto_approve,
        attended=setup.attended,
        workspace=setup.workspace,
        run_id=child_id,
        depth=setup.depth + 1,
        role="worker",
    )


def load_in_world(world: Path, path: str, what: str) -> Blueprint:
    """A blueprint file in ``world`` (``BlueprintError`` for one outside it, via a link too)."""
    target = (world / path).resolve()
    if not target.is_relative_to(world):
        raise BlueprintError(f"{what} {path!r} is outside the world")
    return Blueprint.load(target)


def narrowed(
    setup: RunSetup,
    own: Blueprint,
    *,
    tools: tuple[str, ...] | None,
    usd_left: float | None,
    model: ModelSpec | None,
) -> Blueprint:
    """A child's settings: ``own``, narrowed to what the run of ``setup`` may do.

    Its tools (``tools``, else all the parent's) must be the parent's; its ceiling is the
    intersection of both; approvals and sandbox are the parent's; its USD budget is at
    most ``usd_left``; its model is its own (``model``: the one its delegation, task or
    blueprint file names), else the parent's ``worker`` role's, else the parent's.
    """
    parent = setup.blueprint
    offered = setup.tools.names
    asked = tools if tools is not None else offered
    beyond = [name for name in asked if name not in offered]
    if beyond:
        raise BlueprintError(
            f"the child's blueprint asks for tools this run does not have: {', '.join(beyond)}"
        )
    budget = own.budget
    if usd_left is not None:
        usd = usd_left if budget.usd is None else min(usd_left, budget.usd)
        budget = budget.model_copy(update={"usd": usd})
    return own.model_copy(
        update={
            "model": worker_model(parent, model),
            "roles": {role: spec for role, spec in own.roles.items() if role != "main"},
            "tools": tuple(asked),
            "policy": setup.policy.intersect(own.policy),
            "approvals": parent.approvals,
            "sandbox": parent.sandbox,
            "budget": budget,
            "graph": None,
        }
    )


async def settle(engine: Engine, child_id: str, *, stop_when_paused: bool) -> SessionState:
    """Drive a child run here (or wait for it, if another driver has it) until it ends.

    ``stop_when_paused``: a child that pauses (at its budget, or by a person) is settled
    too: its parent is told and the child can be resumed on its own (``delegate``).
    Otherwise a paused child is waited on until someone resumes it and it ends (a
    graph's task).
    """
    store = engine.store
    ended = asyncio.Event()
    async with asyncio.TaskGroup() as group:
        driver = group.create_task(_drive_or_await(engine, child_id, ended))
        async with store.subscribe(child_id) as events:
            async for event in events:
                if event.type in TERMINAL_EVENTS:
                    break
                paused = stop_when_paused and event.type == "run.paused"
                if paused and (await replay_run(store, child_id)).status == "paused":
                    driver.cancel()
                    break
        ended.set()  # a driver waiting for another's lease stops; one driving ends itself
    return await replay_run(store, child_id)


async def _drive_or_await(engine: Engine, child_id: str, ended: asyncio.Event) -> None:
    """Drive the child here; while another driver has it, ``settle`` waits on its log.

    Another driver: a server resuming every unfinished run when it starts, say. Its
    lease is tried again when it could have lapsed, so a driver that stopped without
    releasing it (cancelled while taking it, frozen, partitioned) holds the child up
    for one lease's time at most. A child that is paused when this starts is not
    driven (whoever resumes it drives it).
    """
    while not ended.is_set():
        try:
            await engine.drive(child_id)
            return
        except RunStateError:  # held by another driver (or lost to one)
            pass
        lease = await engine.store.get_lease(child_id)
        now = engine.clock.now()
        lapse = engine.lease_ttl_s if lease is None else max(0.0, lease.expires_at - now)
        async with asyncio.TaskGroup() as waits:
            sleeper = waits.create_task(engine.clock.sleep(lapse + LEASE_SLACK_S))
            waiter = waits.create_task(ended.wait())
            await asyncio.wait((sleeper, waiter), return_when=asyncio.FIRST_COMPLETED)
            sleeper.cancel()
            waiter.cancel()


def child_report(final: SessionState) -> str:
    """What a child's parent is told of how it ended (``delegate``'s and ``plan``'s report)."""
    if final.status == "completed":
        return final.summary or "(no summary)"
    if final.status == "failed":
        return final.error or "(no error given)"
    if final.status == "paused":
        raise_it = {"max_turns": " --max-turns N", "max_seconds": " --max-seconds S"}
        flags = raise_it.get(final.pause_reason or "", "")
        return (
            f"the child run paused ({final.pause_reason or 'no reason given'}); a person can"
            f" resume it (helix resume {final.run_id}{flags}), or do the sub-task another way"
        )
    return f"the child run ended {final.status}"


async def cancel_quietly(engine: Engine, child_id: str) -> None:
    """Cancel a child whose parent was cancelled (unless it has ended meanwhile)."""
    with contextlib.suppress(HelixError):  # it finished meanwhile: nothing to stop
        await cancel(engine.store, child_id, by="system")
