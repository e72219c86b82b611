"""Policy replay: what a candidate policy would have decided on a run's logged calls.

Every ``tool.requested`` in the run's log is put through the real gate pipeline
(``GatePipeline.evaluate``) with the candidate's ceiling, approval rules, egress lists
and budget caps, and the verdict is compared with the one the log holds (its
``gate.decided`` events). Nothing is executed and nothing is appended: it reads the
log and folds it, as ``replay`` does.

What each gate is judged against:

- the budget gate: the spend and the time the log shows just before the call (the
  candidate's caps, else the run's, raised by any ``run.resumed``);
- the boundary and commands gates: the run's world folder as it is now (its links,
  its ``.git``); a world that is gone has no links, so paths are judged by their text;
- the arguments gate: the tools this process has registered; a call of a tool that
  existed when it was logged but is not registered here cannot be judged, and is
  listed as unjudged rather than reported as a difference; while the run's
  ``tool_choice`` named a tool not yet called (the log, folded), a call of another is
  denied, as it was;
- gates a plugin added to the run's pipeline are not run (they are not known here).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from helix.gates import BudgetState, GateCall, GateContext, Policy, Verdict, build_gate_pipeline
from helix.kernel.events import Event, parse_iso
from helix.kernel.log import EventStore
from helix.kernel.session import SessionState, apply
from helix.tools import ToolRegistry

from ._blueprint import Blueprint
from ._candidate import CandidatePolicy
from ._forced import forced_tool

_RANK: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
_CLOSING = frozenset({"tool.started", "tool.completed", "approval.requested"})
"""Events after which a call's gates have ruled (later ``gate.decided`` are its egress)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ApprovalOutcome(_Frozen):
    """How the approval a call asked for was answered (``decision`` ``None``: never)."""

    decision: Literal["allow", "deny"] | None
    by: str | None = None
    auto: bool = False
    """No person decided: the deadline passed, or the run auto-approved."""


class ReplayedCall(_Frozen):
    """One logged call whose verdict the candidate policy would change."""

    run_id: str
    """The run whose log holds the call (a fork's inherited calls keep their parent's)."""
    seq: int
    turn: int | None
    call_id: str
    tool: str
    args: dict[str, JsonValue]
    logged: Verdict
    """What the gates decided when the call was made."""
    logged_reason: str
    approval: ApprovalOutcome | None
    """The answer to the approval it asked for, if it asked."""
    ran: bool
    """Whether the call was executed (``tool.started`` is in the log)."""
    candidate: Verdict
    """What the candidate policy decides."""
    candidate_gate: str | None
    """The gate that denied, or the first that asked (``None``: every gate allowed)."""
    candidate_reason: str
    change: Literal["stricter", "looser"]
    """``stricter``: denied or asked where the log allowed (or denied where it asked)."""


class UnjudgedCall(_Frozen):
    """A logged call the candidate could not be judged on, and why."""

    run_id: str
    seq: int
    call_id: str
    tool: str
    reason: str


class PolicyReplay(_Frozen):
    """The candidate policy over one run's logged calls."""

    run_id: str
    calls: int
    """Logged calls judged (the same verdict, or a difference)."""
    stricter: int
    looser: int
    differences: list[ReplayedCall]
    """The calls whose verdict changes, in log order."""
    unjudged: list[UnjudgedCall]


@dataclass
class _Call:
    seq: int
    turn: int | None
    run_id: str
    call_id: str
    name: str
    args: dict[str, Any]
    candidate: tuple[Verdict, str | None, str]
    known: bool
    """Whether this process knows the tool (else the arguments gate's view may differ)."""
    decisions: list[tuple[str, str, str]] = field(default_factory=list[tuple[str, str, str]])
    gated: bool = False
    ran: bool = False
    approval: ApprovalOutcome | None = None


