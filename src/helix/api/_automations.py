"""``LocalApi``'s automations: list, add, pause, resume, remove; and ``start_target``.

The store holds them (``helix.automations``); this door checks what a caller may see
(their workspaces), that a target exists, and makes ids, secrets and times. Who may
change what (viewers may not) is the server's check, as for runs. ``start_target`` is
the one place an automation's target becomes a run: the server's scheduler and webhook
call it.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Collection
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from helix.automations import (
    Automation,
    AutomationCreated,
    AutomationList,
    AutomationNotFoundError,
    AutomationSpec,
    AutomationStore,
    BlueprintTarget,
    CronTrigger,
    WebhookTrigger,
    new_secret,
)
from helix.errors import ConflictError
from helix.kernel.events import AutomationFired, format_iso

if TYPE_CHECKING:
    from helix.runtime import Blueprint, Clock

    from ._local import LocalApi

AutomationSource: TypeAlias = "AutomationStore | Callable[[], Awaitable[AutomationStore]]"
"""The store, or an async function that opens it when first needed."""
_Lookup = Callable[[str, str], Awaitable["Blueprint"]]


class TargetUnavailableError(ConflictError):
    """The target's kind cannot be started by this Helix yet (``workflow``, ``graph``)."""

    code = "target_unavailable"


def _unavailable(kind: str) -> TargetUnavailableError:
    return TargetUnavailableError(
        f"automations cannot start a {kind} yet: only target kind 'blueprint' is wired"
        f" in this version (the {kind} target's shape is accepted, its start is not)"
    )


async def check_target(api: LocalApi, spec: AutomationSpec, workspace: str) -> None:
    """Refuse a target that could never start: an unknown blueprint, an unwired kind."""
    target = spec.target
    if not isinstance(target, BlueprintTarget):
        raise _unavailable(target.kind)
    await api.stored_blueprint(workspace, target.blueprint)
    if target.model is not None:
        api.engine.check_model([target.model])


async def start_target(api: LocalApi, automation: Automation, fired: AutomationFired) -> str:
    """Start what ``automation`` targets, as ``api``'s actor; the started run's id.

    A blueprint target is a run of the workspace's stored blueprint, with ``fired``
    logged right after its ``run.created``. ``workflow`` and ``graph`` targets are
    refused (``TargetUnavailableError``) until those land: wire them here.
    """
    target = automation.target
    if not isinstance(target, BlueprintTarget):
        raise _unavailable(target.kind)
    blueprint = await api.stored_blueprint(automation.workspace, target.blueprint)
    run = await api.create(
        target.objective,
        blueprint=blueprint,
        model=target.model,
        workspace=automation.workspace,
        why=fired,
    )
    return run.id


def iso(seconds: float) -> str:
    """POSIX seconds as the log writes times."""
    return format_iso(datetime.fromtimestamp(seconds, UTC))


class AutomationDoor:
    """The automation half of ``LocalApi`` (mixed in; ``LocalApi`` sets the state)."""

    visible: frozenset[str] | None
    actor: str
    workspace: str

    def _init_automations(
        self, source: AutomationSource | None, lookup: _Lookup | None, clock: Clock | None
    ) -> None:
        self._automation_source = source
        self._automation_store: AutomationStore | None = (
            source if isinstance(source, AutomationStore) else None
        )
        self._owns_automations = False
        self._lookup = lookup
        self._automation_clock = clock

    async def _close_automations(self) -> None:
        store, owned = self._automation_store, self._owns_automations
        if owned and store is not None:
            self._automation_store, self._owns_automations = None, False
            await store.close()

    async def automation_store(self) -> AutomationStore:
        """The store (opened now if it was given as a function)."""
        if self._automation_store is None:
            if self._automation_source is None or isinstance(
                self._automation_source, AutomationStore
            ):
                raise ConflictError("this door has no automation store")
            self._automation_store = await self._automation_source()
            self._owns_automations = True
        return self._automation_store

    def now(self) -> float:
        """What time it is for automations (the given clock, else the engine's)."""
        if self._automation_clock is not None:
            return self._automation_clock.now()
        engine: Any = getattr(self, "engine")  # noqa: B009 (LocalApi's, made on first need)
        return float(engine.clock.now())

    async def stored_blueprint(self, workspace: str, name: str) -> Blueprint:
        """The workspace's stored blueprint ``name`` (``NotFoundError`` if none)."""
        if self._lookup is None:
            raise ConflictError("this door cannot look up stored blueprints")
        return await self._lookup(workspace, name)

    def _visible(self, workspaces: Collection[str] | None = None) -> Collection[str] | None:
        return self.visible if workspaces is None else workspaces

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
