"""The ordered gate pipeline every tool call passes."""

from ._builtin import ApprovalGate as ApprovalGate
from ._builtin import ArgumentsGate as ArgumentsGate
from ._builtin import BoundaryGate as BoundaryGate
from ._builtin import BudgetGate as BudgetGate
from ._builtin import CeilingGate as CeilingGate
from ._builtin import CommandsGate as CommandsGate
from ._builtin import EgressGate as EgressGate
from ._builtin import is_read_only_command as is_read_only_command
from ._gate import BudgetState as BudgetState
from ._gate import Decision as Decision
from ._gate import Gate as Gate
from ._gate import GateCall as GateCall
from ._gate import GateContext as GateContext
from ._gate import Verdict as Verdict
from ._pipeline import GatePipeline as GatePipeline
from ._pipeline import PipelineOutcome as PipelineOutcome
from ._pipeline import build_gate_pipeline as build_gate_pipeline
from ._policy import ApprovalRule as ApprovalRule
from ._policy import ArgumentConstraint as ArgumentConstraint
from ._policy import EgressPolicy as EgressPolicy
from ._policy import Policy as Policy

__all__ = [
    "ApprovalGate",
    "ApprovalRule",
    "ArgumentConstraint",
    "ArgumentsGate",
    "BoundaryGate",
    "BudgetGate",
    "BudgetState",
    "CeilingGate",
    "CommandsGate",
    "Decision",
    "EgressGate",
    "EgressPolicy",
    "Gate",
    "GateCall",
    "GateContext",
    "GatePipeline",
    "PipelineOutcome",
    "Policy",
    "Verdict",
    "build_gate_pipeline",
    "is_read_only_command",
]
