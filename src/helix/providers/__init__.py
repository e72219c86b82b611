"""Model providers: one interface, one adapter per provider family, at the edge.

A *provider* is where a model lives and how to reach it (base URL, key); an *adapter*
speaks that provider family's wire format. Everything else (retries, fallback, cost)
wraps an adapter without knowing which one it is.
"""

from ._adapter import ModelAdapter as ModelAdapter
from ._assemble import collect as collect
from ._scenario import Scenario as Scenario
from ._scenario import ScenarioHttpError as ScenarioHttpError
from ._scenario import ScenarioStep as ScenarioStep
from ._scenario import ScenarioToolCall as ScenarioToolCall
from ._scenario import ScenarioUsage as ScenarioUsage
from ._types import AssistantMessage as AssistantMessage
from ._types import ChatMessage as ChatMessage
from ._types import ModelRequest as ModelRequest
from ._types import ModelResponse as ModelResponse
from ._types import StopReason as StopReason
from ._types import StreamDelta as StreamDelta
from ._types import StreamEnd as StreamEnd
from ._types import TextDelta as TextDelta
from ._types import TokenUsage as TokenUsage
from ._types import ToolCall as ToolCall
from ._types import ToolCallDelta as ToolCallDelta
from ._types import ToolResult as ToolResult
from ._types import ToolSpec as ToolSpec
from ._types import UserMessage as UserMessage

__all__ = [
    "AssistantMessage",
    "ChatMessage",
    "ModelAdapter",
    "ModelRequest",
    "ModelResponse",
    "Scenario",
    "ScenarioHttpError",
    "ScenarioStep",
    "ScenarioToolCall",
    "ScenarioUsage",
    "StopReason",
    "StreamDelta",
    "StreamEnd",
    "TextDelta",
    "TokenUsage",
    "ToolCall",
    "ToolCallDelta",
    "ToolResult",
    "ToolSpec",
    "UserMessage",
    "collect",
]
