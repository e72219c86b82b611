"""Tree of thoughts: fork a run N ways at a turn, drive the branches, judge them, keep one.

A run whose blueprint names ``strategy: {kind: tree_of_thoughts, …}`` is driven by
``TreeOfThoughtsLoop`` in place of the plain ``RunLoop`` (``loop_for``; the engine's
supervisor, lease and restarts are the same). Its steps, each recorded in the run's
own log before the next begins, so a driver that died carries on where the log says:

1. the run's own turns up to ``at_turn`` (the plain loop; a run that ends before it
   never branches);
2. ``strategy.branched``: the branches' ids (and their judges'), before any is made;
3. each branch made (``fork_with_world``: its own world, its own budget) unless it
   exists, then driven to its end, in parallel, each a child of a supervisor; each
   judged once it ends, ``strategy.scored`` (a branch scored is never judged again,
   a branch that ended is never driven again);
4. ``strategy.chosen``: the best score above ``min_score``; its world is brought back
   to the run's directory (``keep``: ``world.kept``); branches still going are cancelled;
5. ``run.completed`` (the kept branch's summary), or ``run.failed`` when none was kept.

A fork of a strategy run (a branch, or one a person makes) is driven as a plain run.
Cancelling the strategy run cancels the branches still going.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from helix.errors import ConfigError, HelixError, RunNotFoundError
from helix.kernel.events import (
    TERMINAL_STATUSES,
    Budget,
    NewEvent,
    Payload,
    RunCompleted,
    RunFailed,
    RunResumed,
    StrategyBranch,
    StrategyBranched,
    StrategyChosen,
    StrategyScored,
)
from helix.kernel.log import new_run_id
from helix.kernel.session import BranchProgress, SessionState, StrategyProgress, replay_run
from helix.providers import ModelAdapter, parse_model_name

from ._control import cancel
from ._judge import judge, settle
from ._loop import RunLoop
from ._session import LiveSession
from ._setup import RunSetup
from ._strategies import RunJudge, TreeOfThoughts
from ._supervisor import ChildSpec, open_supervisor
from ._until import Until, holds
from ._world_control import fork_with_world, keep

if TYPE_CHECKING:
    from ._engine import Engine


def loop_for(setup: RunSetup, model: ModelAdapter | None) -> RunLoop | TreeOfThoughtsLoop:
    """The loop that drives the run: its strategy's, or the plain one."""
    strategy = setup.blueprint.strategy
    if isinstance(strategy, TreeOfThoughts):
        return TreeOfThoughtsLoop(setup, model, strategy)
    return RunLoop(setup, model)


