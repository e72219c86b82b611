"""Graph children: what the ``plan`` tool does when a planner run splits its work.

The plan's tasks become a graph run, this run's child (depth one below it): its
settings are this run's, narrowed as a delegated child's are (tools within this run's,
policy the intersection, this run's approvals and sandbox, a budget within what this
run has left), with the plan as its graph. As with ``delegate``, the child's id is
logged (``agent.spawned``, with the call's id) before the graph is created, so a
``plan`` call re-run after a crash finds its graph again and waits for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from helix.errors import ConfigError
from helix.tools import Planned

from ._blueprint import Blueprint
from ._delegation import MAX_DEPTH, narrowed, run_child, usd_left
from ._plan import Plan, check_graph
from ._session import LiveSession
from ._setup import RunSetup

if TYPE_CHECKING:
    from ._engine import Engine


class GraphChildren:
    """The runtime's ``Planner`` for one run: checks a plan, runs its graph, reports it."""

    def __init__(self, engine: Engine, setup: RunSetup, session: LiveSession) -> None:
        self.engine, self.setup, self.session = engine, setup, session

    async def plan(self, plan: dict[str, Any], *, call_id: str) -> Planned:
        """Run the call's graph to its end (starting it unless it exists) and report it."""
        objective, settings = self._graph(plan)  # refused before anything is logged
        child_id, final, report = await run_child(
            self.engine,
            self.setup,
            self.session,
            call_id,
            objective,
            lambda: settings,
            what="graph",
        )
        return Planned(child_id, final.status, report)

    def _graph(self, data: dict[str, Any]) -> tuple[str, Blueprint]:
        """The plan's objective and its graph's settings (``BlueprintError`` if no plan)."""
        setup = self.setup
        if setup.depth + 1 > MAX_DEPTH:
            raise ConfigError(
                f"runs are already nested {MAX_DEPTH} deep: do this work without a task graph"
            )
        parsed = Plan.parse(data, source="plan", name=f"{setup.blueprint.name}.plan")
        own = setup.blueprint.model_copy(update={"name": parsed.blueprint.name})
        left = usd_left(self.session.state)
        # the graph's own model is this run's: its tasks name theirs, else the worker's
        settings = narrowed(setup, own, tools=own.tools, usd_left=left, model=own.model)
        settings = settings.model_copy(update={"graph": parsed.blueprint.graph})
        check_graph(settings, self.engine.tools)
        return parsed.objective, settings
