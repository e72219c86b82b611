"""Conformance suites that every backend of a Helix interface must pass."""

from ._event_store import EventStoreConformance as EventStoreConformance
from ._event_store import Reopen as Reopen
from ._live import COUNTER_SERVER as COUNTER_SERVER
from ._live import LiveWorldConformance as LiveWorldConformance
from ._live import free_port as free_port
from ._model_adapter import KEY as KEY
from ._model_adapter import MakeAdapter as MakeAdapter
from ._model_adapter import ModelAdapterConformance as ModelAdapterConformance
from ._model_adapter import history_request as history_request
from ._model_adapter import simple_request as simple_request
from ._sandbox import SandboxConformance as SandboxConformance
from ._sandbox_arena import SandboxArena as SandboxArena
from ._tool_samples import SlowCall as SlowCall
from ._tool_samples import ToolSample as ToolSample
from ._tool_samples import WorldState as WorldState
from ._tool_samples import world_changes as world_changes
from ._tool_samples import world_state as world_state
from ._tools import ToolConformance as ToolConformance

__all__ = [
    "COUNTER_SERVER",
    "KEY",
    "EventStoreConformance",
    "LiveWorldConformance",
    "MakeAdapter",
    "ModelAdapterConformance",
    "Reopen",
    "SandboxArena",
    "SandboxConformance",
    "SlowCall",
    "ToolConformance",
    "ToolSample",
    "WorldState",
    "free_port",
    "history_request",
    "simple_request",
    "world_changes",
    "world_state",
]
