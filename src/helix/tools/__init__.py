"""Tools: declared once, registered in a typed registry, executed through a sandbox."""

from ._builtin import BUILTIN_TOOLS as BUILTIN_TOOLS
from ._builtin import builtin_registry as builtin_registry
from ._delegate import Delegation as Delegation
from ._delegate import Delegator as Delegator
from ._examples import RecordService as RecordService
from ._examples import example_tools as example_tools
from ._facets import EffectKind as EffectKind
from ._facets import FacetName as FacetName
from ._facets import Facets as Facets
from ._facets import PathAccess as PathAccess
from ._live import LIVE_TOOLS as LIVE_TOOLS
from ._memory import MEMORY_TOOLS as MEMORY_TOOLS
from ._memory import MemoryDoor as MemoryDoor
from ._memory import MemoryScopeArg as MemoryScopeArg
from ._memory import RememberedItem as RememberedItem
from ._memory import StoredArtifact as StoredArtifact
from ._memory import open_artifact as open_artifact
from ._memory import recall as recall
from ._memory import remember as remember
from ._memory import save_artifact as save_artifact
from ._plan import Planned as Planned
from ._plan import Planner as Planner
from ._quota import QuotaExceeded as QuotaExceeded
from ._quota import WorldQuota as WorldQuota
from ._source import Asker as Asker
from ._source import Elicitation as Elicitation
from ._source import ElicitationAnswer as ElicitationAnswer
from ._source import SampleMessage as SampleMessage
from ._source import Sampler as Sampler
from ._source import SampleReply as SampleReply
from ._source import SampleRequest as SampleRequest
from ._source import SourceHost as SourceHost
from ._source import ToolSource as ToolSource
from ._source import compose_tools as compose_tools
from ._tool import Effect as Effect
from ._tool import EffectHook as EffectHook
from ._tool import FileChange as FileChange
from ._tool import LiveDoor as LiveDoor
from ._tool import ToolContext as ToolContext
from ._tool import ToolDef as ToolDef
from ._tool import ToolFunction as ToolFunction
from ._tool import ToolRegistry as ToolRegistry
from ._tool import ToolResult as ToolResult
from ._tool import UiPart as UiPart
from ._tool import tool as tool
from ._ui import ChoiceAnswer as ChoiceAnswer
from ._ui import Chooser as Chooser
from ._workflow import WorkflowEdit as WorkflowEdit
from ._workflow import WorkflowEditor as WorkflowEditor
from ._workflow import edit_workflow as edit_workflow

__all__ = [
    "BUILTIN_TOOLS",
    "LIVE_TOOLS",
    "MEMORY_TOOLS",
    "Asker",
    "ChoiceAnswer",
    "Chooser",
    "Delegation",
    "Delegator",
    "Effect",
    "EffectHook",
    "EffectKind",
    "Elicitation",
    "ElicitationAnswer",
    "FacetName",
    "Facets",
    "FileChange",
    "LiveDoor",
    "MemoryDoor",
    "MemoryScopeArg",
    "PathAccess",
    "Planned",
    "Planner",
    "QuotaExceeded",
    "RecordService",
    "RememberedItem",
    "SampleMessage",
    "SampleReply",
    "SampleRequest",
    "Sampler",
    "SourceHost",
    "StoredArtifact",
    "ToolContext",
    "ToolDef",
    "ToolFunction",
    "ToolRegistry",
    "ToolResult",
    "ToolSource",
    "UiPart",
    "WorkflowEdit",
    "WorkflowEditor",
    "WorldQuota",
    "builtin_registry",
    "compose_tools",
    "edit_workflow",
    "example_tools",
    "open_artifact",
    "recall",
    "remember",
    "save_artifact",
    "tool",
]