async def replay_policy(
    store: EventStore,
    run_id: str,
    candidate: CandidatePolicy,
    *,
    tools: ToolRegistry,
    workspace_ceiling: Policy | None = None,
    own_only: bool = False,
) -> PolicyReplay:
    """Judge every logged call of ``run_id`` with ``candidate``; nothing runs or is written.

    Args:
        store: The log to read.
        run_id: The run (``RunNotFoundError`` if there is none).
        candidate: The policy to try; its missing sections are the run's own.
        tools: The tools this process knows (the arguments gate's schemas).
        workspace_ceiling: The workspace's ceiling, part of the run's own when the
            candidate gives none.
        own_only: Skip the calls a fork inherited from its parent (a workspace's
            replay judges those once, in the parent).
    """
    record = await store.get_run(run_id)
    world = await asyncio.to_thread(lambda: Path(record.world).resolve())
    judge: _Judge | None = None
    state = SessionState(run_id=run_id)
    calls = _Calls()
    async for event in _events(store, run_id):
        if judge is None:
            judge = _Judge(event, candidate, tools, workspace_ceiling or Policy(), world, run_id)
        if event.type == "tool.requested" and not (own_only and event.run_id != run_id):
            data = event.data
            calls.add(_Call(
                event.seq, event.turn, event.run_id, data["call_id"], data["name"], data["args"],
                await judge.decide(
                    data["call_id"], data["name"], data["args"], state, event.ts,
                    malformed=data.get("malformed"),
                ),
                data["name"] in tools,
            ))  # fmt: skip
        else:
            calls.note(event)
        apply(state, event)
    return _report(run_id, calls.all)


async def replay_policy_workspace(
    store: EventStore,
    workspace: str,
    candidate: CandidatePolicy,
    *,
    tools: ToolRegistry,
    workspace_ceiling: Policy | None = None,
) -> list[PolicyReplay]:
    """``replay_policy`` over every run of ``workspace``, oldest first; each call once."""
    ids: list[str] = []
    cursor = None
    while True:
        page = await store.list_runs(workspace=workspace, limit=200, cursor=cursor)
        ids += [record.id for record in page.runs]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    return [
        await replay_policy(
            store, run_id, candidate, tools=tools, workspace_ceiling=workspace_ceiling,
            own_only=True,
        )
        for run_id in reversed(ids)
    ]  # fmt: skip


async def _events(store: EventStore, run_id: str) -> AsyncIterator[Event]:
    async for page in store.read_pages(run_id):
        for event in page:
            yield event


class _Judge:
    """The candidate's gate context for one run, built from its ``run.created``."""

    def __init__(
        self,
        first: Event,
        candidate: CandidatePolicy,
        tools: ToolRegistry,
        workspace: Policy,
        world: Path,
        run_id: str,
    ) -> None:
        settings = (first.data.get("settings") or {}) if first.type == "run.created" else {}
        blueprint = Blueprint.model_validate(settings.get("blueprint") or {})
        self.tool_choice = blueprint.tool_choice
        self.tools = tools.subset(blueprint.tools) if blueprint.tools is not None else tools
        self.pipeline = build_gate_pipeline(available_tools=self.tools.names)
        self.candidate = candidate
        self.context = GateContext(
            run_id=run_id,
            world=world,
            policy=candidate.ceiling(blueprint, workspace),
            approvals=candidate.rules(blueprint),
            egress=candidate.egress(blueprint),
            attended=bool(settings.get("attended", True)),
            live=blueprint.sandbox.live,
        )

    async def decide(
        self,
        call_id: str,
        name: str,
        args: dict[str, Any],
        state: SessionState,
        ts: str,
        *,
        malformed: str | None = None,
    ) -> tuple[Verdict, str | None, str]:
        """The candidate's verdict on one call, the gate that ruled, and why.

        ``malformed``: why the call's arguments did not parse (its ``tool.requested``
        says so), which the arguments gate denies under any policy.
        """
        tool = self.tools.get(name) if name in self.tools else None
        caps = self.candidate.budget
        budget = state.budget
        elapsed = 0.0 if state.started_at is None else parse_iso(ts) - parse_iso(state.started_at)
        context = GateContext(
            run_id=self.context.run_id,
            world=self.context.world,
            policy=self.context.policy,
            approvals=self.context.approvals,
            egress=self.context.egress,
            attended=self.context.attended,
            live=self.context.live,
            forced_tool=forced_tool(self.tool_choice, state),
            budget=BudgetState(
                cap_usd=caps.usd if caps is not None else budget.usd if budget else None,
                spent_usd=state.spent_usd,
                max_seconds=(
                    caps.max_seconds if caps is not None else budget.max_seconds if budget else None
                ),
                elapsed_s=max(0.0, elapsed),
            ),
        )
        call = GateCall(call_id=call_id, name=name, args=args, tool=tool, malformed=malformed)
        outcome = await self.pipeline.evaluate(call, context)
        ruling = [(gate, d) for gate, d in outcome.decisions if d.verdict == outcome.verdict]
        gate = ruling[0][0] if outcome.verdict != "allow" and ruling else None
        return outcome.verdict, gate, outcome.reason


