"""The model request for the next call, built from the session's folded messages."""

from __future__ import annotations

from helix.kernel.session import Message, SessionState
from helix.providers import (
    AssistantMessage,
    ChatMessage,
    ModelRequest,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)
from helix.tools import ToolRegistry

from ._blueprint import Blueprint


def tool_specs(tools: ToolRegistry) -> tuple[ToolSpec, ...]:
    """The tools as the model is shown them (built once per run: adapters cache by identity)."""
    return tuple(ToolSpec(t.name, t.description, t.parameters) for t in tools)


def build_request(
    state: SessionState, blueprint: Blueprint, tools: tuple[ToolSpec, ...]
) -> ModelRequest:
    """Everything the model has said and been told, as one request."""
    return ModelRequest(
        messages=tuple(_message(m) for m in state.messages),
        system=blueprint.system,
        tools=tools,
        max_tokens=blueprint.max_tokens,
        temperature=blueprint.temperature,
    )


def _message(message: Message) -> ChatMessage:
    if message.role == "user":
        return UserMessage(message.text)
    if message.role == "assistant":
        calls = tuple(ToolCall(c.id, c.name, c.args) for c in message.tool_calls)
        return AssistantMessage(message.text, calls)
    return ToolResult(message.call_id or "", message.name or "", message.text, message.ok)
