"""Workflows through the one door: ``WorkflowDoor`` (part of ``HelixApi``) and ``LocalApi``'s side.

A workspace's workflows (``helix.workflows``): list, get a version, save a new version
(on top of the version the editor read: a stale one is a ``WorkflowConflictError``),
apply edit operations, read the history, run one (its task graph: a ``Run``), and start
a chat run that edits one. ``HttpApi``'s side is in ``_workflow_http.py``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from helix.errors import ConfigError, NotFoundError

from ._models import Run
from ._worlds import is_world_name, named_world, run_folder

if TYPE_CHECKING:
    from helix.kernel.events import Payload
    from helix.kernel.log import RunRecord
    from helix.runtime import Blueprint, Engine
    from helix.workflows import Workflow, Workflows, WorkflowSummary, WorkflowVersion

WorkflowArg: TypeAlias = "Workflow | dict[str, Any] | str"
"""A definition: a ``Workflow``, its JSON data, or its YAML text."""
WorkflowsSource: TypeAlias = "Workflows | Callable[[], Awaitable[Workflows]]"
"""The workflow service, or a function opening it when first needed."""

CHAT_SYSTEM = (
    "You edit one workflow definition for a person, with the edit_workflow tool only."
    " Turn their request into edit operations on the workflow named below (its current"
    " YAML follows), call the tool once with all of them and base_version set to the"
    " version shown, then reply with one sentence saying what changed."
)


class WorkflowDoor(Protocol):
    """What a client can do with a workspace's workflows (``HelixApi`` includes it)."""

    async def workflows(self, *, workspace: str | None = None) -> list[WorkflowSummary]:
        """The workspace's workflows, each at its latest version, by name."""
        ...

    async def workflow(
        self, name: str, *, version: int | None = None, workspace: str | None = None
    ) -> WorkflowVersion:
        """One version (default: the latest); ``WorkflowNotFoundError`` if there is none."""
        ...

    async def save_workflow(
        self,
        workflow: WorkflowArg,
        *,
        base_version: int | None = None,
        how: str = "api",
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Store a definition as its next version.

        ``base_version``: the version the edit was made on (``0``: a new workflow); if
        it is not the latest, ``WorkflowConflictError`` (HTTP 409). ``None``: on top of
        the latest, whatever it is. A bad definition: ``WorkflowError`` (422).
        """
        ...

    async def edit_workflow(
        self,
        name: str,
        operations: list[dict[str, Any]],
        *,
        base_version: int | None = None,
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Apply edit operations (docs/workflows.md) to the latest version; save the result."""
        ...

    async def import_workflow(
        self,
        path: str,
        *,
        world: str,
        base_version: int | None = 0,
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Save the workflow file ``path`` of the workspace's world ``world`` (``how: file``).

        ``base_version`` as for ``save_workflow`` (default ``0``: a new workflow). A path
        leading out of the world (``..``, a link) or a bad file: ``WorkflowError``.
        """
        ...

    async def workflow_history(
        self, name: str, *, workspace: str | None = None
    ) -> list[WorkflowVersion]:
        """Every version, oldest first: who made it, how, when, what changed (no bodies)."""
        ...

    async def run_workflow(
        self,
        name: str,
        *,
        version: int | None = None,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        budget_usd: float | None = None,
        auto_approve: bool = False,
        attended: bool = True,
    ) -> Run:
        """Start the workflow's task graph (``to_plan``) as a run, driven in the background."""
        ...

    async def chat_workflow(
        self,
        name: str,
        message: str,
        *,
        model: str | None = None,
        workspace: str | None = None,
    ) -> Run:
        """Start an agent run that edits this workflow (only) as ``message`` asks.

        Its one tool is ``edit_workflow``, allowed without asking (the person asked);
        its model is ``model``, else the workflow's. Its edits are saved ``how=chat``.
        """
        ...


class LocalWorkflows:
    """``LocalApi``'s workflow operations (a mixin: it uses the API's engine and actor)."""

    if TYPE_CHECKING:
        actor: str
        workspace: str
        worlds: Path
        world_paths: bool
        visible: frozenset[str] | None

        @property
        def engine(self) -> Engine: ...

        def drive(self, run_id: str) -> None: ...

        async def _run(self, record: RunRecord) -> Run: ...

        async def create(
            self,
            objective: str,
            *,
            blueprint: Blueprint | None = None,
            world: str | os.PathLike[str] | None = None,
            workspace: str | None = None,
            budget_usd: float | None = None,
            auto_approve: bool = False,
            attended: bool = True,
            why: Payload | None = None,
        ) -> Run: ...

    _workflow_source: WorkflowsSource | None = None
    _workflow_service: Workflows | None = None

    async def _service(self) -> Workflows:
        if self._workflow_service is None:
            source = self._workflow_source
            if source is None:
                raise ConfigError("this door has no workflow store (give LocalApi workflows=)")
            from helix.workflows import Workflows

            self._workflow_service = source if isinstance(source, Workflows) else await source()
        return self._workflow_service

    def _where(self, workspace: str | None) -> str:
        chosen = workspace or self.workspace
        if self.visible is not None and chosen not in self.visible:
            raise NotFoundError(f"no workspace {chosen!r}")
        return chosen

    async def workflows(self, *, workspace: str | None = None) -> list[WorkflowSummary]:
        """The workspace's workflows (``WorkflowDoor.workflows``)."""
        return await (await self._service()).list(self._where(workspace))

    async def workflow(
        self, name: str, *, version: int | None = None, workspace: str | None = None
    ) -> WorkflowVersion:
        """One version (``WorkflowDoor.workflow``)."""
        return await (await self._service()).get(self._where(workspace), name, version)

    async def save_workflow(
        self,
        workflow: WorkflowArg,
        *,
        base_version: int | None = None,
        how: str = "api",
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Store a new version (``WorkflowDoor.save_workflow``)."""
        from helix.workflows import Workflow, from_data, load_text

        if isinstance(workflow, str):
            definition = load_text(workflow)
        elif isinstance(workflow, Workflow):
            definition = workflow
        else:
            definition = from_data(workflow)
        service = await self._service()
        return await service.save(
            self._where(workspace), definition, base_version=base_version, by=self.actor, how=how
        )

    async def edit_workflow(
        self,
        name: str,
        operations: list[dict[str, Any]],
        *,
        base_version: int | None = None,
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Apply edit operations (``WorkflowDoor.edit_workflow``)."""
        service = await self._service()
        where = self._where(workspace)
        return await service.edit(
            where, name, operations, base_version=base_version, by=self.actor, how="api"
        )

    async def import_workflow(
        self,
        path: str,
        *,
        world: str,
        base_version: int | None = 0,
        workspace: str | None = None,
    ) -> WorkflowVersion:
        """Save a workflow file of a world (``WorkflowDoor.import_workflow``)."""
        import asyncio

        from helix.workflows import load_in_world

        where = self._where(workspace)

        def read() -> Workflow:
            if is_world_name(world) or not self.world_paths:
                folder = named_world(self.worlds, where, world)
                if not folder.is_dir():
                    raise NotFoundError(f"no world {world!r} in workspace {where!r}")
            else:
                folder = Path(world).expanduser()
            return load_in_world(folder, path)

        definition = await asyncio.to_thread(read)
        service = await self._service()
        return await service.save(
            where, definition, base_version=base_version, by=self.actor, how="file"
        )

    async def workflow_history(
        self, name: str, *, workspace: str | None = None
    ) -> list[WorkflowVersion]:
        """Every version (``WorkflowDoor.workflow_history``)."""
        return await (await self._service()).history(self._where(workspace), name)

    async def run_workflow(
        self,
        name: str,
        *,
        version: int | None = None,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        budget_usd: float | None = None,
        auto_approve: bool = False,
        attended: bool = True,
    ) -> Run:
        """Start the workflow's task graph (``WorkflowDoor.run_workflow``)."""
        return await self.start_workflow(
            name,
            version=version,
            world=world,
            workspace=workspace,
            budget_usd=budget_usd,
            auto_approve=auto_approve,
            attended=attended,
        )

    async def start_workflow(
        self,
        name: str,
        *,
        version: int | None = None,
        objective: str | None = None,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        budget_usd: float | None = None,
        auto_approve: bool = False,
        attended: bool = True,
        why: Payload | None = None,
    ) -> Run:
        """``run_workflow`` on ``objective`` if given, logging ``why`` after ``run.created``."""
        from helix.workflows import to_plan

        service = await self._service()
        where = self._where(workspace)
        found = await service.get(where, name, version)
        assert found.workflow is not None
        about = objective or _objective(found.workflow, found.version)
        plan = to_plan(found.workflow, objective=about)
        run = await self.create(
            plan.objective,
            blueprint=plan.blueprint,
            world=world,
            workspace=where,
            budget_usd=budget_usd,
            auto_approve=auto_approve,
            attended=attended,
            why=why,
        )
        await service.store.bind_run(run.id, where, name, "run")
        return run

    async def chat_workflow(
        self,
        name: str,
        message: str,
        *,
        model: str | None = None,
        workspace: str | None = None,
    ) -> Run:
        """Start a run editing this workflow (``WorkflowDoor.chat_workflow``)."""
        from helix.kernel.log import new_run_id
        from helix.runtime import Blueprint
        from helix.workflows import dump

        if not message.strip():
            raise ConfigError("the message is empty: say how the workflow should change")
        service = await self._service()
        where = self._where(workspace)
        found = await service.get(where, name)
        assert found.workflow is not None
        blueprint = Blueprint.parse(
            {
                "name": "workflow-chat",
                "system": CHAT_SYSTEM,
                "tools": ["edit_workflow"],
                "approvals": {"rules": [{"tool": "edit_workflow", "action": "allow"}]},
                **({"model": found.workflow.model} if found.workflow.model else {}),
            },
            source="workflow chat",
        )
        objective = (
            f"{message.strip()}\n\nWorkflow {name!r}, version {found.version}:\n"
            f"```yaml\n{dump(found.workflow)}```"
        )
        run_id = new_run_id()
        await service.store.bind_run(run_id, where, name, "chat")  # before it can call
        folder, made = run_folder(self.worlds, where, None, paths=self.world_paths)
        try:
            record = await self.engine.create(
                objective,
                blueprint=blueprint,
                model=model,
                world=folder,
                workspace=where,
                run_id=run_id,
                actor=self.actor,
            )
        except BaseException:
            if made:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise
        self.drive(record.id)
        return await self._run(record)


def _objective(workflow: Workflow, version: int) -> str:
    about = workflow.description.strip() or f"Run the workflow {workflow.name}"
    return f"{about} (workflow {workflow.name}, version {version})"