class _Calls:
    """The calls requested so far, and what the log says happened to each.

    A call id is unique only among the calls waiting at once (a fork's model may reuse
    an id its parent used), so events are matched to the latest call with the id.
    """

    def __init__(self) -> None:
        self.all: list[_Call] = []
        self._by_id: dict[str, _Call] = {}
        self._by_request: dict[str, _Call] = {}

    def add(self, call: _Call) -> None:
        self.all.append(call)
        self._by_id[call.call_id] = call

    def note(self, event: Event) -> None:
        """Record what ``event`` says about a requested call (if anything)."""
        data = event.data
        if event.type == "approval.decided":
            waiting = self._by_request.pop(data["request_id"], None)
            if waiting is not None:
                waiting.approval = ApprovalOutcome(
                    decision=data["decision"], by=data.get("by"), auto=bool(data.get("auto"))
                )
            return
        call = self._by_id.get(data.get("call_id", ""))
        if call is None:
            return
        if event.type == "gate.decided" and not call.gated:
            call.decisions.append((data["gate"], data["verdict"], data["reason"]))
        elif event.type in _CLOSING and not call.gated:
            call.gated = True
            if event.type == "approval.requested":
                self._by_request[data["request_id"]] = call
                call.approval = ApprovalOutcome(decision=None)
        if event.type == "tool.started":
            call.ran = True


def _report(run_id: str, calls: list[_Call]) -> PolicyReplay:
    differences: list[ReplayedCall] = []
    unjudged: list[UnjudgedCall] = []
    judged = 0
    for call in calls:
        problem = _unjudgeable(call)
        if problem is not None:
            unjudged.append(UnjudgedCall(
                run_id=call.run_id, seq=call.seq, call_id=call.call_id, tool=call.name,
                reason=problem,
            ))  # fmt: skip
            continue
        judged += 1
        logged, logged_reason = _logged(call.decisions)
        verdict, gate, reason = call.candidate
        if verdict == logged:
            continue
        differences.append(
            ReplayedCall(
                run_id=call.run_id, seq=call.seq, turn=call.turn, call_id=call.call_id,
                tool=call.name, args=call.args, logged=logged, logged_reason=logged_reason,
                approval=call.approval, ran=call.ran, candidate=verdict, candidate_gate=gate,
                candidate_reason=reason,
                change="stricter" if _RANK[verdict] > _RANK[logged] else "looser",
            )
        )  # fmt: skip
    stricter = sum(1 for d in differences if d.change == "stricter")
    return PolicyReplay(
        run_id=run_id, calls=judged, stricter=stricter, looser=len(differences) - stricter,
        differences=differences, unjudged=unjudged,
    )  # fmt: skip


def _unjudgeable(call: _Call) -> str | None:
    if not call.decisions:
        return "no gate decision is logged for it"
    unknown_then = any(gate == "arguments" and v == "deny" for gate, v, _ in call.decisions)
    if not call.known and not unknown_then:
        return f"the tool {call.name!r} is not registered in this process"
    return None


def _logged(decisions: list[tuple[str, str, str]]) -> tuple[Verdict, str]:
    """The pipeline's verdict as the log holds it, and its reason."""
    for gate, verdict, reason in decisions:
        if verdict == "deny":
            return "deny", f"{gate}: {reason}"
    asking = [f"{gate}: {reason}" for gate, verdict, reason in decisions if verdict == "ask"]
    if asking:
        return "ask", "; ".join(asking)
    return "allow", "every gate allowed it"
