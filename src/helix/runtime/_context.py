"""Context compaction: a long run's older turns summarised by the ``summary`` role's model.

With ``context: {compact_at_tokens: N, keep_turns: K}`` in the blueprint, before each
turn the loop asks ``Compactor.due``: would the next request be longer than N tokens
(estimated), with turns older than the last K not summarised yet? Then the ``summary``
role's model (else the run's own) summarises the turns up to K before the last, and
``context.compacted`` records what it wrote; from then on the request sends the
objective, the summary, and the turns after it (``RequestBuilder``). A replay reads
the summary back from the log and never calls the model again; a process that dies
between the call and its record makes the call once more.
"""

from __future__ import annotations

import json

from helix.kernel.events import ContextCompacted, NewEvent, ToolCompleted, Usage
from helix.kernel.session import Message, SessionState
from helix.providers import (
    ModelAdapter,
    ModelRequest,
    ModelResponse,
    PriceBook,
    UserMessage,
    estimate_tokens,
)

from ._blueprint import ContextSettings

SUMMARY_SYSTEM = (
    "You condense the record of an AI agent's work so that it can go on with less"
    " context. You write the summary only: you call no tool."
)
_CLIP = 4000
"""The most characters of one message the summary model is shown."""


class Compactor:
    """Decides when a run's conversation is compacted, and asks for the summary."""

    def __init__(self, settings: ContextSettings) -> None:
        self.settings = settings
        self._failed_at: int | None = None
        """The turn after which a summary call failed (tried again after the next turn)."""

    def due(self, state: SessionState, before: list[NewEvent]) -> bool:
        """Whether the turns up to ``keep_turns`` before the last are to be summarised now.

        ``before``: results not folded into ``state`` yet (they count as input too).
        """
        limit = self.settings.compact_at_tokens
        if limit is None or self._failed_at == state.turn:
            return False
        upto = state.turn - self.settings.keep_turns
        cut = state.turn_message_ends.get(upto, 0)
        if upto <= state.compacted_upto_turn or cut <= max(1, state.compacted_messages):
            return False
        sent = state.messages[max(1, state.compacted_messages) :]
        text = state.messages[0].text + (state.context_summary or "")
        text += "".join(m.text for m in sent) + "".join(state.steering)
        text += "".join(e.payload.output for e in before if isinstance(e.payload, ToolCompleted))
        return estimate_tokens(text) > limit

    def request(self, state: SessionState) -> tuple[int, int, ModelRequest]:
        """The turn and message count the summary will stand for, and the request for it."""
        upto = state.turn - self.settings.keep_turns
        cut = state.turn_message_ends[upto]
        start = max(1, state.compacted_messages)
        parts = [f"The agent's task:\n{state.messages[0].text}"]
        if state.context_summary is not None:
            parts.append(
                f"A summary of its turns 1 to {state.compacted_upto_turn}:\n{state.context_summary}"
            )
        first = state.compacted_upto_turn + 1
        lines = "\n".join(_line(m) for m in state.messages[start:cut])
        parts.append(f"Its turns {first} to {upto}, in order:\n{lines}")
        parts.append(self.settings.instruction)
        request = ModelRequest(
            messages=(UserMessage("\n\n".join(parts)),),
            system=SUMMARY_SYSTEM,
            max_tokens=self.settings.max_tokens,
        )
        return upto, cut, request

    def failed(self, state: SessionState) -> None:
        """The summary call failed: not tried again until another turn has ended."""
        self._failed_at = state.turn

    @staticmethod
    def compacted(
        upto: int,
        cut: int,
        response: ModelResponse,
        model: ModelAdapter,
        prices: PriceBook,
        *,
        role: str,
    ) -> ContextCompacted:
        """The ``context.compacted`` event of a summary ``model`` wrote."""
        answered: ModelAdapter = getattr(model, "answered_by", None) or model
        usage = response.usage
        return ContextCompacted(
            upto_turn=upto,
            messages=cut,
            summary=response.text,
            role=role,
            provider=answered.provider,
            model=answered.model,
            usage=Usage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cached_tokens=usage.cached_tokens,
            ),
            cost_usd=prices.cost(answered.provider, answered.model, usage),
            latency_ms=response.latency_ms,
        )


def _line(message: Message) -> str:
    """One message of the record, as the summary model reads it."""
    if message.role == "assistant":
        calls = "".join(
            f"\n  calls {c.name}({json.dumps(c.args, ensure_ascii=False)[:_CLIP]})"
            for c in message.tool_calls
        )
        return f"[agent] {_clip(message.text)}{calls}"
    if message.role == "tool":
        mark = "ok" if message.ok else "error"
        return f"[tool {message.name or '?'} {mark}] {_clip(message.text)}"
    return f"[user] {_clip(message.text)}"


def _clip(text: str) -> str:
    return text if len(text) <= _CLIP else text[:_CLIP] + " … (cut)"
