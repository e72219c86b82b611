"""What a tool source may ask of its run: a person's answer, and the run's model's.

``SourceHost.ask`` (an MCP server's elicitation) becomes an approval request carrying a
``question`` (``helix.kernel.events.ApprovalQuestion``): any surface that decides
approvals answers it, before the run's approval deadline. Allowing it accepts (with
the answer's fields), denying it declines, and a deadline or the run's end cancels.
An unattended run declines at once, with the reason logged; auto-approve answers only
a question with no fields (a plain yes).

``SourceHost.sample`` (MCP sampling) is served by the run's own model, gated by the
blueprint's ``sampling`` (``ask`` puts each request to a person as an approval named
``sampling``, the prompt its yes-or-no question; an unattended run refuses it), refused
if it could take the run past its USD cap, and recorded as ``mcp.sampled`` (text,
tokens, cost: the run's spend, folded like its model calls) or ``mcp.sample_refused``.
A refusal reaches the source as ``helix.errors.SamplingRefusedError`` saying why.
"""

from __future__ import annotations

import asyncio
from typing import NoReturn

from helix.errors import ModelCallError, SamplingRefusedError, ToolSourceError
from helix.kernel.events import (
    ApprovalQuestion,
    McpSampled,
    McpSampleRefused,
    NewEvent,
    RunPaused,
    Usage,
    flat_schema,
)
from helix.kernel.events import Event as LoggedEvent
from helix.providers import (
    AssistantMessage,
    ModelAdapter,
    ModelRequest,
    UserMessage,
)
from helix.tools import Elicitation, ElicitationAnswer, SampleReply, SampleRequest

from ._asking import DEADLINE_PASSED, answered_in_time, ask, settled, system_decision
from ._request import projected_cost
from ._session import LiveSession
from ._setup import RunSetup

MAX_WAITING = 4
"""A run's source questions (and sampling requests) that may wait for a person at once;
past it, a question is declined and a sampling request refused without asking, so a
source cannot flood a person."""
MAX_MESSAGE = 4000
"""Characters of a question's message that are logged and shown (the rest is cut)."""
NOBODY_ATTENDS = "nobody attends this run"

_STOP_REASONS = {"end": "endTurn", "max_tokens": "maxTokens", "stop_sequence": "stopSequence"}


