"""``LocalApi``'s analyses of runs: spend across them, a run's trace, a policy replayed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from helix.kernel.events import TERMINAL_STATUSES
from helix.kernel.session import replay_run, spend, trace

from ._live_models import ProcessList
from ._models import Spend
from ._spend_query import spend_query
from ._trace_models import Span

if TYPE_CHECKING:
    from helix.kernel.log import EventStore
    from helix.runtime import CandidatePolicy, Engine, PolicyReplay


class RunAnalysis:
    """``HelixApi.spend``, ``trace``, ``policy_replay`` and ``policy_replay_workspace``.

    A mixin: it uses the API's store, engine and the workspaces its caller may see.
    """

    if TYPE_CHECKING:
        store: EventStore
        visible: frozenset[str] | None

        @property
        def engine(self) -> Engine: ...

        async def _id(self, run_id: str) -> str: ...

    async def spend(
        self,
        *,
        workspace: str | None = None,
        by: str = "model",
        bucket: str | None = None,
        since: str | None = None,
        until: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        blueprint: str | None = None,
        person: str | None = None,
    ) -> Spend:
        """What runs' own model calls cost, grouped and over time (see ``HelixApi``)."""
        query = spend_query(
            workspace=workspace, by=by, bucket=bucket, since=since, until=until, model=model,
            provider=provider, blueprint=blueprint, person=person, workspaces=self.visible,
        )  # fmt: skip
        return Spend.of(await spend(self.store, query=query), by=query.by, bucket=query.bucket)

    async def trace(self, run_id: str) -> Span:
        """The run's own events as timed spans (a fork's from its fork point), children nested."""
        return Span.of(await trace(self.store, await self._id(run_id)))

    async def processes(self, run_id: str) -> ProcessList:
        """The run's background processes, folded from its log."""
        run_id = await self._id(run_id)
        state = await replay_run(self.store, run_id)
        return ProcessList.of(run_id, state.live, finished=state.status in TERMINAL_STATUSES)

    async def policy_replay(self, run_id: str, policy: CandidatePolicy) -> PolicyReplay:
        """What ``policy`` would have done with the run's logged calls (nothing runs)."""
        from helix.runtime import replay_policy

        run_id = await self._id(run_id)  # not found: RunNotFoundError
        return await replay_policy(self.store, run_id, policy, tools=self.engine.tools)

    async def policy_replay_workspace(
        self, workspace: str, policy: CandidatePolicy
    ) -> list[PolicyReplay]:
        """The same over every run of a workspace, oldest first."""
        from helix.runtime import replay_policy_workspace

        return await replay_policy_workspace(self.store, workspace, policy, tools=self.engine.tools)
