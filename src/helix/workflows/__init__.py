"""Workflows: one definition per name in a workspace, versioned, run as a task graph.

Edited as YAML (``load_text``/``dump``), on the dashboard's canvas (``to_canvas``/
``from_canvas``) and by an agent's ``edit_workflow`` calls (``apply_ops``): each gives
the same ``Workflow``, saved as a new version (``Workflows``, over a ``WorkflowStore``
in the database ``HELIX_DB`` names). ``to_plan`` makes its task graph. See
docs/workflows.md.
"""

from ._canvas import Canvas as Canvas
from ._canvas import canvas_add_node as canvas_add_node
from ._canvas import canvas_connect as canvas_connect
from ._canvas import canvas_disconnect as canvas_disconnect
from ._canvas import canvas_move as canvas_move
from ._canvas import canvas_remove_node as canvas_remove_node
from ._canvas import canvas_set_field as canvas_set_field
from ._canvas import canvas_set_workflow as canvas_set_workflow
from ._canvas import from_canvas as from_canvas
from ._canvas import to_canvas as to_canvas
from ._model import MAX_STEPS as MAX_STEPS
from ._model import Condition as Condition
from ._model import Edge as Edge
from ._model import Position as Position
from ._model import Step as Step
from ._model import StepKind as StepKind
from ._model import Workflow as Workflow
from ._open import open_workflows as open_workflows
from ._ops import MAX_OPS as MAX_OPS
from ._ops import AddStep as AddStep
from ._ops import Connect as Connect
from ._ops import Disconnect as Disconnect
from ._ops import EditOp as EditOp
from ._ops import Move as Move
from ._ops import RemoveStep as RemoveStep
from ._ops import SetField as SetField
from ._ops import SetWorkflow as SetWorkflow
from ._ops import apply_ops as apply_ops
from ._ops import describe_change as describe_change
from ._ops import parse_ops as parse_ops
from ._plan import to_plan as to_plan
from ._service import RunEditor as RunEditor
from ._service import Workflows as Workflows
from ._service import WorkflowSummary as WorkflowSummary
from ._service import WorkflowVersion as WorkflowVersion
from ._store import EditHow as EditHow
from ._store import StoredVersion as StoredVersion
from ._store import WorkflowStore as WorkflowStore
from ._text import MAX_TEXT as MAX_TEXT
from ._text import dump as dump
from ._text import from_data as from_data
from ._text import load_file as load_file
from ._text import load_in_world as load_in_world
from ._text import load_text as load_text

__all__ = [
    "MAX_OPS",
    "MAX_STEPS",
    "MAX_TEXT",
    "AddStep",
    "Canvas",
    "Condition",
    "Connect",
    "Disconnect",
    "Edge",
    "EditHow",
    "EditOp",
    "Move",
    "Position",
    "RemoveStep",
    "RunEditor",
    "SetField",
    "SetWorkflow",
    "Step",
    "StepKind",
    "StoredVersion",
    "Workflow",
    "WorkflowStore",
    "WorkflowSummary",
    "WorkflowVersion",
    "Workflows",
    "apply_ops",
    "canvas_add_node",
    "canvas_connect",
    "canvas_disconnect",
    "canvas_move",
    "canvas_remove_node",
    "canvas_set_field",
    "canvas_set_workflow",
    "describe_change",
    "dump",
    "from_canvas",
    "from_data",
    "load_file",
    "load_in_world",
    "load_text",
    "open_workflows",
    "parse_ops",
    "to_canvas",
    "to_plan",
]
