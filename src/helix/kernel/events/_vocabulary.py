"""The built-in event vocabulary of the contract, as one closed set."""

from __future__ import annotations

from ._automation import AutomationFired
from ._context import ContextCompacted
from ._control import (
    AgentReported,
    AgentSpawned,
    BudgetExceeded,
    LeaseTakenOver,
    SteerReceived,
    SupervisorRestarted,
    UiAsked,
    UiChosen,
    UiComponent,
    upcast_ui_component_v1,
)
from ._gate import ApprovalDecided, ApprovalRequested, EgressCounted, GateDecided
from ._graph import (
    GraphPlanned,
    TaskCompleted,
    TaskFailed,
    TaskRetried,
    TaskSkipped,
    TaskStarted,
)
from ._live import LIVE_PAYLOADS
from ._mcp import (
    McpEgressDecided,
    McpServerFailed,
    McpServerStarted,
    McpServerStopped,
    McpToolsChanged,
)
from ._memory import MEMORY_PAYLOADS
from ._model import ModelFailed, ModelRejected, ModelRequested, ModelResponded
from ._payload import Payload
from ._plugin import PluginFailed, PluginLoaded, PluginReloaded
from ._registry import EventRegistry
from ._run import (
    RunCancelled,
    RunCompleted,
    RunCreated,
    RunFailed,
    RunForked,
    RunPaused,
    RunResumed,
    RunStarted,
    upcast_run_created_v1,
)
from ._sampling import McpSampled, McpSampleRefused
from ._strategy import StrategyBranched, StrategyChosen, StrategyScored
from ._tool import FileChanged, ToolCompleted, ToolInterrupted, ToolRequested, ToolStarted
from ._turn import TurnEnded, TurnStarted
from ._world import (
    EffectRecorded,
    EffectSettled,
    WorldFileSkipped,
    WorldKept,
    WorldRolledBack,
    WorldSnapshotted,
)

BUILTIN_PAYLOADS: tuple[type[Payload], ...] = (
    RunCreated,
    RunForked,
    RunStarted,
    RunResumed,
    RunPaused,
    RunCompleted,
    RunFailed,
    RunCancelled,
    TurnStarted,
    TurnEnded,
    ModelRequested,
    ModelResponded,
    ModelFailed,
    ModelRejected,
    ToolRequested,
    GateDecided,
    ApprovalRequested,
    ApprovalDecided,
    EgressCounted,
    ToolStarted,
    ToolCompleted,
    ToolInterrupted,
    FileChanged,
    SteerReceived,
    BudgetExceeded,
    AgentSpawned,
    AgentReported,
    UiComponent,
    UiAsked,
    UiChosen,
    SupervisorRestarted,
    LeaseTakenOver,
    PluginLoaded,
    PluginReloaded,
    PluginFailed,
    WorldSnapshotted,
    WorldFileSkipped,
    WorldRolledBack,
    WorldKept,
    EffectRecorded,
    EffectSettled,
    McpServerStarted,
    McpServerStopped,
    McpServerFailed,
    McpToolsChanged,
    McpEgressDecided,
    McpSampled,
    McpSampleRefused,
    GraphPlanned,
    TaskStarted,
    TaskCompleted,
    TaskFailed,
    TaskRetried,
    AutomationFired,
    StrategyBranched,
    StrategyScored,
    StrategyChosen,
    TaskSkipped,
    ContextCompacted,
    *MEMORY_PAYLOADS,
    *LIVE_PAYLOADS,
)


def builtin_registry() -> EventRegistry:
    """Return a fresh registry of the contract's vocabulary, to extend without side effects."""
    registry = EventRegistry(BUILTIN_PAYLOADS)
    registry.register_upcaster("run.created", 1, upcast_run_created_v1)
    registry.register_upcaster("ui.component", 1, upcast_ui_component_v1)
    return registry


DEFAULT_REGISTRY = builtin_registry()
"""The registry stores use unless given another."""
