"""``scripted:PATH``: a model that plays a scenario file instead of calling anyone.

For the demo and for people testing blueprints. The reply to a request is chosen by
how many assistant turns the request already holds, so a run that resumes after a
crash gets the same replies it would have got. Error steps raise the error a provider
would have caused (a 429 step raises ``ModelRateLimitedError``), once each.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from helix.errors import ModelRequestError

from ._adapter import ModelAdapter
from ._assemble import tool_call
from ._failures import status_error
from ._provider import Connection
from ._scenario import Scenario, ScenarioStep, estimate_tokens
from ._types import AssistantMessage, ModelRequest, ModelResponse, TokenUsage


class ScriptedModel(ModelAdapter):
    """Plays a ``Scenario``; its name always says ``scripted``."""

    def __init__(self, scenario: Scenario, *, label: str = "inline") -> None:
        self.provider = "scripted"
        self.model = label
        self.scenario = scenario
        self._raised: set[int] = set()
        self._connection = Connection("scripted", "openai", None, "", None)

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """Load a scenario file (``ScenarioError`` says what is wrong with it)."""
        return cls(Scenario.from_file(path), label=str(path))

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Answer with the scenario's next reply for this conversation."""
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        index, step = self._reply_for(turn)
        if step.delay_s:
            await asyncio.sleep(step.delay_s)
        calls = tuple(
            tool_call(c.id or f"call_{index}_{n}", c.name, c.arguments_text(), "tool_calls")
            for n, c in enumerate(step.tool_calls)
        )
        if step.usage is not None:
            usage = TokenUsage(
                step.usage.input_tokens, step.usage.output_tokens, step.usage.cached_tokens
            )
        else:
            prompt = "".join(
                getattr(m, "text", "") or getattr(m, "output", "") for m in request.messages
            )
            produced = step.text + "".join(c.arguments_text() for c in step.tool_calls)
            usage = TokenUsage(estimate_tokens(prompt), estimate_tokens(produced))
        return ModelResponse(
            text=step.text,
            tool_calls=calls,
            usage=usage,
            stop_reason="tool_calls" if calls else "end",
            model=self.model,
            latency_ms=step.delay_s * 1000,
        )

    def _reply_for(self, turn: int) -> tuple[int, ScenarioStep]:
        """Find the reply to the conversation's ``turn``-th model call (raising errors first)."""
        steps = self.scenario.steps
        replies = 0
        position = 0
        while True:
            if position >= len(steps):
                if not (self.scenario.repeat and steps):
                    raise ModelRequestError(
                        f"scripted model {self.model}: the scenario has no reply for model call"
                        f" {turn + 1} (it has {sum(s.error is None for s in steps)})",
                        provider="scripted",
                    )
                position = 0
            step = steps[position]
            if step.error is None:
                if replies == turn:
                    return position, step
                replies += 1
            elif replies == turn and position not in self._raised:
                self._raised.add(position)
                error = step.error
                raise status_error(self._connection, error.status, error.message, error.headers)
            position += 1
