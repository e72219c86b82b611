"""Model providers: one interface, one adapter per provider family, at the edge.

A *provider* is where a model lives and how to reach it (base URL, key); an *adapter*
speaks that provider family's wire format. Everything else (retries, fallback, cost)
wraps an adapter without knowing which one it is.
"""

from ._adapter import ModelAdapter as ModelAdapter
from ._assemble import collect as collect
from ._cost import Price as Price
from ._cost import PriceBook as PriceBook
from ._events import failed as failed_event
from ._events import responded as responded_event
from ._fallback import FallbackModel as FallbackModel
from ._local import Hardware as Hardware
from ._local import LocalModel as LocalModel
from ._local import Recommendation as Recommendation
from ._local import ServerListing as ServerListing
from ._local import detect_hardware as detect_hardware
from ._local import list_servers as list_servers
from ._local import recommend as recommend
from ._local import why_no_pick as why_no_pick
from ._provider import LOCAL_KEY as LOCAL_KEY
from ._provider import PROVIDERS as PROVIDERS
from ._provider import Connection as Connection
from ._provider import ProviderSpec as ProviderSpec
from ._provider import Quirks as Quirks
from ._registry import ROLE_ALIASES as ROLE_ALIASES
from ._registry import ROLES as ROLES
from ._registry import ModelOpener as ModelOpener
from ._registry import ModelSpec as ModelSpec
from ._registry import build_model as build_model
from ._registry import check_model as check_model
from ._registry import check_usable as check_usable
from ._registry import model_for_role as model_for_role
from ._registry import open_model as open_model
from ._registry import parse_model_name as parse_model_name
from ._registry import register_provider as register_provider
from ._registry import role_name as role_name
from ._registry import unregister_provider as unregister_provider
from ._retry import FailureHook as FailureHook
from ._retry import ModelFailure as ModelFailure
from ._retry import RetryingModel as RetryingModel
from ._retry import RetryPolicy as RetryPolicy
from ._scenario import Scenario as Scenario
from ._scenario import ScenarioHttpError as ScenarioHttpError
from ._scenario import ScenarioStep as ScenarioStep
from ._scenario import ScenarioToolCall as ScenarioToolCall
from ._scenario import ScenarioUsage as ScenarioUsage
from ._scenario import estimate_tokens as estimate_tokens
from ._scripted import ScriptedModel as ScriptedModel
from ._scripts import ScriptAccess as ScriptAccess
from ._sizing import Suggestion as Suggestion
from ._sizing import suggest_model as suggest_model
from ._sizing import why_none_fits as why_none_fits
from ._types import TOOL_CHOICES as TOOL_CHOICES
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
from ._types import ToolChoice as ToolChoice
from ._types import ToolResult as ToolResult
from ._types import ToolSpec as ToolSpec
from ._types import UserMessage as UserMessage

__all__ = [
    "LOCAL_KEY",
    "PROVIDERS",
    "ROLES",
    "ROLE_ALIASES",
    "TOOL_CHOICES",
    "AssistantMessage",
    "ChatMessage",
    "Connection",
    "FailureHook",
    "FallbackModel",
    "Hardware",
    "LocalModel",
    "ModelAdapter",
    "ModelFailure",
    "ModelOpener",
    "ModelRequest",
    "ModelResponse",
    "ModelSpec",
    "Price",
    "PriceBook",
    "ProviderSpec",
    "Quirks",
    "Recommendation",
    "RetryPolicy",
    "RetryingModel",
    "Scenario",
    "ScenarioHttpError",
    "ScenarioStep",
    "ScenarioToolCall",
    "ScenarioUsage",
    "ScriptAccess",
    "ScriptedModel",
    "ServerListing",
    "StopReason",
    "StreamDelta",
    "StreamEnd",
    "Suggestion",
    "TextDelta",
    "TokenUsage",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "ToolResult",
    "ToolSpec",
    "UserMessage",
    "build_model",
    "check_model",
    "check_usable",
    "collect",
    "detect_hardware",
    "estimate_tokens",
    "failed_event",
    "list_servers",
    "model_for_role",
    "open_model",
    "parse_model_name",
    "recommend",
    "register_provider",
    "responded_event",
    "role_name",
    "suggest_model",
    "unregister_provider",
    "why_no_pick",
    "why_none_fits",
]
