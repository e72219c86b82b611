"""Everything a run's loop needs, resolved once: model, tools, gates, sandbox, limits."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from helix.gates import EgressPolicy, GatePipeline, Policy, build_gate_pipeline
from helix.kernel.log import EventStore, Lease
from helix.providers import PriceBook, ScriptAccess
from helix.sandbox import Sandbox
from helix.tools import MemoryDoor, ToolRegistry, ToolSource, WorkflowEditor
from helix.world import ObjectStore

from ._blueprint import Blueprint
from ._clock import SYSTEM_CLOCK, Clock
from ._faults import Faults

if TYPE_CHECKING:
    from ._engine import Engine
    from ._spending import Spending
    from ._streaming import DeltaSink


@dataclass
class RunSetup:
    """A run's collaborators and settings (``Engine.setup`` builds one from the log)."""

    store: EventStore
    run_id: str
    blueprint: Blueprint
    tools: ToolRegistry
    sandbox: Sandbox
    world: Path
    pipeline: GatePipeline = field(default_factory=build_gate_pipeline)
    prices: PriceBook = field(default_factory=PriceBook)
    policy: Policy = field(default_factory=Policy)
    """The effective ceiling (workspace ∩ blueprint ∩ run)."""
    auto_approve: bool = False
    attended: bool = True
    faults: Faults = field(default_factory=Faults.from_env)
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    objects: ObjectStore | None = None
    """Where the world's snapshots keep content; ``None`` records no snapshots."""
    engine: Engine | None = None
    """Creates and drives the run's children (delegation); ``None``: it cannot have any."""
    depth: int = 0
    """How many delegations lie above this run (0: a person started it)."""
    workspace: str = "default"
    """The workspace the run belongs to (its children belong there too)."""
    scripts: ScriptAccess = True
    """Which scenario files a ``scripted:PATH`` model may read (``Engine.scripts``)."""
    clock: Clock = SYSTEM_CLOCK
    """What the run's deadlines, time budget and durations are read on (``Engine.clock``)."""
    sources: tuple[ToolSource, ...] = ()
    """Where the run's other tools come from (MCP servers, plugins): opened with its
    loop, their tools added to ``tools`` (``runtime/_sources.py``)."""
    workflows: WorkflowEditor | None = None
    """Where the run's ``edit_workflow`` calls go (``Engine(workflows=…)``); ``None``: nowhere."""
    spending: Spending | None = None
    """Where the run reserves each model call against cumulative budgets (workspace,
    blueprint, person: ``Engine(spending=…)``); ``None``: only its own caps bind it."""
    role: str = "main"
    """The role the run's own turns serve (``worker`` for a child, ``judge`` for a judge
    run; ``run.created``'s settings): what its ``model.requested`` events say."""
    memory: MemoryDoor | None = None
    """The run's memory (``remember``, ``recall``…: ``Engine(memory=…)``); ``None``: none."""
    actor: str = "system"
    """Who started the run (its ``run.created`` actor): ``user:NAME`` is its person."""
    deltas: DeltaSink | None = None
    """Where the pieces of the run's replies go as they arrive (``Engine.deltas``); with
    one, the run's calls stream (``runtime/_streaming.py``); ``None``: plain requests."""
    lease: Lease | None = None
    """The driver's lease on the run: every append of its loop is made with it, so the
    store refuses them once another driver took the run (``None``: no driver's)."""

    @functools.cached_property
    def egress(self) -> EgressPolicy:
        """The domains the run may reach (built once: every call's gates read it)."""
        return EgressPolicy(allow=self.blueprint.sandbox.network, deny=self.blueprint.sandbox.deny)
