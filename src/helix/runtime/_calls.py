"""Taking a turn's tool calls to their results: gates, approvals, then execution.

Calls are handled in the order the model asked for them, and their results are
recorded in that order; consecutive calls of tools that may run concurrently (the
read-only ones) run together. Each step is written so that a resumed run picks up
where the log says it stood: a call already decided is not gated again, an approval
already requested is not requested again, and a call that was running when the process
died is recorded as interrupted, then re-run only if its tool is idempotent. Running
what the gates allowed, and turning results into events, is ``_execution.py``'s.
"""

from __future__ import annotations

from pydantic import BaseModel

from helix.errors import InvalidToolArgumentsError
from helix.gates import BudgetState, GateCall, GateContext
from helix.kernel.events import (
    GateDecided,
    MistakeKind,
    NewEvent,
    RunPaused,
    ToolCompleted,
    ToolInterrupted,
    ToolRequested,
    ToolStarted,
    parse_iso,
)
from helix.kernel.session import CallRequest, SessionState
from helix.tools import ToolDef

from ._asking import DEADLINE_PASSED, answered_in_time, ask, settled, system_decision
from ._clock import Clock
from ._execution import CallExecutor
from ._forced import forced_tool
from ._live_world import RunLiveWorld
from ._mistakes import fault_of, rejected_call
from ._session import LiveSession, halted
from ._setup import RunSetup