class TreeOfThoughtsLoop:
    """Drives a tree-of-thoughts run; ``run()`` is one incarnation, as ``RunLoop.run``."""

    def __init__(
        self, setup: RunSetup, model: ModelAdapter | None, strategy: TreeOfThoughts
    ) -> None:
        self.setup, self.model, self.strategy = setup, model, strategy
        self._appending = asyncio.Lock()

    async def run(self, until: Until | None = None, *, steps: int | None = None) -> SessionState:
        """Drive the run to its end (or until ``until`` holds, or ``steps`` were taken).

        Up to the branching point the run's own loop takes its steps; everything after
        it (branch, drive, judge, keep) is one step.
        """
        setup = self.setup
        record = await setup.store.get_run(setup.run_id)
        state = await replay_run(setup.store, setup.run_id)
        if record.parent is not None:  # a branch (or a person's fork): a plain run
            return await RunLoop(setup, self.model).run(until, steps=steps)
        resumed = True
        if state.strategy is None:
            state = await self._own_turns(until, steps)
            resumed = False
            if state.status in TERMINAL_STATUSES or not self._branch_here(state):
                return state
            if steps is not None or (until is not None and holds(until, state)):
                return state
        elif until is not None and holds(until, state):
            return state
        return await self._conduct(resumed)

    def _branch_here(self, state: SessionState) -> bool:
        at = self.strategy.at_turn
        return state.status == "running" and not state.in_turn and state.turn >= at

    async def _own_turns(self, until: Until | None, steps: int | None) -> SessionState:
        """The plain loop, up to the branching point (or the caller's stop)."""

        def stop(state: SessionState) -> bool:
            return self._branch_here(state) or (until is not None and holds(until, state))

        return await RunLoop(self.setup, self.model).run(stop, steps=steps)

    async def _conduct(self, resumed: bool) -> SessionState:
        setup = self.setup
        session = await LiveSession.load(
            setup.store, setup.run_id, clock=setup.clock, lease=setup.lease
        )
        async with asyncio.TaskGroup() as group:
            watcher = group.create_task(session.watch())
            try:
                if session.state.status not in TERMINAL_STATUSES:
                    last = await setup.store.event_at(setup.run_id, session.state.head)
                    if resumed and (last is None or last.type != "run.resumed"):
                        await self._append(session, RunResumed())
                    await session.wait_until(lambda s: s.status != "paused", None)
                    work = self._branch_judge_keep(session)
                    stopped, ending = await session.unless_stopped(work)
                    if stopped or ending is None:  # cancelled: so are the branches still going
                        await asyncio.shield(self._close(session.state, keep_id=None))
                    else:
                        await self._append(session, ending)
            finally:
                watcher.cancel()
        return session.state

    async def _append(self, session: LiveSession, payload: Payload) -> None:
        async with self._appending:  # branches finish together: one append at a time
            event = NewEvent(payload, turn=session.state.turn)
            await session.append([event], unless=lambda s: s.status in TERMINAL_STATUSES)

    async def _branch_judge_keep(self, session: LiveSession) -> Payload:
        """Branch, drive, judge, choose, keep, close; returns the run's last event.

        Not appended here: the run's end stops the session's work.
        """
        if session.state.strategy is None:
            await self._append(session, self._plan(session.state))
        progress = session.state.strategy
        assert progress is not None
        if not progress.decided:
            await self._make_branches(progress)
            await self._drive_and_judge(session, progress)
            await session.wait_until(lambda s: s.status != "paused", None)  # a person holds it
            await self._append(session, self._choose(progress))
        if progress.chosen is not None and not progress.kept:
            await keep(_engine(self.setup), progress.chosen, by="system", driver=self.setup.lease)
        await self._close(session.state, keep_id=progress.chosen)
        return await self._ending(progress)

    def _plan(self, state: SessionState) -> StrategyBranched:
        """The branches to make: their ids and judges' ids, checked before they are logged."""
        engine, strategy = _engine(self.setup), self.strategy
        for index in range(strategy.branches):
            model = strategy.model(index)
            if model is not None:
                engine.check_model(model)
                engine.check_usable(model)
        if strategy.budget_usd is not None:
            prices = self.setup.prices
            for name in {strategy.model(i) or state.model for i in range(strategy.branches)}:
                for one in name.split(" | "):
                    if not prices.knows(*parse_model_name(one)):
                        raise ConfigError(
                            f"{one} has no known price, so the branches' budget_usd cannot"
                            " bind it: give its price in the blueprint (prices:) or drop it"
                        )
        judged = isinstance(strategy.judge, RunJudge)
        branches = [
            StrategyBranch(
                run_id=new_run_id(),
                message=strategy.message(index),
                model=strategy.model(index),
                judge_run_id=new_run_id() if judged else None,
            )
            for index in range(strategy.branches)
        ]
        return StrategyBranched(
            turn=state.turn,
            branches=branches,
            budget_usd=strategy.budget_usd,
            judge=strategy.judge.describe(),
        )

    async def _make_branches(self, progress: StrategyProgress) -> None:
        """Fork each branch that is not there yet (the process may have died midway)."""
        engine, setup = _engine(self.setup), self.setup
        state = await replay_run(setup.store, setup.run_id)
        budget = None
        if progress.budget_usd is not None:
            budget = (state.budget or Budget()).model_copy(update={"usd": progress.budget_usd})
        for branch in progress.branches:
            try:
                await setup.store.get_run(branch.run_id)
                continue
            except RunNotFoundError:
                pass
            await fork_with_world(
                engine,
                setup.run_id,
                progress.turn,
                message=branch.message,
                model=branch.model,
                fork_id=branch.run_id,
                budget=budget,
            )

    async def _drive_and_judge(self, session: LiveSession, progress: StrategyProgress) -> None:
        """Each branch not yet scored: driven to its end, then judged, in parallel."""
        engine = _engine(self.setup)

        async def gave_up(child: str, error: BaseException) -> None:
            branch = child.removeprefix("branch:")
            detail = f"the branch's driver kept crashing: {type(error).__name__}: {error}"
            scored = StrategyScored(branch=branch, status="failed", score=None, detail=detail)
            await self._append(session, scored)

        def work(branch: BranchProgress) -> ChildSpec:
            async def start() -> None:
                record = await engine.store.get_run(branch.run_id)
                after = record.parent.seq if record.parent is not None else -1
                final = await settle(engine, branch.run_id, after)
                if final.status == "completed":
                    score, detail = await judge(engine, self.setup, self.strategy, branch)
                else:
                    score, detail = None, f"the branch ended {final.status}: not judged"
                scored = StrategyScored(
                    branch=branch.run_id, status=final.status, score=score, detail=detail
                )
                await self._append(session, scored)

            return ChildSpec(id=f"branch:{branch.run_id}", start=start, fatal=(HelixError,))

        async with open_supervisor(on_give_up=gave_up, clock=self.setup.clock) as supervisor:
            for branch in progress.branches:
                if not branch.scored:
                    supervisor.start_child(work(branch))

    def _choose(self, progress: StrategyProgress) -> StrategyChosen:
        floor = self.strategy.min_score
        best: BranchProgress | None = None
        for branch in progress.branches:  # the first of equal scores wins
            score = branch.score
            if score is not None and score > floor and (best is None or score > (best.score or 0)):
                best = branch
        others = [b.run_id for b in progress.branches if best is None or b is not best]
        if best is None:
            reason = f"no branch scored above {floor:g}"
            return StrategyChosen(branch=None, score=None, reason=reason, closed=others)
        count = len(progress.branches)
        reason = f"the best score of {count} branches ({best.score:g})"
        return StrategyChosen(branch=best.run_id, score=best.score, reason=reason, closed=others)

    async def _close(self, state: SessionState, keep_id: str | None) -> None:
        """Cancel the branches (other than the kept one) that have not ended."""
        progress = state.strategy
        for branch in progress.branches if progress is not None else []:
            if branch.run_id == keep_id:
                continue
            with contextlib.suppress(HelixError):  # not made, or ended meanwhile
                if (await self.setup.store.get_run(branch.run_id)).status not in TERMINAL_STATUSES:
                    await cancel(self.setup.store, branch.run_id, by="system")

    async def _ending(self, progress: StrategyProgress) -> Payload:
        if progress.chosen is None:
            scores = ", ".join(
                f"{b.run_id}: {'-' if b.score is None else f'{b.score:g}'}"
                for b in progress.branches
            )
            return RunFailed(error=f"tree of thoughts: no branch was kept ({scores})")
        kept = await replay_run(self.setup.store, progress.chosen)
        score = next(b.score for b in progress.branches if b.run_id == progress.chosen)
        summary = kept.summary or "(no summary)"
        return RunCompleted(summary=f"kept branch {progress.chosen} (score {score:g}): {summary}")


def _engine(setup: RunSetup) -> Engine:
    if setup.engine is None:
        raise ConfigError("a tree of thoughts is driven by an engine (it forks the run)")
    return setup.engine
