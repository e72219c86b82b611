"""Egress of running commands: connection attempts decided, logged once per host, asked.

The sandbox's proxy asks a hook for each connection a command attempts. Here that
hook applies the run's ``EgressPolicy`` (the same one the ``egress`` gate applies to
a tool's ``url``) and writes the decision into the run's log as ``gate.decided`` (gate
``egress``, the command's ``call_id``), once per host and command: repeats reuse the
first decision, and ``egress.counted`` records every attempt when the command ends
(``EgressTally``). An unlisted host in an attended run becomes an approval request
(``name: egress``, ``args: {host, port}``) that the connection (and every repeat)
waits on, with the run's approval deadline; ``--auto-approve`` answers it at once,
and an unattended run refuses it. Should the command end before anyone answers, the
request is closed as denied.

So that a run cannot flood a person, a command asks about at most
``MAX_QUESTIONS_PER_COMMAND`` hosts and a run has at most ``MAX_PENDING_QUESTIONS``
egress questions waiting at once; past either, an unlisted host is refused without
asking, and the ``gate.decided`` says why.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from helix.gates import Verdict
from helix.kernel.events import (
    GateDecided,
    NewEvent,
)
from helix.kernel.session import SessionState
from helix.sandbox import EgressDecision, EgressHook, policy_hook

from ._asking import DEADLINE_PASSED, answered_in_time, ask, settled, system_decision
from ._egress_tally import EgressTally
from ._session import LiveSession
from ._setup import RunSetup

MAX_QUESTIONS_PER_COMMAND = 8
"""Hosts one command may raise approval requests about."""
MAX_PENDING_QUESTIONS = 4
"""Egress approval requests of one run that may wait for a person at once."""


class CommandEgress:
    """Builds the egress hook of each command of one run."""

    def __init__(self, setup: RunSetup, session: LiveSession) -> None:
        self.setup = setup
        self.session = session
        self._tallies: dict[str, EgressTally] = {}
        self._pending = 0
        """Egress questions of this run waiting for an answer now."""

    def hook(self, call_id: str) -> EgressHook | None:
        """The hook for one command; ``None`` (no network at all) if the run lists no host."""
        if not self.setup.blueprint.sandbox.network:
            return None
        tally = self._tallies[call_id] = EgressTally()

        async def record(decision: EgressDecision) -> None:
            await self.session.append([_gate(call_id, decision.verdict, decision, self.turn)])

        async def ask(refusal: EgressDecision) -> EgressDecision:
            if not self.setup.attended and not self.setup.auto_approve:
                await record(refusal)
                return refusal
            too_many = self._too_many(tally)
            if too_many is not None:
                refusal = replace(refusal, reason=f"{refusal.reason}; not asked: {too_many}")
                await record(refusal)
                return refusal
            tally.questions += 1
            self._pending += 1
            try:
                return await self._ask(call_id, refusal)
            finally:
                self._pending -= 1

        return tally.hook(
            policy_hook(self.setup.egress, record, ask), policy_hook(self.setup.egress)
        )

    def finish(self, call_id: str, turn: int) -> list[NewEvent]:
        """The count of a finished command's attempts (nothing if it attempted none)."""
        tally = self._tallies.pop(call_id, None)
        if tally is None or not tally.attempts:
            return []
        return [NewEvent(tally.counted(call_id), turn=turn)]

    def _too_many(self, tally: EgressTally) -> str | None:
        """Why no more questions may be raised now, or ``None``."""
        if tally.questions >= MAX_QUESTIONS_PER_COMMAND:
            return f"this command already asked about {MAX_QUESTIONS_PER_COMMAND} hosts"
        if self._pending >= MAX_PENDING_QUESTIONS:
            return f"{MAX_PENDING_QUESTIONS} egress questions of this run already wait for a person"
        return None

    def left_open(self, call_id: str, turn: int) -> list[NewEvent]:
        """Denials closing the questions a command left open when its process died."""
        return [
            system_decision(pending.request_id, "deny", "the command was interrupted", turn)
            for pending in self.state.pending_approvals.values()
            if pending.call_id == call_id
        ]

    async def _ask(self, call_id: str, refusal: EgressDecision) -> EgressDecision:
        args = {"host": refusal.host, "port": refusal.port}
        question = ask(self.setup, call_id, "egress", args, self.turn)
        request_id = question.request_id
        first = self.state.head + 1
        await self.session.append([_gate(call_id, "ask", refusal, self.turn), *question.events])
        try:
            if not await answered_in_time(self.setup, self.session, request_id):
                closing = system_decision(request_id, "deny", DEADLINE_PASSED, None)
                await self.session.append([closing], unless=settled(request_id))
        except asyncio.CancelledError:
            # The command ended (its proxy channel closed) with the question open.
            ended = "the command ended before an answer"
            closing = system_decision(request_id, "deny", ended, None)
            await asyncio.shield(self.session.append([closing], unless=settled(request_id)))
            raise
        return await self._answer(request_id, first, refusal)

    async def _answer(self, request_id: str, after: int, refusal: EgressDecision) -> EgressDecision:
        """The decision recorded for ``request_id`` (a refusal if the run stopped first)."""
        async for event in self.setup.store.iter_events(self.setup.run_id, after=after - 1):
            if event.type == "approval.decided" and event.data["request_id"] == request_id:
                who = "automatically" if event.data.get("auto") else f"by {event.data['by']}"
                if event.data["decision"] == "allow":
                    return EgressDecision(refusal.host, refusal.port, "allow", f"allowed {who}")
                return EgressDecision(refusal.host, refusal.port, "deny", f"denied {who}")
        return refusal

    @property
    def state(self) -> SessionState:
        return self.session.state

    @property
    def turn(self) -> int:
        return self.session.state.turn


def _gate(call_id: str, verdict: Verdict, decision: EgressDecision, turn: int) -> NewEvent:
    reason = f"{decision.host}:{decision.port}: {decision.reason}"
    decided = GateDecided(call_id=call_id, gate="egress", verdict=verdict, reason=reason)
    return NewEvent(decided, turn=turn)
