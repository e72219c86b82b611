"""One door to runs: the ``HelixApi`` protocol, its wire models, and its implementations.

``LocalApi`` works on the engine and the store in this process; ``HttpApi`` talks to
``helix serve``. ``AsyncClient`` and ``Client`` (``helix.AsyncClient``, ``helix.Client``)
are the public SDK over either. See docs/sdk.md.
"""

from ._async_client import AsyncClient as AsyncClient
from ._automations import AutomationSetup as AutomationSetup
from ._automations import start_target as start_target
from ._blueprint_door import BlueprintDoor as BlueprintDoor
from ._blueprint_door import is_blueprint_file as is_blueprint_file
from ._blueprint_models import BlueprintDiff as BlueprintDiff
from ._blueprint_models import BlueprintInfo as BlueprintInfo
from ._blueprint_models import BlueprintVersion as BlueprintVersion
from ._blueprint_models import FieldChange as FieldChange
from ._blueprint_models import blueprint_yaml as blueprint_yaml
from ._budgets import BudgetDoor as BudgetDoor
from ._budgets import StoreSpending as StoreSpending
from ._choice_models import ChoiceBody as ChoiceBody
from ._choice_models import ChoiceCard as ChoiceCard
from ._choice_models import ChoiceCardList as ChoiceCardList
from ._choice_models import ChoiceOption as ChoiceOption
from ._choice_models import Chosen as Chosen
from ._errors import error_of as error_of
from ._graph_models import GraphCreate as GraphCreate
from ._graph_models import GraphRun as GraphRun
from ._graph_models import GraphTask as GraphTask
from ._http import HttpApi as HttpApi
from ._ids import LAST as LAST
from ._ids import resolve_run as resolve_run
from ._live_models import BackgroundProcessView as BackgroundProcessView
from ._live_models import ProcessList as ProcessList
from ._local import BlueprintLookup as BlueprintLookup
from ._local import LocalApi as LocalApi
from ._login import ServerLogin as ServerLogin
from ._login import current_login as current_login
from ._login import save_login as save_login
from ._memory_door import MemoryImported as MemoryImported
from ._memory_door import MemoryOperations as MemoryOperations
from ._memory_door import MemorySource as MemorySource
from ._models import Accepted as Accepted
from ._models import Approval as Approval
from ._models import ApprovalList as ApprovalList
from ._models import Comparison as Comparison
from ._models import CreatedRun as CreatedRun
from ._models import Decided as Decided
from ._models import Decision as Decision
from ._models import DecisionBody as DecisionBody
from ._models import EventPage as EventPage
from ._models import FileEntry as FileEntry
from ._models import FileList as FileList
from ._models import ForkBody as ForkBody
from ._models import Forked as Forked
from ._models import Imported as Imported
from ._models import Kept as Kept
from ._models import Parent as Parent
from ._models import Point as Point
from ._models import ResumeBody as ResumeBody
from ._models import Rollback as Rollback
from ._models import RollbackBody as RollbackBody
from ._models import Run as Run
from ._models import RunCreate as RunCreate
from ._models import RunEvent as RunEvent
from ._models import RunList as RunList
from ._models import Spend as Spend
from ._models import SpendPoint as SpendPoint
from ._models import SteerBody as SteerBody
from ._models import Usage as Usage
from ._models import WorldList as WorldList
from ._node_models import Drained as Drained
from ._node_models import Node as Node
from ._node_models import NodeList as NodeList
from ._protocol import HelixApi as HelixApi
from ._questions import SourceQuestion as SourceQuestion
from ._reply_models import ReplyPiece as ReplyPiece
from ._sync_client import Client as Client
from ._trace_models import Span as Span
from ._workflow_door import WorkflowArg as WorkflowArg
from ._workflow_door import WorkflowDoor as WorkflowDoor
from ._worlds import WORLD_NAME as WORLD_NAME
from ._worlds import is_world_name as is_world_name

__all__ = [
    "LAST",
    "WORLD_NAME",
    "Accepted",
    "Approval",
    "ApprovalList",
    "AsyncClient",
    "AutomationSetup",
    "BackgroundProcessView",
    "BlueprintDiff",
    "BlueprintDoor",
    "BlueprintInfo",
    "BlueprintLookup",
    "BlueprintVersion",
    "BudgetDoor",
    "ChoiceBody",
    "ChoiceCard",
    "ChoiceCardList",
    "ChoiceOption",
    "Chosen",
    "Client",
    "Comparison",
    "CreatedRun",
    "Decided",
    "Decision",
    "DecisionBody",
    "Drained",
    "EventPage",
    "FieldChange",
    "FileEntry",
    "FileList",
    "ForkBody",
    "Forked",
    "GraphCreate",
    "GraphRun",
    "GraphTask",
    "HelixApi",
    "HttpApi",
    "Imported",
    "Kept",
    "LocalApi",
    "MemoryImported",
    "MemoryOperations",
    "MemorySource",
    "Node",
    "NodeList",
    "Parent",
    "Point",
    "ProcessList",
    "ReplyPiece",
    "ResumeBody",
    "Rollback",
    "RollbackBody",
    "Run",
    "RunCreate",
    "RunEvent",
    "RunList",
    "ServerLogin",
    "SourceQuestion",
    "Span",
    "Spend",
    "SpendPoint",
    "SteerBody",
    "StoreSpending",
    "Usage",
    "WorkflowArg",
    "WorkflowDoor",
    "WorldList",
    "blueprint_yaml",
    "current_login",
    "error_of",
    "is_blueprint_file",
    "is_world_name",
    "resolve_run",
    "save_login",
    "start_target",
]
