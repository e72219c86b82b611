"""The gate interface: a small async callable deciding on one tool call.

Every tool call passes the gates in one fixed order (``build_gate_pipeline``); each
decision becomes a ``gate.decided`` event. A deny stops the pipeline and always wins;
an ask, if nothing denies, becomes an approval request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from helix.tools import ToolDef

from ._policy import ApprovalRule, EgressPolicy, Policy

Verdict = Literal["allow", "deny", "ask"]


@dataclass(frozen=True, slots=True)
class Decision:
    """One gate's verdict on one call, with the reason a person (or model) will read."""

    verdict: Verdict
    reason: str


@dataclass(frozen=True, slots=True)
class GateCall:
    """The tool call being decided."""

    call_id: str
    name: str
    args: dict[str, Any]
    tool: ToolDef | None
    """``None`` when the model asked for a tool that does not exist."""
    parsed: BaseModel | None = None
    """The arguments already validated against ``tool``'s schema (the caller validated
    them once, and runs the tool with them); ``None``: the arguments gate validates."""
    malformed: str | None = None
    """Why the model's arguments could not be read (not JSON, not an object): ``args``
    is then empty, and the arguments gate denies the call with this reason."""


@dataclass(frozen=True, slots=True)
class BudgetState:
    """Spending so far against the run's caps (``None``: no cap)."""

    cap_usd: float | None = None
    spent_usd: float = 0.0
    max_seconds: float | None = None
    elapsed_s: float = 0.0


@dataclass(frozen=True, slots=True)
class GateContext:
    """What the gates know about the run making the call."""

    run_id: str
    world: Path
    """Absolute, resolved."""
    policy: Policy
    """The effective ceiling: organisation ∩ workspace ∩ blueprint ∩ run."""
    approvals: tuple[ApprovalRule, ...] = ()
    egress: EgressPolicy = field(default_factory=lambda: EgressPolicy())
    budget: BudgetState = field(default_factory=BudgetState)
    attended: bool = True
    """Someone can answer an approval (unattended runs deny what they would ask)."""
    live: bool = False
    """The run's world is live (``sandbox.live``): a tool may reach its ports at the host
    ``world`` (``helix.sandbox.WORLD_HOST``), which no egress list needs to name."""
    forced_tool: str | None = None
    """The one tool the model must call now (the run's ``tool_choice`` names it, and no
    call was accepted yet); the arguments gate denies a call of any other. ``None``:
    any tool."""


class Gate(Protocol):
    """One check in the pipeline.

    A gate may also have a ``facets`` attribute: a frozenset of facet names
    (``helix.tools.FacetName``); it then rules only on calls of tools declaring at
    least one of them (the commands gate on tools with a ``command``, say). A gate of
    a user's own may instead (or also) have ``tools``: the names of the only tools it
    rules on. The pipeline does not ask a gate about any other call, so the log holds
    no decision from a gate that had nothing to decide. Without either, a gate is
    asked about every call.
    """

    name: str

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        """Decide on ``call``."""
        ...
