"""``LocalApi``'s automations: list, add, pause, resume, remove; and ``start_target``.

The store holds them (``helix.automations``); this door checks what a caller may see
(their workspaces), that a target exists, and makes ids, secrets and times. Who may
change what (viewers may not) is the server's check, as for runs. ``start_target`` is
the one place an automation's target becomes a run: the server's scheduler and webhook
call it.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from helix.automations import (
    Automation,
    AutomationCreated,
    AutomationList,
    AutomationNotFoundError,
    AutomationSpec,
    AutomationStore,
    CronTrigger,
    GraphTarget,
    WebhookTrigger,
    WorkflowTarget,
    new_secret,
)
from helix.errors import BlueprintError, ConflictError
from helix.kernel.events import AutomationFired, NewEvent, Payload, format_iso
from helix.kernel.log import EventStore, RunRecord

if TYPE_CHECKING:
    from helix.runtime import Blueprint, Clock

    from ._local import LocalApi

_Lookup = Callable[[str, str], Awaitable["Blueprint"]]


async def check_target(api: LocalApi, spec: AutomationSpec, workspace: str) -> None:
    """Refuse a target that could never start: an unknown blueprint or plan, an unwired kind."""
    target = spec.target
    if isinstance(target, GraphTarget):
        await _plan(api, workspace, target)
        return
    if isinstance(target, WorkflowTarget):
        await api.workflow(target.workflow, workspace=workspace)
        return
    await api.stored_blueprint(workspace, target.blueprint)
    if target.model is not None:
        api.engine.check_model([target.model])


async def _plan(api: LocalApi, workspace: str, target: GraphTarget) -> Blueprint:
    """The stored blueprint a graph target names: it must hold tasks (a plan)."""
    blueprint = await api.stored_blueprint(workspace, target.plan)
    if blueprint.graph is None:
        raise BlueprintError(
            f"the stored blueprint {target.plan!r} has no tasks: a graph target names a plan"
            " (a blueprint with tasks, docs/graphs.md)"
        )
    return blueprint


async def start_target(api: LocalApi, automation: Automation, fired: AutomationFired) -> str:
    """Start what ``automation`` targets, as ``api``'s actor; the started run's id.

    A blueprint target is a run of the workspace's stored blueprint, with ``fired``
    logged right after its ``run.created``; a graph target, a run of the stored plan (a
    blueprint with tasks) it names; a workflow target, the workflow's task graph.
    """
    target = automation.target
    if isinstance(target, GraphTarget):
        plan = await _plan(api, automation.workspace, target)
        objective = target.objective or f"Run the task graph {target.plan}"
        run = await api.create(objective, blueprint=plan, workspace=automation.workspace, why=fired)
        return run.id
    if isinstance(target, WorkflowTarget):
        where = automation.workspace
        run = await api.start_workflow(
            target.workflow, objective=target.objective, workspace=where, why=fired
        )
        return run.id
    blueprint = await api.stored_blueprint(automation.workspace, target.blueprint)
    # by name where the door holds the stored blueprints: the run records their version
    named = target.blueprint if api.accounts_source is not None else blueprint
    run = await api.create(
        target.objective,
        blueprint=named,
        model=target.model,
        workspace=automation.workspace,
        why=fired,
    )
    return run.id


def iso(seconds: float) -> str:
    """POSIX seconds as the log writes times."""
    return format_iso(datetime.fromtimestamp(seconds, UTC))


@dataclass(slots=True)
class AutomationSetup:
    """What ``LocalApi`` needs for automations (its ``automations=`` argument)."""

    store: AutomationStore
    blueprints: _Lookup
    """Finds a workspace's stored blueprint by name (a target's): the server's accounts."""
    clock: Clock | None = None
    """What time it is for automations (creation, next firing); default: the engine's."""


