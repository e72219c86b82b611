"""What an MCP server may ask of the run: a person (elicitation), the model (sampling), roots.

Each request is turned into the run's own terms and handed to the ``SourceHost``: an
elicitation to ``host.ask`` (a question a person answers, with the run's deadline),
a sampling request to ``host.sample`` (the run's model, gated and counted against its
budget). Where the host has neither (nobody can be asked, the run has no model), the
server gets a plain refusal: an elicitation is declined, sampling is an MCP error.
The roots are the run's world, and nothing else.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from helix.tools import Elicitation, SampleMessage, SampleRequest, SourceHost

_log = logging.getLogger(__name__)

MAX_MESSAGE = 8 * 1024
"""Characters of a server's question or prompt kept (the rest is cut)."""


class Callbacks:
    """The SDK callbacks of one server's sessions, answered through the run's host."""

    def __init__(self, source: str, host: SourceHost, call_id: Callable[[], str | None]) -> None:
        self.source = source
        self.host = host
        self.call_id = call_id
        """The tool call the server is answering now, if exactly one is in flight."""

    async def elicit(self, context: Any, params: Any) -> Any:
        """``elicitation/create``: a question for a person, or a decline."""
        import mcp_types as types

        if self.host.ask is None or getattr(params, "mode", "form") != "form":
            return types.ElicitResult(action="decline")
        question = Elicitation(
            source=self.source,
            message=str(params.message)[:MAX_MESSAGE],
            schema=dict(params.requested_schema or {}),
            call_id=self.call_id(),
        )
        try:
            answer = await self.host.ask(question)
        except Exception as error:  # the run stopping, a deadline: the server hears "cancel"
            _log.info("%s: elicitation not answered: %s", self.source, error)
            return types.ElicitResult(action="cancel")
        content = dict(answer.content) if answer.content is not None else None
        return types.ElicitResult(action=answer.action, content=content)

    async def sample(self, context: Any, params: Any) -> Any:
        """``sampling/createMessage``: the run's model answers, or an MCP error."""
        import mcp_types as types

        if self.host.sample is None:
            return types.ErrorData(
                code=types.INVALID_REQUEST, message="this run does not serve sampling requests"
            )
        messages = tuple(
            SampleMessage(role=m.role, text=_text(m.content)[:MAX_MESSAGE]) for m in params.messages
        )
        request = SampleRequest(
            source=self.source,
            messages=messages,
            system=None if params.system_prompt is None else params.system_prompt[:MAX_MESSAGE],
            max_tokens=max(1, min(int(params.max_tokens), 8192)),
            call_id=self.call_id(),
        )
        try:
            reply = await self.host.sample(request)
        except Exception as error:  # refused by a gate, over budget, the model failed
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"sampling refused: {error}")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=reply.text),
            model=reply.model,
            stop_reason=reply.stop_reason,
        )

    async def roots(self, context: Any) -> Any:
        """``roots/list``: the run's world."""
        import mcp_types as types

        return types.ListRootsResult(roots=[types.Root(uri=self.host.world.as_uri(), name="world")])


def _text(content: Any) -> str:
    """A sampling message's text; other content (images, audio, tool use) is named."""
    items = content if isinstance(content, list) else [content]
    parts = []
    for item in items:
        kind = getattr(item, "type", "")
        parts.append(item.text if kind == "text" else f"[{kind or 'unknown'} content]")
    return "\n".join(parts)
