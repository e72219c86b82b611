"""Typed, versioned events: the envelope, the vocabulary and its upcasters."""

from ._automation import AutomationFired as AutomationFired
from ._checks import Digest as Digest
from ._checks import WorldPath as WorldPath
from ._checks import is_digest as is_digest
from ._checks import path_problem as path_problem
from ._context import ContextCompacted as ContextCompacted
from ._control import AgentReported as AgentReported
from ._control import AgentSpawned as AgentSpawned
from ._control import BudgetExceeded as BudgetExceeded
from ._control import LeaseTakenOver as LeaseTakenOver
from ._control import SteerReceived as SteerReceived
from ._control import SupervisorRestarted as SupervisorRestarted
from ._control import UiAsked as UiAsked
from ._control import UiChosen as UiChosen
from ._control import UiComponent as UiComponent
from ._envelope import Event as Event
from ._envelope import NewEvent as NewEvent
from ._envelope import format_iso as format_iso
from ._envelope import parse_iso as parse_iso
from ._envelope import person_of as person_of
from ._envelope import utc_now_iso as utc_now_iso
from ._gate import ApprovalDecided as ApprovalDecided
from ._gate import ApprovalRequested as ApprovalRequested
from ._gate import EgressAttempts as EgressAttempts
from ._gate import EgressCounted as EgressCounted
from ._gate import GateDecided as GateDecided
from ._graph import GraphPlanned as GraphPlanned
from ._graph import TaskCompleted as TaskCompleted
from ._graph import TaskFailed as TaskFailed
from ._graph import TaskRetried as TaskRetried
from ._graph import TaskSkipped as TaskSkipped
from ._graph import TaskStarted as TaskStarted
from ._live import LIVE_PAYLOADS as LIVE_PAYLOADS
from ._live import WorldCheckpointed as WorldCheckpointed
from ._live import WorldProcessEnded as WorldProcessEnded
from ._live import WorldProcessStarted as WorldProcessStarted
from ._live import WorldRestored as WorldRestored
from ._live import WorldStopped as WorldStopped
from ._mcp import McpEgressDecided as McpEgressDecided
from ._mcp import McpServerFailed as McpServerFailed
from ._mcp import McpServerStarted as McpServerStarted
from ._mcp import McpServerStopped as McpServerStopped
from ._mcp import McpToolsChanged as McpToolsChanged
from ._memory import MEMORY_PAYLOADS as MEMORY_PAYLOADS
from ._memory import MemoryArtifactOpened as MemoryArtifactOpened
from ._memory import MemoryArtifactSaved as MemoryArtifactSaved
from ._memory import MemoryRecalled as MemoryRecalled
from ._memory import MemoryRemembered as MemoryRemembered
from ._memory import MemoryScope as MemoryScope
from ._model import MistakeKind as MistakeKind
from ._model import ModelFailed as ModelFailed
from ._model import ModelRejected as ModelRejected
from ._model import ModelRequested as ModelRequested
from ._model import ModelResponded as ModelResponded
from ._model import ToolCall as ToolCall
from ._model import Usage as Usage
from ._payload import ForkPoint as ForkPoint
from ._payload import Payload as Payload
from ._plugin import PluginFailed as PluginFailed
from ._plugin import PluginLoaded as PluginLoaded
from ._plugin import PluginReloaded as PluginReloaded
from ._question import ApprovalQuestion as ApprovalQuestion
from ._question import answer_problem as answer_problem
from ._question import flat_schema as flat_schema
from ._question import parse_field as parse_field
from ._registry import EventRegistry as EventRegistry
from ._registry import Upcaster as Upcaster
from ._run import Budget as Budget
from ._run import RunCancelled as RunCancelled
from ._run import RunCompleted as RunCompleted
from ._run import RunCreated as RunCreated
from ._run import RunFailed as RunFailed
from ._run import RunForked as RunForked
from ._run import RunPaused as RunPaused
from ._run import RunResumed as RunResumed
from ._run import RunSettings as RunSettings
from ._run import RunStarted as RunStarted
from ._sampling import McpSampled as McpSampled
from ._sampling import McpSampleRefused as McpSampleRefused
from ._status import RUN_STATUSES as RUN_STATUSES
from ._status import STATUS_AFTER as STATUS_AFTER
from ._status import TERMINAL_EVENTS as TERMINAL_EVENTS
from ._status import TERMINAL_STATUSES as TERMINAL_STATUSES
from ._status import RunStatus as RunStatus
from ._strategy import StrategyBranch as StrategyBranch
from ._strategy import StrategyBranched as StrategyBranched
from ._strategy import StrategyChosen as StrategyChosen
from ._strategy import StrategyScored as StrategyScored
from ._tool import FileChanged as FileChanged
from ._tool import ToolCompleted as ToolCompleted
from ._tool import ToolInterrupted as ToolInterrupted
from ._tool import ToolRequested as ToolRequested
from ._tool import ToolStarted as ToolStarted
from ._turn import TurnEnded as TurnEnded
from ._turn import TurnStarted as TurnStarted
from ._vocabulary import BUILTIN_PAYLOADS as BUILTIN_PAYLOADS
from ._vocabulary import DEFAULT_REGISTRY as DEFAULT_REGISTRY
from ._vocabulary import builtin_registry as builtin_registry
from ._world import EffectOutcome as EffectOutcome
from ._world import EffectRecorded as EffectRecorded
from ._world import EffectSettled as EffectSettled
from ._world import WorldConflict as WorldConflict
from ._world import WorldEntry as WorldEntry
from ._world import WorldFileSkipped as WorldFileSkipped
from ._world import WorldKept as WorldKept
from ._world import WorldRolledBack as WorldRolledBack
from ._world import WorldSnapshotted as WorldSnapshotted