class SourceServices:
    """A run's answers to its sources' questions and sampling requests (one incarnation)."""

    def __init__(self, setup: RunSetup, session: LiveSession, model: ModelAdapter | None) -> None:
        self.setup = setup
        self.session = session
        self.model = model

    # -- elicitation ----------------------------------------------------------------------

    async def ask(self, elicitation: Elicitation) -> ElicitationAnswer:
        """Put the source's question to a person and wait for the answer (or its end)."""
        try:
            schema = flat_schema(elicitation.schema)
        except ValueError as error:
            raise ToolSourceError(f"{elicitation.source}: cannot ask a person: {error}") from None
        message = elicitation.message
        if len(message) > MAX_MESSAGE:
            message = message[:MAX_MESSAGE] + "…"
        question = ApprovalQuestion(source=elicitation.source, message=message, fields=schema)
        declined = self._why_nobody_answers(bool(schema.get("properties")))
        asked = ask(
            self.setup,
            elicitation.call_id or "",
            "question",
            {"source": elicitation.source},
            self.turn,
            question=question,
            declined=declined,
        )
        decision = await self._settle(asked.request_id, asked.events)
        if decision is None:
            return ElicitationAnswer("cancel")  # the run ended with the question open
        data = decision.data
        if data["decision"] == "allow":
            return ElicitationAnswer("accept", dict(data.get("answer") or {}))
        if data.get("auto") and declined is None:
            return ElicitationAnswer("cancel")  # its deadline passed, or its call ended
        return ElicitationAnswer("decline")

    def _why_nobody_answers(self, has_fields: bool) -> str | None:
        """Why a question is declined at once (``None``: a person is asked, or auto-approve)."""
        if self._crowded() is not None:
            return f"declined: {self._crowded()}"
        if self.setup.attended:
            return None
        if not has_fields and self.setup.auto_approve:
            return None
        if has_fields and self.setup.auto_approve:
            return f"declined: auto-approve gives no answers with content, and {NOBODY_ATTENDS}"
        return f"declined: {NOBODY_ATTENDS}"

    # -- sampling -------------------------------------------------------------------------

    async def sample(self, request: SampleRequest) -> SampleReply:
        """The run's model's answer to the source's prompt; ``SamplingRefusedError`` if refused."""
        model = self.model
        if model is None:
            await self._refuse(request, "the run has no model to sample")
        settings = self.setup.blueprint.sampling
        if settings.allow == "deny":
            await self._refuse(request, "the blueprint's sampling.allow is deny")
        max_tokens = min(request.max_tokens, settings.max_tokens)
        model_request = _model_request(request, max_tokens, self.setup.blueprint.temperature)
        await self._within_budget(request, model, model_request)
        if settings.allow == "ask":
            await self._approved(request, max_tokens)
            await self._within_budget(request, model, model_request)  # spend may have moved
        started = self.setup.clock.monotonic()
        try:
            response = await model.request(model_request)
        except ModelCallError as error:
            await self._refuse(request, f"the model failed: {error}")
        latency_ms = (self.setup.clock.monotonic() - started) * 1000
        answered: ModelAdapter = getattr(model, "answered_by", None) or model
        cost = self.setup.prices.cost(answered.provider, answered.model, response.usage)
        usage = response.usage
        stop = _STOP_REASONS.get(response.stop_reason, "endTurn")
        sampled = McpSampled(
            source=request.source,
            call_id=request.call_id,
            model=answered.name,
            usage=Usage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cached_tokens=usage.cached_tokens,
            ),
            cost_usd=cost,
            latency_ms=max(0.0, latency_ms),
            text=response.text,
            stop_reason=stop,
        )
        await self.session.append([NewEvent(sampled, actor="agent", turn=self.turn)])
        return SampleReply(text=response.text, model=answered.name, stop_reason=stop)

    async def _within_budget(
        self, request: SampleRequest, model: ModelAdapter, model_request: ModelRequest
    ) -> None:
        """Refuse a request that could take the run past its USD cap (output at its max)."""
        state = self.session.state
        cap = state.budget.usd if state.budget is not None else None
        if cap is None:
            return
        prompt = (model_request.system or "") + "".join(m.text for m in request.messages)
        cost = projected_cost(self.setup.prices, model, prompt, model_request.max_tokens)
        if cost is not None and state.spent_usd + cost > cap:
            await self._refuse(
                request,
                f"it could take the run past its budget cap (${cap:.4f}: spent"
                f" ${state.spent_usd:.4f}, this request up to ${cost:.4f})",
            )

    async def _approved(self, request: SampleRequest, max_tokens: int) -> None:
        """Put the request to a person (``sampling.allow: ask``); refuse unless allowed."""
        if not self.setup.attended and not self.setup.auto_approve:
            await self._refuse(request, f"it needs a person's approval, and {NOBODY_ATTENDS}")
        crowded = self._crowded()
        if crowded is not None and not self.setup.auto_approve:
            await self._refuse(request, crowded)
        question = ApprovalQuestion(source=request.source, message=_prompt_text(request))
        args = {"source": request.source, "max_tokens": max_tokens}
        asked = ask(
            self.setup, request.call_id or "", "sampling", args, self.turn, question=question
        )
        decision = await self._settle(asked.request_id, asked.events)
        if decision is None:
            await self._refuse(request, "the run ended before a decision")
        if decision.data["decision"] != "allow":
            data = decision.data
            who = "automatically" if data.get("auto") else f"by {data['by']}"
            why = f": {data['reason']}" if data.get("reason") else ""
            await self._refuse(request, f"denied {who}{why}")

    def _crowded(self) -> str | None:
        """Why no more may wait for a person now (``MAX_WAITING``), or ``None``."""
        pending = self.session.state.pending_approvals.values()
        if sum(p.question is not None for p in pending) < MAX_WAITING:
            return None
        return f"{MAX_WAITING} questions of this run's sources already wait for a person"

    async def _refuse(self, request: SampleRequest, reason: str) -> NoReturn:
        """Log the refusal and raise it to the source."""
        refused = McpSampleRefused(source=request.source, call_id=request.call_id, reason=reason)
        await self.session.append([NewEvent(refused, turn=self.turn)])
        raise SamplingRefusedError(reason)  # the class says "refused"; the reason says why

    # -- the wait, shared -----------------------------------------------------------------

    async def _settle(self, request_id: str, events: list[NewEvent]) -> LoggedEvent | None:
        """Log the request, wait for its decision (closing it at its deadline), return it.

        ``None`` if the run ended with the request open. Should the waiting call be
        cancelled (its tool call ended), the request is closed as denied first.
        """
        first = self.session.state.head + 1
        await self.session.append(events)
        try:
            if not await answered_in_time(self.setup, self.session, request_id):
                closing = self._closing(request_id, DEADLINE_PASSED)
                await self.session.append(closing, unless=settled(request_id))
        except asyncio.CancelledError:
            closing = self._closing(request_id, "the call ended before an answer")
            await asyncio.shield(self.session.append(closing, unless=settled(request_id)))
            raise
        async for event in self.setup.store.iter_events(self.setup.run_id, after=first - 1):
            if event.type == "approval.decided" and event.data["request_id"] == request_id:
                return event
        return None

    def _closing(self, request_id: str, reason: str) -> list[NewEvent]:
        """The system's denial closing a request; a paused run stays paused after it."""
        events = [system_decision(request_id, "deny", reason, self.turn)]
        paused = self.session.state.pause_reason
        if self.session.state.status == "paused" and paused is not None:
            events.append(NewEvent(RunPaused(reason=paused), turn=self.turn))
        return events

    @property
    def turn(self) -> int:
        return self.session.state.turn


def _prompt_text(request: SampleRequest) -> str:
    """The prompt as a person reads it before allowing it: each message under its role."""
    parts = [f"[system]\n{request.system}"] if request.system else []
    parts += [f"[{m.role}]\n{m.text}" for m in request.messages]
    text = "\n\n".join(parts)
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + "…"


def _model_request(
    request: SampleRequest, max_tokens: int, temperature: float | None
) -> ModelRequest:
    """The source's prompt as a model request, offering no tools."""
    messages = tuple(
        UserMessage(m.text) if m.role == "user" else AssistantMessage(m.text)
        for m in request.messages
    )
    return ModelRequest(
        messages=messages, system=request.system, max_tokens=max_tokens, temperature=temperature
    )
