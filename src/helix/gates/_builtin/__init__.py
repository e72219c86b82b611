"""The seven built-in gates, in the order ``build_gate_pipeline`` runs them."""

from ._approval import ApprovalGate as ApprovalGate
from ._arguments import ArgumentsGate as ArgumentsGate
from ._boundary import BoundaryGate as BoundaryGate
from ._budget import BudgetGate as BudgetGate
from ._ceiling import CeilingGate as CeilingGate
from ._commands import CommandsGate as CommandsGate
from ._commands import is_read_only_command as is_read_only_command
from ._egress import EgressGate as EgressGate

__all__ = [
    "ApprovalGate",
    "ArgumentsGate",
    "BoundaryGate",
    "BudgetGate",
    "CeilingGate",
    "CommandsGate",
    "EgressGate",
    "is_read_only_command",
]