__all__ = [
    "BUILTIN_PAYLOADS",
    "DEFAULT_REGISTRY",
    "LIVE_PAYLOADS",
    "MEMORY_PAYLOADS",
    "RUN_STATUSES",
    "STATUS_AFTER",
    "TERMINAL_EVENTS",
    "TERMINAL_STATUSES",
    "AgentReported",
    "AgentSpawned",
    "ApprovalDecided",
    "ApprovalQuestion",
    "ApprovalRequested",
    "AutomationFired",
    "Budget",
    "BudgetExceeded",
    "ContextCompacted",
    "Digest",
    "EffectOutcome",
    "EffectRecorded",
    "EffectSettled",
    "EgressAttempts",
    "EgressCounted",
    "Event",
    "EventRegistry",
    "FileChanged",
    "ForkPoint",
    "GateDecided",
    "GraphPlanned",
    "LeaseTakenOver",
    "McpEgressDecided",
    "McpSampleRefused",
    "McpSampled",
    "McpServerFailed",
    "McpServerStarted",
    "McpServerStopped",
    "McpToolsChanged",
    "MemoryArtifactOpened",
    "MemoryArtifactSaved",
    "MemoryRecalled",
    "MemoryRemembered",
    "MemoryScope",
    "MistakeKind",
    "ModelFailed",
    "ModelRejected",
    "ModelRequested",
    "ModelResponded",
    "NewEvent",
    "Payload",
    "PluginFailed",
    "PluginLoaded",
    "PluginReloaded",
    "RunCancelled",
    "RunCompleted",
    "RunCreated",
    "RunFailed",
    "RunForked",
    "RunPaused",
    "RunResumed",
    "RunSettings",
    "RunStarted",
    "RunStatus",
    "SteerReceived",
    "StrategyBranch",
    "StrategyBranched",
    "StrategyChosen",
    "StrategyScored",
    "SupervisorRestarted",
    "TaskCompleted",
    "TaskFailed",
    "TaskRetried",
    "TaskSkipped",
    "TaskStarted",
    "ToolCall",
    "ToolCompleted",
    "ToolInterrupted",
    "ToolRequested",
    "ToolStarted",
    "TurnEnded",
    "TurnStarted",
    "UiAsked",
    "UiChosen",
    "UiComponent",
    "Upcaster",
    "Usage",
    "WorldCheckpointed",
    "WorldConflict",
    "WorldEntry",
    "WorldFileSkipped",
    "WorldKept",
    "WorldPath",
    "WorldProcessEnded",
    "WorldProcessStarted",
    "WorldRestored",
    "WorldRolledBack",
    "WorldSnapshotted",
    "WorldStopped",
    "answer_problem",
    "builtin_registry",
    "flat_schema",
    "format_iso",
    "is_digest",
    "parse_field",
    "parse_iso",
    "path_problem",
    "person_of",
    "utc_now_iso",
]