class AutomationDoor:
    """The automation half of ``LocalApi`` (mixed in; ``LocalApi`` sets the state)."""

    visible: frozenset[str] | None
    actor: str
    workspace: str
    store: EventStore
    automation_setup: AutomationSetup | None

    async def record_why(self, record: RunRecord, why: Payload | None) -> None:
        """Log ``why`` (``automation.fired``) right after a new run's ``run.created``."""
        if why is not None:
            await self.store.append(record.id, [NewEvent(why)], expected_seq=record.next_seq)

    def _setup(self) -> AutomationSetup:
        if self.automation_setup is None:
            raise ConflictError(
                "automations live on a server's database: this door has none"
                " (set HELIX_SERVER, or HELIX_DB to the server's database)"
            )
        return self.automation_setup

    async def automation_store(self) -> AutomationStore:
        """The store (``ConflictError`` if this door has none)."""
        return self._setup().store

    def now(self) -> float:
        """What time it is for automations (the given clock, else the engine's)."""
        clock = self._setup().clock
        if clock is not None:
            return clock.now()
        engine: Any = getattr(self, "engine")  # noqa: B009 (LocalApi's, made on first need)
        return float(engine.clock.now())

    async def stored_blueprint(self, workspace: str, name: str) -> Blueprint:
        """The workspace's stored blueprint ``name`` (``NotFoundError`` if none)."""
        return await self._setup().blueprints(workspace, name)

    async def _found(self, automation_id: str) -> Automation:
        store = await self.automation_store()
        found = await store.get(automation_id)
        if found is None or (self.visible is not None and found.workspace not in self.visible):
            raise AutomationNotFoundError(f"no automation {automation_id!r}")
        return found

    async def described(self, automation: Automation) -> Automation:
        """``automation`` with its next and last firing filled in."""
        store = await self.automation_store()
        last = await store.last_firing(automation.id)
        upcoming: str | None = None
        if isinstance(automation.trigger, CronTrigger) and not automation.paused:
            after = max(self.now(), automation.active_since)
            upcoming = iso(automation.trigger.schedule().next_after(after))
        return automation.model_copy(update={"next_firing": upcoming, "last_firing": last})

    async def automations(self, *, workspace: str | None = None) -> AutomationList:
        """The automations of the caller's workspaces (or of ``workspace``), by name."""
        store = await self.automation_store()
        found = await store.list(self.visible)
        chosen = [a for a in found if workspace is None or a.workspace == workspace]
        return AutomationList(automations=[await self.described(a) for a in chosen])

    async def automation(self, automation_id: str) -> Automation:
        """One automation, with its next and last firing."""
        return await self.described(await self._found(automation_id))

    async def add_automation(
        self, spec: AutomationSpec, *, workspace: str | None = None
    ) -> AutomationCreated:
        """Store a new automation owned by the caller; a webhook's secret is returned once."""
        workspace = workspace or self.workspace
        if self.visible is not None and workspace not in self.visible:
            raise AutomationNotFoundError(f"no workspace {workspace!r}")
        await check_target(cast("LocalApi", self), spec, workspace)
        now = self.now()
        automation = Automation(
            id="aut_" + secrets.token_hex(8),
            workspace=workspace,
            name=spec.name,
            owner=self.actor,
            trigger=spec.trigger,
            target=spec.target,
            missed=spec.missed,
            created_at=iso(now),
            active_since=now,
        )
        secret = new_secret() if isinstance(spec.trigger, WebhookTrigger) else None
        store = await self.automation_store()
        await store.add(automation, secret)
        return AutomationCreated(automation=await self.described(automation), secret=secret)

    async def pause_automation(self, automation_id: str) -> Automation:
        """Stop firing it (its slots until resumed are never fired)."""
        found = await self._found(automation_id)
        store = await self.automation_store()
        await store.set_paused(found.id, True, active_since=found.active_since)
        return await self.automation(found.id)

    async def resume_automation(self, automation_id: str) -> Automation:
        """Fire it again, from now on (slots while it was paused are not missed ones)."""
        found = await self._found(automation_id)
        store = await self.automation_store()
        if found.paused:
            await store.set_paused(found.id, False, active_since=self.now())
        return await self.automation(found.id)

    async def remove_automation(self, automation_id: str) -> None:
        """Delete it and the record of its firings (the runs it started stay)."""
        found = await self._found(automation_id)
        store = await self.automation_store()
        await store.remove(found.id)
