"""The run loop: one turn after another, each step decided by the folded log.

The loop keeps no state of its own between steps: it looks at the session (folded from
the log, kept current with what others append) and takes the next step — start a turn,
call the model, take the calls to their results, end the turn, complete. A crash
therefore loses nothing: a new incarnation replays the log and takes the same next
step. What was completed (a model reply, a tool result) is never done again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from helix._util import close_fully
from helix.errors import ModelCallError
from helix.kernel.events import (
    TERMINAL_STATUSES,
    ModelRequested,
    NewEvent,
    RunCompleted,
    RunFailed,
    RunPaused,
    RunResumed,
    RunStarted,
    SteerReceived,
    ToolCompleted,
    TurnEnded,
    TurnStarted,
)
from helix.kernel.session import CallRequest, SessionState
from helix.providers import (
    ModelAdapter,
    ModelFailure,
    ModelRequest,
    ModelResponse,
    build_model,
    estimate_tokens,
    failed_event,
    responded_event,
)

from ._calls import CallRunner, elapsed_s
from ._clock import scheduling_point
from ._context import Compactor
from ._live_world import RunLiveWorld
from ._mistakes import mistakes_pause, rejected_reply
from ._request import RequestBuilder, planning, projected_cost, tool_specs
from ._roles import RoleModels
from ._session import LiveSession, halted
from ._setup import RunSetup
from ._sources import RunSources
from ._spending import Hold, reserve_call, run_cap_events
from ._strategies import PlanThenAct
from ._streaming import DeltaSink, streamed_reply
from ._until import Until, holds
from ._world import TurnSnapshots

TERMINAL = TERMINAL_STATUSES
"""Statuses a run never leaves (the kernel's, re-exported for the runtime's users)."""


class RunLoop:
    """Drives one run; ``run()`` is one incarnation, which a supervisor may restart."""

    def __init__(self, setup: RunSetup, model: ModelAdapter | None = None) -> None:
        self.setup = setup
        self._given_model = model
        self._session: LiveSession | None = None
        self._sources = RunSources(setup)
        self._requests = RequestBuilder(setup.blueprint, tool_specs(setup.tools))
        self._results: list[NewEvent] = []
        """The turn's last tool results, recorded with the turn's end (see ``_step``)."""
        self._world = TurnSnapshots(setup)
        self._stops_between_turns = False
        """Close a turn in a step of its own (a caller may stop there: ``until``, steps)."""
        roles = setup.blueprint.roles
        self._roles = RoleModels(
            roles, on_failure=self._model_failed, env=setup.env, scripts=setup.scripts
        )
        self._context = Compactor(setup.blueprint.context)
        self._live: RunLiveWorld | None = None
        """This incarnation's live world (``sandbox.live``), once its calls are set up."""

    async def run(self, until: Until | None = None, *, steps: int | None = None) -> SessionState:
        """Replay the log and drive the run until it ends (or ``until(state)`` holds).

        A run that pauses is waited on (a resume appended by anyone continues it) unless
        ``until`` says to stop there. Every step of the loop is a scheduling point: a
        model and tools that never await still let other tasks run, and a cancel in.
        ``steps`` stops after that many steps of the loop (what replaying takes first,
        ``run.started`` or ``run.resumed``, is not one).
        """
        self._results = []  # a restarted incarnation trusts only the log
        self._stops_between_turns = until is not None or steps is not None
        faults = self.setup.faults
        session = await LiveSession.load(
            self.setup.store,
            self.setup.run_id,
            on_append=faults.after if faults.armed else None,
            clock=self.setup.clock,
            lease=self.setup.lease,
        )
        self._session = session
        self._world.reset()
        session.on_fold = self._world.observe
        model = self._given_model or build_model(
            self._model_spec(session.state),
            on_failure=self._model_failed,
            env=self.setup.env,
            scripts=self.setup.scripts,
        )
        try:
            async with asyncio.TaskGroup() as group:
                watcher = group.create_task(session.watch())
                try:
                    if self.setup.sources and session.state.status not in TERMINAL:
                        await self._sources.open(session, model)
                        self._requests.offer(tool_specs(self.setup.tools))
                    if session.state.status not in TERMINAL:  # its tools known: can it force?
                        self._requests.check(session.state)
                    await self._drive(session, model, until, steps)
                finally:
                    watcher.cancel()
        finally:
            try:
                await self._settle_live(session.state)
                await self._sources.close()
                self._world.close()
            finally:
                await self._roles.aclose()
                if self._given_model is None:  # its connections, even if cancelled again
                    await close_fully(model.aclose())
        return session.state

    async def _drive(
        self,
        session: LiveSession,
        model: ModelAdapter,
        until: Until | None,
        steps: int | None,
    ) -> None:
        state = session.state
        if state.status in TERMINAL:
            return
        if state.status == "queued":
            await session.append([NewEvent(RunStarted()), *await self._world.whole(state)])
        elif state.status != "paused":
            last = await session.store.event_at(session.run_id, state.head)
            resumed = [] if last is not None and last.type == "run.resumed" else [RunResumed()]
            # not resumed again if someone just did; the world is read either way
            events = [*map(NewEvent, resumed), *await self._world.whole(state)]
            if events:
                await session.append(events)
        calls = CallRunner(self.setup, session)
        self._live = calls.executor.live
        if session.state.running_calls:
            await calls.recover_interrupted(session.state.turn)
        taken = 0
        async with self._idle_checkpoints():
            while session.state.status not in TERMINAL:
                await scheduling_point()  # others run, a cancel gets in
                if until is not None and holds(until, session.state):
                    break
                if steps is not None and (taken >= steps or session.state.status == "paused"):
                    break
                await self._step(session, model, calls)
                taken += 1
        if self._results:  # a call cut short by a cancel still gets its result
            results, self._results = self._results, []
            await session.append(results)

    async def _step(self, session: LiveSession, model: ModelAdapter, calls: CallRunner) -> None:
        """Take the one step the folded state calls for."""
        state = session.state
        if self._results:
            results, self._results = self._results, []
            if halted(state):
                await session.append(results)
            else:
                await self._next(session, model, calls, await self._turn_end(state, results))
        elif state.status == "paused":
            if self._live is not None:  # frozen (or stopped) while nobody drives it
                await self._live.suspend()
            await session.wait_until(lambda s: s.status != "paused", None)
            self._world.reset()  # a rollback may have changed the world meanwhile
        elif state.in_turn and state.pending_calls:
            await calls.run_pending(state.turn)
        elif state.in_turn and not state.turn_has_reply:
            await self._model_step(session, model, calls, [], state.turn)
        elif state.in_turn:
            await self._next(session, model, calls, await self._turn_end(state, []))
        else:
            await self._next(session, model, calls, [])

    @contextlib.asynccontextmanager
    async def _idle_checkpoints(self) -> AsyncIterator[None]:
        """While inside: a live world idle for ``sandbox.checkpoint_idle_min`` is frozen."""
        minutes = self.setup.blueprint.sandbox.checkpoint_idle_min
        if minutes is None or self._live is None:
            yield
            return
        async with asyncio.TaskGroup() as group:
            watch = group.create_task(self._live.watch_idle(minutes))
            try:
                yield
            finally:
                watch.cancel()

    async def _settle_live(self, state: SessionState) -> None:
        """As this incarnation stops: a paused run's world is frozen, any other's killed."""
        live, self._live = self._live, None
        if live is None or not live.is_open:
            return
        if state.status == "paused":
            await live.suspend()
        else:
            await live.end(interrupted=state.status not in TERMINAL)

    async def _turn_end(self, state: SessionState, results: list[NewEvent]) -> list[NewEvent]:
        """The events that close the turn, in the order they must be logged.

        Its last results if not yet recorded, the world's snapshot, then ``turn.ended``:
        a fork at that boundary must see the turn's snapshot.
        """
        snapshot = await self._world.after_turn(state, results)
        return [*results, *snapshot, NewEvent(TurnEnded(turn=state.turn), turn=state.turn)]

    async def _next(
        self,
        session: LiveSession,
        model: ModelAdapter,
        calls: CallRunner,
        before: list[NewEvent],
    ) -> None:
        """Between turns: complete, pause at a limit, or start the next turn.

        ``before`` (the ``turn.ended`` of the turn just done) goes in the same append:
        one commit where there would be two; unless the caller may stop between turns,
        which then is a step of its own.
        """
        state = session.state
        if (act := self._act_after_plan(state)) is not None:  # plan_then_act: now act
            told = NewEvent(SteerReceived(message=act), turn=state.turn)
            await session.append([*before, told])
        elif state.last_reply_had_calls is False and not state.steering:
            replies = [m.text for m in state.messages if m.role == "assistant"]
            summary = RunCompleted(summary=replies[-1] if replies else "")
            await session.append([*before, NewEvent(summary, turn=state.turn)])
        elif (paused := mistakes_pause(state, self.setup.blueprint)) is not None:
            await session.append([*before, NewEvent(paused, turn=state.turn)])
        elif (reason := self._limit_reached(state)) is not None:
            await session.append([*before, NewEvent(RunPaused(reason=reason), turn=state.turn)])
        elif before and self._stops_between_turns:
            await session.append(before)  # the next step starts the next turn
        elif self._context.due(state, before):  # older turns summarised, then the next turn
            await self._compact(session, model, before)
        else:
            if self._sources.refresh():  # a source's tools changed: offered from this turn on
                self._requests.offer(tool_specs(self.setup.tools))
            turn = state.turn + 1
            started = NewEvent(TurnStarted(turn=turn), turn=turn)
            await self._model_step(session, model, calls, [*before, started], turn)

    def _act_after_plan(self, state: SessionState) -> str | None:
        """What a ``plan_then_act`` run is told once its planning turn wrote the plan."""
        strategy = self.setup.blueprint.strategy
        if not isinstance(strategy, PlanThenAct) or state.turn != 1 or state.steering:
            return None
        return strategy.act if state.last_reply_had_calls is False else None

    def _limit_reached(self, state: SessionState) -> str | None:
        budget = state.budget
        if budget is None:
            return None
        if budget.max_turns is not None and state.turn >= budget.max_turns:
            return "max_turns"
        seconds = budget.max_seconds
        if seconds is not None and elapsed_s(state, self.setup.clock) >= seconds:
            return "max_seconds"
        return None

    async def _model_step(
        self,
        session: LiveSession,
        model: ModelAdapter,
        calls: CallRunner,
        before: list[NewEvent],
        turn: int,
    ) -> None:
        """Call the turn's role's model (unless a budget says pause), and start on its calls.

        The call is reserved first against the run's own caps and the cumulative budgets
        that apply to it (``RunSetup.spending``); the reply settles the reservation,
        anything else releases it.
        """
        role = self._role(session.state)
        if role != self.setup.role:  # the run's own turns: its model (a child's, a worker's)
            model = self._roles.get(role, model)
        held = await self._reserve(session.state, model, before)
        if not isinstance(held, Hold):
            await session.append([*before, *held])
            return
        try:
            await self._call(session, model, calls, before, turn, held, role)
        finally:
            await held.done()

    async def _reserve(
        self, state: SessionState, model: ModelAdapter, before: list[NewEvent]
    ) -> Hold | list[NewEvent]:
        """A hold on what ``model``'s next call could cost, or the events that pause the run."""
        usd, tokens = self._projection(state, model, before)
        over = run_cap_events(state, usd, tokens)
        return over or await reserve_call(self.setup, state, usd, tokens)

    async def _call(
        self,
        session: LiveSession,
        model: ModelAdapter,
        calls: CallRunner,
        before: list[NewEvent],
        turn: int,
        held: Hold,
        role: str,
    ) -> None:
        asked_for = ModelRequested(provider=model.provider, model=model.model, role=role)
        requested = NewEvent(asked_for, turn=turn)
        if not await session.append([*before, requested], unless=halted):
            if before:
                await session.append(before)
            return
        request = self._requests.build(session.state)
        sink = self.setup.deltas
        streaming = (sink, turn) if sink is not None and sink.watching(session.run_id) else None
        response = await _ask_unless_cancelled(session, model, request, streaming)
        if response is None:
            return  # cancelled while the model worked: its reply is not waited for
        if isinstance(response, ModelCallError):
            await session.append([NewEvent(RunFailed(error=str(response)), turn=turn)])
            return
        answered = getattr(model, "answered_by", None) or model
        cost = self.setup.prices.cost(answered.provider, answered.model, response.usage)
        await held.settle(cost, response.usage.input_tokens + response.usage.output_tokens)
        said = responded_event(response, cost, role=role, answered_by=answered)
        reply = NewEvent(said, actor="agent", turn=turn)
        # The first calls' gates and start go in the reply's append: one commit, not two.
        asked = [
            CallRequest(c.id, c.name, c.args, c.malformed, c.raw_args) for c in response.tool_calls
        ]
        first, group = await calls.plan(asked, turn) if asked else ([], [])
        if first and await session.append([reply, *first], unless=halted):
            if len(group) == len(asked):  # the turn's last calls: record them with its end
                self._results = await calls.run_to_results(group, turn)
            elif group:
                await calls.run_started(group, turn)
            return
        # An empty reply, or text where a call was forced, is the model's mistake: it is
        # told, and the run goes on.
        blueprint, choice = self.setup.blueprint, request.tool_choice
        wrong = rejected_reply(session.state, blueprint, response, turn, choice)
        await session.append([reply, *wrong])

    def _role(self, state: SessionState) -> str:
        """The role of the next turn's call: ``planner`` for a plan's first, else the run's."""
        if isinstance(self.setup.blueprint.strategy, PlanThenAct) and planning(state):
            return "planner"
        return self.setup.role

    async def _compact(
        self, session: LiveSession, model: ModelAdapter, before: list[NewEvent]
    ) -> None:
        """Have the ``summary`` role's model summarise the older turns; log it.

        The turn just ended is logged first. A call that could pass a budget pauses
        the run instead; one that fails leaves the conversation whole until another
        turn has ended (``model.failed`` says why).
        """
        if before:
            await session.append(before)
        state = session.state
        summarizer = self._roles.get("summary", model)
        held = await self._reserve(state, summarizer, [])
        if not isinstance(held, Hold):
            await session.append(held)
            return
        try:
            upto, cut, request = self._context.request(state)
            response = await _ask_unless_cancelled(session, summarizer, request)
            if response is None:
                return
            if isinstance(response, ModelCallError):
                self._context.failed(state)
                return
            prices = self.setup.prices
            made = self._context.compacted(upto, cut, response, summarizer, prices, role="summary")
            await held.settle(made.cost_usd, made.usage.input_tokens + made.usage.output_tokens)
            await session.append([NewEvent(made, turn=state.turn)], unless=halted)
        finally:
            await held.done()

    def _projection(
        self, state: SessionState, model: ModelAdapter, before: list[NewEvent]
    ) -> tuple[float | None, int]:
        """What the next call could cost at most (``None``: no known price), and its tokens.

        The input so far (estimated) and the output at ``max_tokens``. ``before`` may hold
        tool results not yet folded into ``state``: they count as input too.
        """
        unfolded = [e.payload.output for e in before if isinstance(e.payload, ToolCompleted)]
        text = "".join(m.text for m in state.messages) + "".join(state.steering)
        text += "".join(unfolded)
        max_tokens = self.setup.blueprint.max_tokens
        usd = projected_cost(self.setup.prices, model, text, max_tokens)
        return usd, estimate_tokens(text) + max_tokens

    async def _model_failed(self, failure: ModelFailure) -> None:
        session = self._session
        if session is not None:
            event = NewEvent(failed_event(failure), turn=session.state.turn)
            await session.append([event])

    def _model_spec(self, state: SessionState) -> str | list[str]:
        spec = self.setup.blueprint.model
        if spec is None:
            return state.model
        return spec if isinstance(spec, str) else list(spec)


async def _ask_unless_cancelled(
    session: LiveSession,
    model: ModelAdapter,
    request: ModelRequest,
    streaming: tuple[DeltaSink, int] | None = None,
) -> ModelResponse | ModelCallError | None:
    """The model's reply (or its error); ``None`` if the run ended first (a cancel).

    ``streaming``: the sink and turn the reply's pieces are streamed to (else a request).
    """

    async def ask() -> ModelResponse | ModelCallError:
        try:
            if streaming is not None:
                sink, turn = streaming
                return await streamed_reply(model, request, sink, session.run_id, turn)
            return await model.request(request)
        except ModelCallError as error:
            return error

    _stopped, reply = await session.unless_stopped(ask())
    return reply
