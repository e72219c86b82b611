"""The model request for the next call, built from the session's folded messages."""

from __future__ import annotations

from helix.kernel.session import Message, SessionState
from helix.providers import (
    AssistantMessage,
    ChatMessage,
    ModelAdapter,
    ModelRequest,
    PriceBook,
    TokenUsage,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
    estimate_tokens,
)
from helix.tools import ToolRegistry

from ._blueprint import Blueprint
from ._forced import choice_now, request_choice, require_offered
from ._strategies import ChainOfThought, PlanThenAct


def tool_specs(tools: ToolRegistry) -> tuple[ToolSpec, ...]:
    """The tools as the model is shown them (built once per run: adapters cache by identity)."""
    return tuple(ToolSpec(t.name, t.description, t.parameters) for t in tools)


def projected_cost(
    prices: PriceBook, model: ModelAdapter, prompt: str, max_tokens: int
) -> float | None:
    """What a call of ``model`` could cost at most: ``prompt`` in, ``max_tokens`` out.

    ``None`` when the model has no known price. A run pauses (the loop) or refuses a
    source's sampling rather than make a call that could take it past its USD cap.
    """
    usage = TokenUsage(estimate_tokens(prompt), max_tokens)
    return prices.cost(model.provider, model.model, usage)


class RequestBuilder:
    """Builds each call's request, converting only the messages added since the last.

    The session's messages only ever grow, so a long run does not pay again, every
    turn, for converting its whole history.
    """

    def __init__(self, blueprint: Blueprint, tools: tuple[ToolSpec, ...]) -> None:
        self._blueprint = blueprint
        self._tools = tools
        self._converted: list[ChatMessage] = []

    def offer(self, tools: tuple[ToolSpec, ...]) -> None:
        """Offer these tools from the next request on (a tool source's list changed)."""
        self._tools = tools

    def check(self, state: SessionState) -> None:
        """``ConfigError`` if the run's tool choice, as it stands, names a tool not offered.

        Or is ``required`` with no tools: the loop checks once the run's tools are known
        (its sources opened), before its next call.
        """
        choice = choice_now(self._blueprint.tool_choice, state)
        require_offered(choice, [t.name for t in self._tools])

    def build(self, state: SessionState) -> ModelRequest:
        """Everything the model has said and been told, as one request.

        With the run's tool choice as it stands (``_forced.py``); ``ConfigError`` if it
        names a tool no longer offered.
        """
        messages = state.messages
        if len(messages) < len(self._converted):  # a different session: start over
            self._converted = []
        self._converted += [_message(m) for m in messages[len(self._converted) :]]
        sent = tuple(self._converted)
        if state.context_summary is not None and state.compacted_messages > 0:
            head = UserMessage(summarised(messages[0].text, state))
            sent = (head, *sent[state.compacted_messages :])
        system, tools = self._blueprint.system, self._tools
        strategy = self._blueprint.strategy
        if isinstance(strategy, ChainOfThought):
            system = f"{system}\n\n{strategy.instruction}"
        elif isinstance(strategy, PlanThenAct) and planning(state):
            system, tools = f"{system}\n\n{strategy.plan}", ()
        choice = request_choice(self._blueprint.tool_choice, state, [t.name for t in tools])
        return ModelRequest(
            messages=sent,
            system=system,
            tools=tools,
            max_tokens=self._blueprint.max_tokens,
            temperature=self._blueprint.temperature,
            tool_choice=choice,
        )


def summarised(objective: str, state: SessionState) -> str:
    """The first message of a compacted conversation: the objective, then the summary."""
    return (
        f"{objective}\n\n(The record of turns 1 to {state.compacted_upto_turn} was condensed"
        f" to save context. A summary of them:)\n{state.context_summary}"
    )


def planning(state: SessionState) -> bool:
    """Whether the next model call is a ``plan_then_act`` run's planning call: its first."""
    return state.turn <= 1 and not any(m.role == "assistant" for m in state.messages)


def _message(message: Message) -> ChatMessage:
    if message.role == "user":
        return UserMessage(message.text)
    if message.role == "assistant":
        calls = tuple(ToolCall(c.id, c.name, c.args) for c in message.tool_calls)
        return AssistantMessage(message.text, calls)
    return ToolResult(message.call_id or "", message.name or "", message.text, message.ok)
