"""``helix.Client``: the SDK without ``async``: ``AsyncClient`` on a loop of its own.

The client owns one event loop in a background thread (embedded runs are driven there
while the client is open); each call hands its coroutine to that loop and waits.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncGenerator, Coroutine, Iterable, Iterator, Mapping
from concurrent.futures import Future
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

from helix.kernel.events import RunStatus

from ._async_client import AsyncClient
from ._blueprint_client import ClientBlueprints
from ._budget_client import ClientBudgets
from ._choice_models import ChoiceCard, Chosen
from ._graph_models import GraphRun
from ._graphs import PlanArg
from ._live_models import ProcessList
from ._login import current_login
from ._memory_client import ClientMemory
from ._models import (
    Approval,
    Comparison,
    Decided,
    Decision,
    FileEntry,
    Imported,
    Kept,
    Point,
    Rollback,
    Run,
    RunEvent,
    RunList,
    Spend,
)
from ._node_models import Drained, NodeList
from ._reply_models import ReplyPiece
from ._trace_models import Span
from ._workflow_client import ClientWorkflows

if TYPE_CHECKING:  # the runtime loads when a run is made, not when a door is chosen
    from helix.automations import Automation, AutomationCreated, AutomationList, AutomationSpec
    from helix.runtime import Blueprint, CandidatePolicy, PolicyReplay

T = TypeVar("T")


class Client(ClientWorkflows, ClientBudgets, ClientBlueprints, ClientMemory):
    """Runs, from Python. Use it in ``with`` (or call ``close``).

    The same arguments and operations as ``AsyncClient``, without ``await``. ``store``
    is not taken: a store belongs to the loop that opened it, and this client's loop is
    its own (give ``HELIX_DB`` in ``env`` instead).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        home: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        user: str | None = None,
    ) -> None:
        """Open the client (see ``AsyncClient`` for the arguments)."""
        self._async = AsyncClient(url, token=token, home=home, env=env, user=user)
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._failed: list[BaseException] = []
        self._thread = threading.Thread(target=self._main, name="helix-client", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._failed:
            self._thread.join()
            raise self._failed[0]

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Client:
        """The server ``HELIX_SERVER`` (+ ``HELIX_TOKEN``) or a ``helix login`` names; else here."""
        env = os.environ if env is None else env
        login = current_login(env)
        return cls(login.url, token=login.token) if login is not None else cls(env=env)

    def _main(self) -> None:
        async def serve() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            try:
                await self._async.__aenter__()
            except BaseException as error:
                self._failed.append(error)
                self._ready.set()
                return
            self._ready.set()
            try:
                await self._stop.wait()
            finally:
                await self._async.aclose()

        asyncio.run(serve())

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        loop = self._loop
        if loop is None or not self._thread.is_alive():
            coroutine.close()
            raise RuntimeError("the client is closed")
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, loop)
        return future.result()

    def close(self) -> None:
        """Stop driving runs here (their logs keep them) and close the client."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and self._thread.is_alive():
            loop.call_soon_threadsafe(stop.set)
            self._thread.join()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def _iterate(self, source: AsyncGenerator[T, None]) -> Iterator[T]:
        try:
            while True:
                try:
                    yield self._call(_next(source))
                except StopAsyncIteration:
                    return
        finally:
            if self._thread.is_alive():
                self._call(_close(source))

    # -- the operations ---------------------------------------------------------------

    def create(
        self,
        objective: str,
        *,
        model: str | None = None,
        blueprint: Blueprint | dict[str, Any] | str | None = None,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        budget_usd: float | None = None,
        auto_approve: bool = False,
        attended: bool = True,
        budget_tokens: int | None = None,
    ) -> Run:
        """Start a run; it is driven in the background (here, or by the server)."""
        return self._call(
            self._async.create(
                objective, model=model, blueprint=blueprint, world=world, workspace=workspace,
                budget_usd=budget_usd, auto_approve=auto_approve, attended=attended,
                budget_tokens=budget_tokens,
            )
        )  # fmt: skip

    def runs(
        self,
        *,
        status: RunStatus | None = None,
        workspace: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> RunList:
        """A page of runs, newest first."""
        return self._call(
            self._async.runs(status=status, workspace=workspace, limit=limit, cursor=cursor)
        )

    def get(self, run_id: str) -> Run:
        """One run."""
        return self._call(self._async.get(run_id))

    def events(self, run_id: str, *, after: int = -1, follow: bool = False) -> Iterator[RunEvent]:
        """The run's events after ``after``; with ``follow``, live ones until it ends."""
        return self._iterate(self._async.events(run_id, after=after, follow=follow))

    def replies(self, run_id: str) -> Iterator[ReplyPiece]:
        """The pieces of the run's replies as they stream, until the run ends."""
        return self._iterate(self._async.replies(run_id))

    def wait(self, run_id: str) -> Run:
        """Wait until the run ends; the run as it ended."""
        return self._call(self._async.wait(run_id))

    def approvals(self, run_id: str) -> list[Approval]:
        """The run's pending approval requests."""
        return self._call(self._async.approvals(run_id))

    def decide(
        self,
        run_id: str,
        request_id: str | None,
        decision: Decision,
        *,
        reason: str | None = None,
        answer: dict[str, Any] | None = None,
    ) -> Decided:
        """Allow or deny a pending request (``None``: the run's only one).

        A source's question (``Approval.question``) is answered by allowing it with
        ``answer`` (its fields) and declined by denying it.
        """
        return self._call(
            self._async.decide(run_id, request_id, decision, reason=reason, answer=answer)
        )

    def steer(self, run_id: str, message: str) -> None:
        """Tell the agent something before its next model call."""
        self._call(self._async.steer(run_id, message))

    def choices(self, run_id: str) -> list[ChoiceCard]:
        """The run's options cards waiting for a person's choice."""
        return self._call(self._async.choices(run_id))

    def choose(self, run_id: str, component_id: str | None, choice: str) -> Chosen:
        """Choose an option (by id) on a waiting card (``None``: the run's only one)."""
        return self._call(self._async.choose(run_id, component_id, choice))

    def pause(self, run_id: str) -> Run:
        """Pause at the next safe point."""
        return self._call(self._async.pause(run_id))

    def resume(
        self,
        run_id: str,
        *,
        budget_usd: float | None = None,
        budget_tokens: int | None = None,
        max_turns: int | None = None,
        max_seconds: float | None = None,
    ) -> Run:
        """Resume (with new caps, if given) and drive the run."""
        resumed = self._async.resume(
            run_id, budget_usd=budget_usd, budget_tokens=budget_tokens, max_turns=max_turns,
            max_seconds=max_seconds,
        )  # fmt: skip
        return self._call(resumed)

    def cancel(self, run_id: str) -> Run:
        """Cancel the run."""
        return self._call(self._async.cancel(run_id))

    def fork(
        self, run_id: str, *, turn: int, message: str | None = None, model: str | None = None
    ) -> Run:
        """Fork where a turn ended, with its own world; the fork is driven too."""
        return self._call(self._async.fork(run_id, turn=turn, message=message, model=model))

    def files(
        self, run_id: str, path: str | None = None, *, turn: Point = "now"
    ) -> list[FileEntry]:
        """The world's paths at or under ``path``, now or at a turn."""
        return self._call(self._async.files(run_id, path, turn=turn))

    def read(self, run_id: str, path: str, *, turn: Point = "now") -> bytes:
        """A file's content, now or at a turn."""
        return self._call(self._async.read(run_id, path, turn=turn))

    def diff(
        self, run_id: str, *, start: Point = "start", end: Point = "now", path: str | None = None
    ) -> str:
        """A unified diff of the world between two points."""
        return self._call(self._async.diff(run_id, start=start, end=end, path=path))

    def rollback(self, run_id: str, *, to: Point = "start") -> Rollback:
        """Restore the world to its start or a turn's end."""
        return self._call(self._async.rollback(run_id, to=to))

    def compare(self, run_a: str, run_b: str) -> Comparison:
        """Both runs and the diff from A's last world to B's."""
        return self._call(self._async.compare(run_a, run_b))

    def keep(self, run_id: str) -> Kept:
        """Make the original directory hold this branch's world."""
        return self._call(self._async.keep(run_id))

    def export(self, run_id: str) -> Iterator[str]:
        """The run's log as JSON Lines."""
        return self._iterate(self._async.export(run_id))

    def import_run(
        self, lines: Iterable[str], *, as_id: str | None = None, workspace: str | None = None
    ) -> Imported:
        """Import an exported log as a new run."""
        return self._call(self._async.import_run(list(lines), as_id=as_id, workspace=workspace))

    def spend(
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
        """What runs' own model calls cost, grouped and over time.

        Grouped ``by`` model, provider, blueprint, workspace, person or run, and per
        ``bucket`` (``day``/``hour``); ``since``/``until`` (a date, a UTC time or an age
        like ``7d``), ``model`` (``provider:model``), ``provider``, ``blueprint``,
        ``person`` and ``workspace`` filter the calls counted. A word it cannot take:
        ``ConfigError``.
        """
        return self._call(
            self._async.spend(
                workspace=workspace,
                by=by,
                bucket=bucket,
                since=since,
                until=until,
                model=model,
                provider=provider,
                blueprint=blueprint,
                person=person,
            )
        )

    def processes(self, run_id: str) -> ProcessList:
        """The background processes of the run's live world (``HelixApi.processes``)."""
        return self._call(self._async.processes(run_id))

    def trace(self, run_id: str) -> Span:
        """The run's turns, model calls, gate checks and tool calls as timed spans."""
        return self._call(self._async.trace(run_id))

    def world_names(self, workspace: str) -> list[str]:
        """The folders of a workspace's worlds, by name."""
        return self._call(self._async.world_names(workspace))

    def policy_replay(self, run_id: str, policy: CandidatePolicy) -> PolicyReplay:
        """What ``policy`` would have done with the run's logged calls (nothing runs)."""
        return self._call(self._async.policy_replay(run_id, policy))

    def policy_replay_workspace(
        self, workspace: str, policy: CandidatePolicy
    ) -> list[PolicyReplay]:
        """The same over every run of a workspace, oldest first."""
        return self._call(self._async.policy_replay_workspace(workspace, policy))

    def create_graph(
        self,
        plan: PlanArg,
        *,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        auto_approve: bool = False,
        attended: bool = True,
        budget_usd: float | None = None,
    ) -> Run:
        """Start a task graph from a plan (a ``Plan``, its data, or a file's path)."""
        return self._call(
            self._async.create_graph(
                plan, world=world, workspace=workspace, auto_approve=auto_approve,
                attended=attended, budget_usd=budget_usd,
            )
        )  # fmt: skip

    def graph(self, run_id: str) -> GraphRun:
        """The graph run and its tasks' states."""
        return self._call(self._async.graph(run_id))

    def retry_task(self, run_id: str, task: str) -> GraphRun:
        """Try a graph's failed task again (a paused graph is resumed)."""
        return self._call(self._async.retry_task(run_id, task))

    def nodes(self) -> NodeList:
        """Where runs are driven: each node's state, resources, labels and runs."""
        return self._call(self._async.nodes())

    def drain_node(self, node_id: str) -> Drained:
        """Stop giving the node runs; its runs move at their next turn boundary."""
        return self._call(self._async.drain_node(node_id))

    def automations(self, *, workspace: str | None = None) -> AutomationList:
        """The automations of your workspaces (or of ``workspace``), with next and last firing."""
        return self._call(self._async.automations(workspace=workspace))

    def automation(self, automation_id: str) -> Automation:
        """One automation."""
        return self._call(self._async.automation(automation_id))

    def add_automation(
        self, spec: AutomationSpec, *, workspace: str | None = None
    ) -> AutomationCreated:
        """Add an automation; a webhook's secret is in the answer, once."""
        return self._call(self._async.add_automation(spec, workspace=workspace))

    def pause_automation(self, automation_id: str) -> Automation:
        """Stop it firing."""
        return self._call(self._async.pause_automation(automation_id))

    def resume_automation(self, automation_id: str) -> Automation:
        """Fire it again from now on."""
        return self._call(self._async.resume_automation(automation_id))

    def remove_automation(self, automation_id: str) -> None:
        """Delete it (the runs it started stay)."""
        self._call(self._async.remove_automation(automation_id))


async def _next(source: AsyncGenerator[T, None]) -> T:
    return await anext(source)


async def _close(source: AsyncGenerator[Any, None]) -> None:
    await source.aclose()