class CallRunner:
    """Runs the pending calls of one turn."""

    def __init__(self, setup: RunSetup, session: LiveSession) -> None:
        self.setup = setup
        self.session = session
        self.executor = CallExecutor(setup, session)
        if setup.blueprint.sandbox.live:
            egress = self.executor.egress.hook("world")  # the box's, for as long as it lives
            self.executor.live = RunLiveWorld(setup, session, egress)

    @property
    def state(self) -> SessionState:
        return self.session.state

    async def recover_interrupted(self, turn: int) -> None:
        """Record calls that were running when the last process died, and settle them."""
        for call_id in sorted(self.state.running_calls):
            call = self.state.pending_calls.get(call_id)
            interrupted = NewEvent(
                ToolInterrupted(call_id=call_id, reason="the process running it stopped"),
                turn=turn,
            )
            closed = self.executor.egress.left_open(call_id, turn)  # its connections died with it
            tool = self._tool(call.name) if call is not None else None
            if call is not None and tool is not None and tool.idempotent:
                started = NewEvent(self._started(call_id, tool), turn=turn)
                await self.session.append([*closed, interrupted, started])
                await self.run_started([(call, tool)], turn)
            else:
                note = (
                    "interrupted: the process running this call stopped before it finished;"
                    " it was not run again because it may not be safe to repeat. Check the"
                    " world's state before trying again."
                )
                completed = NewEvent(
                    ToolCompleted(call_id=call_id, ok=False, output=note, duration_ms=0),
                    turn=turn,
                )
                await self.session.append([*closed, interrupted, completed])

    async def run_pending(self, turn: int) -> None:
        """Take every pending call of the turn to a recorded result (or to a pause or cancel)."""
        while self.state.pending_calls and not halted(self.state):
            call = next(iter(self.state.pending_calls.values()))
            if call.id in self.state.denied_calls:
                reason = self.state.denied_calls[call.id]
                await self._complete(call.id, False, reason, turn)
            elif call.id in self.state.approved_calls:
                tool = self._tool(call.name)
                assert tool is not None  # the gates allowed it, so it exists
                started = NewEvent(self._started(call.id, tool), turn=turn)
                if await self.session.append([started], unless=halted):
                    await self.run_started([(call, tool)], turn)
            elif call.id in self.state.approval_calls:
                await self._await_decision(call.id, turn)
            else:
                await self._gate_and_run(turn)

    async def _gate_and_run(self, turn: int) -> None:
        """Gate the next call (and concurrent calls after it), then run what is allowed."""
        events, group = await self.plan(list(self.state.pending_calls.values()), turn)
        if await self.session.append(events, unless=halted):  # paused meanwhile: start nothing
            await self.run_started(group, turn)

    async def plan(
        self, calls: list[CallRequest], turn: int
    ) -> tuple[list[NewEvent], list[tuple[CallRequest, ToolDef]]]:
        """Gate the first of ``calls`` (and the concurrent ones after it).

        Returns the events to append and the calls they start, for ``run_started``. The
        loop appends them with the model's reply, saving an append per turn.
        """
        group: list[tuple[CallRequest, ToolDef]] = []
        batch: list[NewEvent] = []
        for call in calls:
            if call.id in self.state.approval_calls or call.id in self.state.denied_calls:
                break
            tool = self._tool(call.name)
            if group and (tool is None or not tool.concurrent):
                break
            verdict, gate_events, fault = await self._gate(call, tool, turn)
            if verdict != "allow" or tool is None:
                if group:
                    break  # run the allowed group first; this call is gated again after
                if verdict == "deny":
                    self.executor.parsed.pop(call.id, None)  # it will never run
                return self._refusal(call, verdict, gate_events, turn, fault), []
            batch += gate_events
            batch.append(NewEvent(self._started(call.id, tool), turn=turn))
            group.append((call, tool))
            if not tool.concurrent:
                break
        return batch, group

    async def _gate(
        self, call: CallRequest, tool: ToolDef | None, turn: int
    ) -> tuple[str, list[NewEvent], MistakeKind | None]:
        """The pipeline's verdict on ``call``, its events, and the model's mistake in it."""
        setup = self.setup
        budget = self.state.budget
        spent = self.state.spent_usd
        forced = forced_tool(setup.blueprint.tool_choice, self.state)
        context = GateContext(
            run_id=setup.run_id,
            world=setup.world,
            policy=setup.policy,
            approvals=setup.blueprint.approvals.rules,
            egress=setup.egress,
            budget=BudgetState(
                cap_usd=budget.usd if budget else None,
                spent_usd=spent,
                max_seconds=budget.max_seconds if budget else None,
                elapsed_s=elapsed_s(self.state, setup.clock),
            ),
            attended=setup.attended,
            live=setup.blueprint.sandbox.live,
            forced_tool=forced,
        )
        parsed = self._parse(call, tool)
        gated = GateCall(call.id, call.name, call.args, tool, parsed, call.malformed)
        outcome = await setup.pipeline.evaluate(gated, context)
        requested = ToolRequested(
            call_id=call.id,
            name=call.name,
            args=call.args,
            malformed=call.malformed,
            raw_args=call.raw_args,
        )
        events = [NewEvent(requested, "agent", turn)]
        events += [
            NewEvent(
                GateDecided(call_id=call.id, gate=gate, verdict=d.verdict, reason=d.reason),
                turn=turn,
            )
            for gate, d in outcome.decisions
        ]
        return outcome.verdict, events, fault_of(call, tool, parsed is not None, forced)

    def _refusal(
        self,
        call: CallRequest,
        verdict: str,
        gate_events: list[NewEvent],
        turn: int,
        fault: MistakeKind | None = None,
    ) -> list[NewEvent]:
        """The events that settle a call the gates did not simply allow.

        A call denied for the model's mistake (``fault``) is followed by its
        ``model.rejected``, which counts it (runtime/_mistakes.py).
        """
        if verdict == "deny":
            deny = next(
                e.payload for e in reversed(gate_events) if isinstance(e.payload, GateDecided)
            )
            assert isinstance(deny, GateDecided)
            reason = f"denied by the {deny.gate} gate: {deny.reason}"
            result = ToolCompleted(call_id=call.id, ok=False, output=reason, duration_ms=0)
            events = [*gate_events, NewEvent(result, turn=turn)]
            if fault is not None:
                blueprint = self.setup.blueprint
                events.append(rejected_call(self.state, blueprint, call, fault, deny.reason, turn))
            return events
        if not self.setup.attended and not self.setup.auto_approve:
            note = "needs a person's approval, and nobody attends this run"
            refused = ToolCompleted(
                call_id=call.id, ok=False, output=f"denied: {note}", duration_ms=0
            )
            return [*gate_events, NewEvent(refused, turn=turn)]
        question = ask(self.setup, call.id, call.name, call.args, turn)
        return [*gate_events, *question.events]

    async def _await_decision(self, call_id: str, turn: int) -> None:
        """Wait for a person's decision, a cancel, or the deadline (which denies)."""
        request_id = self.state.approval_calls[call_id]
        if await answered_in_time(self.setup, self.session, request_id):
            return
        events = [system_decision(request_id, "deny", DEADLINE_PASSED, turn)]
        if self.state.status == "paused":  # a decision sets the status to running: re-pause
            events.append(NewEvent(RunPaused(reason="user"), turn=turn))
        await self.session.append(events, unless=settled(request_id))

    async def run_started(self, group: list[tuple[CallRequest, ToolDef]], turn: int) -> None:
        """Run started calls (together), then record their results in call order."""
        results = await self.run_to_results(group, turn)
        if results:  # none when the gates started nothing (a refusal or a question)
            await self.session.append(results)

    async def run_to_results(
        self, group: list[tuple[CallRequest, ToolDef]], turn: int
    ) -> list[NewEvent]:
        """Run started calls (together); their results' events, in call order, unrecorded.

        The loop records the last results of a turn in the same append as the turn's
        end and the next model request: one commit where there would be two.
        """
        return await self.executor.results(group, turn)

    async def _complete(self, call_id: str, ok: bool, output: str, turn: int) -> None:
        done = ToolCompleted(call_id=call_id, ok=ok, output=output, duration_ms=0)
        await self.session.append([NewEvent(done, turn=turn)])

    def _parse(self, call: CallRequest, tool: ToolDef | None) -> BaseModel | None:
        """The call's arguments validated, kept for its execution (``None`` if invalid).

        Validated once: the arguments gate rules on the result, and the tool runs with
        it. Invalid arguments are left to that gate, which says what is wrong.
        """
        if tool is None or call.malformed is not None:
            return None  # a malformed call's empty arguments are not what the model meant
        try:
            parsed = tool.validate(call.args)
        except InvalidToolArgumentsError:
            return None
        self.executor.parsed[call.id] = parsed
        return parsed

    def _tool(self, name: str) -> ToolDef | None:
        return self.setup.tools.get(name) if name in self.setup.tools else None

    def _started(self, call_id: str, tool: ToolDef) -> ToolStarted:
        if not tool.facets.sandboxed:
            return ToolStarted(call_id=call_id, sandbox="none", origin=tool.origin)
        sandbox = self.setup.sandbox
        reason = sandbox.reason or None
        return ToolStarted(call_id=call_id, sandbox=sandbox.tier, reason=reason, origin=tool.origin)


def elapsed_s(state: SessionState, clock: Clock) -> float:
    """Seconds since the run was created, on ``clock`` (its time budget counts from there)."""
    if state.started_at is None:
        return 0.0
    return max(0.0, clock.now() - parse_iso(state.started_at))
