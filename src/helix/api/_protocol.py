"""``HelixApi``: everything a client can do with runs, whichever door it comes through.

Two implementations: ``LocalApi`` (the engine and the store, in this process) and
``HttpApi`` (a ``helix serve`` over HTTP and WebSocket). Both take and return the wire
models of ``_models.py`` and raise Helix's own exceptions, so code written against one
runs unchanged against the other (one test suite checks both).
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Iterable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from helix.kernel.events import RunStatus

from ._blueprint_door import BlueprintDoor
from ._budgets import BudgetDoor
from ._choice_models import ChoiceCard, Chosen
from ._graph_models import GraphRun
from ._live_models import ProcessList
from ._memory_door import MemoryOperations
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
from ._workflow_door import WorkflowDoor

if TYPE_CHECKING:  # the runtime loads when a run is made, not when a door is chosen
    from helix.automations import Automation, AutomationCreated, AutomationList, AutomationSpec
    from helix.runtime import Blueprint, CandidatePolicy, Plan, PolicyReplay


@runtime_checkable
class HelixApi(WorkflowDoor, BudgetDoor, BlueprintDoor, MemoryOperations, Protocol):
    """What a client can do with runs (async). Errors are Helix's exception tree."""

    async def create(
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
        """Start a run; it is driven in the background (locally, or by the server).

        ``budget_usd``/``budget_tokens``: the run's own USD and token caps (over the
        blueprint's ``budget``).

        ``attended=False``: nobody will answer, so a call that needs a person's approval
        is refused at once (unless ``auto_approve``). Otherwise an approval waits for a
        decision from any client until its deadline (blueprint ``approvals.timeout_s``).

        ``blueprint``: a ``Blueprint``, its fields, or a name: of one stored in the
        workspace (a server, or a door holding the account store), ``NAME`` at its latest
        version or ``NAME@N`` at version N (the run records the version:
        ``Run.blueprint_version``); else of a blueprint file (local). ``world``: a folder name under
        the workspace's worlds (created if missing); locally, also a path to a folder.
        Default: a new, empty folder under the workspace's worlds.
        """
        ...

    async def runs(
        self,
        *,
        status: RunStatus | None = None,
        workspace: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> RunList:
        """A page of runs, newest first."""
        ...

    async def get(self, run_id: str) -> Run:
        """One run; ``RunNotFoundError`` if there is none (or it is not visible)."""
        ...

    def events(
        self, run_id: str, *, after: int = -1, follow: bool = False
    ) -> AsyncGenerator[RunEvent, None]:
        """The run's events with seq > ``after``, in order.

        With ``follow``, then live ones as they are logged, with no gap or duplicate,
        until the run has ended and its last event is delivered (at once for a run
        that ended before ``after``). A paused or waiting run is followed until it ends.
        """
        ...

    def replies(self, run_id: str) -> AsyncGenerator[ReplyPiece, None]:
        """The pieces of the run's model replies as they stream, until the run ends.

        While someone follows them the run's model calls stream (each call that starts
        from then on). Pieces are not events: none from before the call are replayed,
        and one missed is missed; each reply arrives whole as its ``model.responded``.
        An ended run yields nothing. Where nothing streams (a run driven by a Ray actor,
        a door without a reply hub) it yields nothing until the run ends.
        """
        ...

    async def approvals(self, run_id: str) -> list[Approval]:
        """The run's pending approval requests."""
        ...

    async def decide(
        self,
        run_id: str,
        request_id: str | None,
        decision: Decision,
        *,
        reason: str | None = None,
        answer: dict[str, Any] | None = None,
    ) -> Decided:
        """Allow or deny a pending request (``None``: the run's only one).

        ``ApprovalClosedError`` (a ``ConflictError``) if it was decided or has expired.
        A source's question (``Approval.question``) is answered by allowing it with
        ``answer`` (its fields) and declined by denying it; ``InvalidAnswerError`` (a
        ``ConfigError``; HTTP 422) if the answer does not fit its schema.
        """
        ...

    async def steer(self, run_id: str, message: str) -> None:
        """Tell the agent something; it reads it before its next model call."""
        ...

    async def choices(self, run_id: str) -> list[ChoiceCard]:
        """The run's options cards waiting for a person's choice (``ask_choice``)."""
        ...

    async def choose(self, run_id: str, component_id: str | None, choice: str) -> Chosen:
        """Choose an option (by id) on a waiting card (``None``: the run's only one).

        ``ComponentNotFoundError`` for a card the run never showed; ``ChoiceClosedError``
        (a ``ConflictError``) if it was answered already, waits for nothing, or the run
        has ended; ``InvalidChoiceError`` for an id that is not one of its options.
        """
        ...

    async def pause(self, run_id: str) -> Run:
        """Pause at the next safe point (a running tool finishes first)."""
        ...

    async def resume(
        self,
        run_id: str,
        *,
        budget_usd: float | None = None,
        budget_tokens: int | None = None,
        max_turns: int | None = None,
        max_seconds: float | None = None,
    ) -> Run:
        """Resume a paused or interrupted run (with new caps, if given) and drive it.

        A run paused at its own USD cap resumes only with a ``budget_usd``, at its own
        token cap only with a ``budget_tokens``, at its turn limit only with a higher
        ``max_turns``, at its time limit only with a ``max_seconds`` (``RunStateError``,
        409, without; also for a ``max_turns`` not above the turns taken); one paused at a
        cumulative budget (docs/budgets.md) resumes as it is (raise that budget first, or
        it pauses again at once).
        """
        ...

    async def cancel(self, run_id: str) -> Run:
        """Cancel: a running command is killed and the run ends ``cancelled``."""
        ...

    async def fork(
        self, run_id: str, *, turn: int, message: str | None = None, model: str | None = None
    ) -> Run:
        """Fork where a turn ended (0: the start), with its own world; it is driven too."""
        ...

    async def files(
        self, run_id: str, path: str | None = None, *, turn: Point = "now"
    ) -> list[FileEntry]:
        """The world's paths at or under ``path``, now or as they were at a turn."""
        ...

    async def read(self, run_id: str, path: str, *, turn: Point = "now") -> bytes:
        """A file's content, now or as it was at a turn."""
        ...

    async def diff(
        self, run_id: str, *, start: Point = "start", end: Point = "now", path: str | None = None
    ) -> str:
        """A unified diff of the world between two points (binary files as sizes)."""
        ...

    async def rollback(self, run_id: str, *, to: Point = "start") -> Rollback:
        """Restore the world to its start or a turn's end; refused while the run runs."""
        ...

    async def compare(self, run_a: str, run_b: str) -> Comparison:
        """Both runs, and the diff from A's last world to B's."""
        ...

    async def keep(self, run_id: str) -> Kept:
        """Make the original directory hold this branch's world."""
        ...

    def export(self, run_id: str) -> AsyncGenerator[str, None]:
        """The run's log as JSON Lines (one line per event, without the newline)."""
        ...

    async def import_run(
        self, lines: Iterable[str], *, as_id: str | None = None, workspace: str | None = None
    ) -> Imported:
        """Import an exported log as a new run, in a new empty world; paused unless it ended."""
        ...

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
        """What runs' own model calls cost, grouped and over time.

        Grouped ``by`` model, provider, blueprint, workspace, person or run, and per
        ``bucket`` (``day``/``hour``); ``since``/``until`` (a date, a UTC time or an age
        like ``7d``), ``model`` (``provider:model``), ``provider``, ``blueprint``,
        ``person`` and ``workspace`` filter the calls counted. A word it cannot take:
        ``ConfigError``.
        """
        ...

    async def trace(self, run_id: str) -> Span:
        """The run's turns, model calls, gate checks and tool calls as timed spans.

        Its child runs are nested under the calls that started them.
        """
        ...

    async def processes(self, run_id: str) -> ProcessList:
        """The background processes of the run's live world (``sandbox.live``), from its log.

        Each with its command, the turn that started it, whether it still runs, and how
        it ended; with the checkpoint image the world waits in while it is paused.
        """
        ...

    async def world_names(self, workspace: str) -> list[str]:
        """The folders of a workspace's worlds, by name (what ``create``'s ``world`` names)."""
        ...

    async def policy_replay(self, run_id: str, policy: CandidatePolicy) -> PolicyReplay:
        """What ``policy`` would have done with every logged tool call of the run.

        Runs no model and no tool, and appends nothing.
        """
        ...

    async def policy_replay_workspace(
        self, workspace: str, policy: CandidatePolicy
    ) -> list[PolicyReplay]:
        """The same over every run of a workspace, oldest first."""
        ...

    async def create_graph(
        self,
        plan: Plan | dict[str, Any] | str | os.PathLike[str],
        *,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        auto_approve: bool = False,
        attended: bool = True,
        budget_usd: float | None = None,
    ) -> Run:
        """Start a task graph (docs/graphs.md); it is driven as ``create``'s runs are.

        ``plan``: a ``helix.runtime.Plan``, its data (``Plan.to_data()``, a parsed plan
        file), or a plan file's path (read here; a server takes only data). A plan that
        is not one: ``BlueprintError`` naming the field (HTTP 400). ``world``,
        ``workspace``, ``auto_approve`` and ``attended`` are ``create``'s;
        ``budget_usd`` caps the whole graph (its tasks together never exceed it).
        """
        ...

    async def graph(self, run_id: str) -> GraphRun:
        """The graph run and its tasks' states, folded from its log.

        ``RunNotFoundError`` if there is no such run; ``NotAGraphError`` (a
        ``NotFoundError``) if the run is not a task graph.
        """
        ...

    async def retry_task(self, run_id: str, task: str) -> GraphRun:
        """Try a graph's failed task again (a new run; the other tasks untouched).

        A graph paused for it is resumed and driven. ``TaskNotFoundError`` (a
        ``NotFoundError``) for a task the graph does not have; ``RunStateError`` if the
        task has not failed for good or the graph has ended. Cancel a graph with
        ``cancel``.
        """
        ...

    async def nodes(self) -> NodeList:
        """Where runs are driven: each node's state, resources, labels and runs.

        Embedded, one node, ``local``: this machine, driving the runs whose live lease a
        process sharing this store holds. A server: its executor's nodes (``local``,
        worker processes or Ray nodes); only owners and admins of a team workspace may
        ask (others: a 403, ``forbidden``). A node's ``runs`` are those the caller may
        see; its ``run_count`` counts them all.
        """
        ...

    async def drain_node(self, node_id: str) -> Drained:
        """Stop giving the node runs; its runs move at their next turn boundary.

        ``NodeNotFoundError`` for an unknown node; ``NodeStateError`` (a
        ``ConflictError``) when its runs have nowhere to go (the only node, e.g.
        ``local``). On a server, only owners and admins of a team workspace may drain.
        """
        ...

    async def automations(self, *, workspace: str | None = None) -> AutomationList:
        """The automations of the caller's workspaces (or of ``workspace``), by name.

        Each with its ``next_firing`` (cron, unless paused) and ``last_firing`` (the
        slot, when, and the run it started or the error). docs/automations.md.
        """
        ...

    async def automation(self, automation_id: str) -> Automation:
        """One automation (``AutomationNotFoundError`` if the caller cannot see it)."""
        ...

    async def add_automation(
        self, spec: AutomationSpec, *, workspace: str | None = None
    ) -> AutomationCreated:
        """Store an automation owned by the caller; a webhook's secret is in the answer, once.

        Refused: a target blueprint, plan or workflow the workspace does not have
        (``NotFoundError``), a graph target whose stored blueprint has no tasks
        (``BlueprintError``), a name the workspace has (``AutomationExistsError``);
        viewers cannot add.
        """
        ...

    async def pause_automation(self, automation_id: str) -> Automation:
        """Stop it firing; slots while it is paused are never fired."""
        ...

    async def resume_automation(self, automation_id: str) -> Automation:
        """Fire it again from now on."""
        ...

    async def remove_automation(self, automation_id: str) -> None:
        """Delete it and the record of its firings (the runs it started stay)."""
        ...

    async def aclose(self) -> None:
        """Stop driving runs (their logs keep them) and release connections."""
        ...
