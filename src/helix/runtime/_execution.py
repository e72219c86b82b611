"""Running the calls the gates started, and turning what they return into events.

Calls of one group run together (each in its own task, cancelled if the run is
stopped); their results are recorded in call order: the egress tally of each command,
then its ``tool.completed`` (output redacted), the ``ui.component`` it shows (checked
against its kind's schema: ``_choices.py``), ``file.changed``, ``effect.recorded`` and
the ``memory.*`` events it reports (``ToolResult.events``; no other type is logged).
A world with a quota is measured after each tool that may change anything in it, and
such tools are refused while it is over (docs/security.md, "Quotas and flooding").
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from pydantic import BaseModel

from helix._util import redact, secret_values
from helix.errors import HelixError
from helix.kernel.events import (
    LIVE_PAYLOADS,
    MEMORY_PAYLOADS,
    TERMINAL_STATUSES,
    EffectRecorded,
    FileChanged,
    NewEvent,
    ToolCompleted,
)
from helix.kernel.session import CallRequest
from helix.tools import ToolContext, ToolDef, ToolResult, WorldQuota

from ._choices import RunChoices, checked_component, component_event
from ._delegation import ChildRuns
from ._egress import CommandEgress
from ._live_world import RunLiveWorld
from ._planning import GraphChildren
from ._session import LiveSession
from ._setup import RunSetup


class CallExecutor:
    """Executes one run's allowed calls; each call's result as events."""

    def __init__(
        self, setup: RunSetup, session: LiveSession, live: RunLiveWorld | None = None
    ) -> None:
        self.setup = setup
        self.session = session
        self.live = live
        """The run's live world (``sandbox.live``); ``None``: a fresh sandbox per command."""
        # Read once: scanning the environment for every result costs more than the rest.
        self._secrets = sorted({*secret_values(setup.env), *secret_values()})
        self.parsed: dict[str, BaseModel] = {}
        """Arguments the gating validated, by call id: each call's are validated once."""
        self.egress = CommandEgress(setup, session)
        """The run's egress decisions for its commands (and their tallies)."""
        world_mb = setup.blueprint.sandbox.world_mb
        self._quota = None if world_mb is None else WorldQuota(setup.world, world_mb << 20)
        engine = setup.engine
        self._children = None if engine is None else ChildRuns(engine, setup, session)
        self._graphs = None if engine is None else GraphChildren(engine, setup, session)
        self._choices = RunChoices(setup, session, self._secrets)

    async def results(self, group: list[tuple[CallRequest, ToolDef]], turn: int) -> list[NewEvent]:
        """Run started calls (together); their results' events, in call order, unrecorded."""
        outcomes: list[tuple[ToolResult, float] | None] = []
        if not group:
            return []
        if len(group) == 1:
            outcomes.append(await self._execute_alone(*group[0]))
        else:
            async with asyncio.TaskGroup() as running:
                tasks = [running.create_task(self._execute(call, tool)) for call, tool in group]
                guard = running.create_task(self._cancel_on_stop(tasks))
                await asyncio.wait(tasks)
                guard.cancel()
            outcomes += [None if task.cancelled() else task.result() for task in tasks]
        results: list[NewEvent] = []
        for (call, _tool), outcome in zip(group, outcomes, strict=True):
            results += self.egress.finish(call.id, turn)
            if outcome is None:
                note = "cancelled before it finished (the run was stopped)"
                done = ToolCompleted(call_id=call.id, ok=False, output=note, duration_ms=0)
                results.append(NewEvent(done, turn=turn))
                continue
            result, duration = outcome
            done = ToolCompleted(
                call_id=call.id,
                ok=result.ok,
                output=redact(result.output, self._secrets, scan_env=False),
                duration_ms=duration,
                node=result.node,
            )
            results.append(NewEvent(done, turn=turn))
            if result.ui is not None:
                results.append(component_event(result.ui, call.id, turn))
            results += [
                NewEvent(
                    FileChanged(
                        call_id=call.id, path=f.path, op=f.op, before=f.before, after=f.after
                    ),
                    turn=turn,
                )
                for f in result.files
            ]
            results += [
                NewEvent(
                    EffectRecorded(
                        call_id=call.id, tool=call.name, kind=e.kind, args=e.args, summary=e.summary
                    ),
                    turn=turn,
                )
                for e in result.effects
            ]
            results += [
                NewEvent(p, turn=turn)
                for p in result.events
                if isinstance(p, (*MEMORY_PAYLOADS, *LIVE_PAYLOADS))
            ]
        return results

    async def _execute_alone(
        self, call: CallRequest, tool: ToolDef
    ) -> tuple[ToolResult, float] | None:
        """Run one call in this task; ``None`` if the run stopped meanwhile (it was killed)."""
        _stopped, outcome = await self.session.unless_stopped(self._execute(call, tool))
        return outcome

    async def _cancel_on_stop(self, tasks: list[asyncio.Task[tuple[ToolResult, float]]]) -> None:
        """Cancel running calls when the run is cancelled (the sandbox kills commands)."""
        await self.session.wait_until(lambda s: s.status in TERMINAL_STATUSES, None)
        for task in tasks:
            task.cancel()

    async def _execute(self, call: CallRequest, tool: ToolDef) -> tuple[ToolResult, float]:
        setup = self.setup
        context = ToolContext(
            run_id=setup.run_id,
            call_id=call.id,
            world=setup.world,
            sandbox=setup.sandbox,
            command_timeout_s=setup.blueprint.sandbox.command_timeout_s,
            egress=self.egress.hook(call.id) if tool.facets.sandboxed else None,
            delegator=self._children,
            planner=self._graphs,
            chooser=self._choices,
            workflows=setup.workflows,
            memory=setup.memory,
            live=self.live,
            tmp_bytes=setup.blueprint.sandbox.tmp_mb << 20,
            world_quota=self._quota,
        )
        # A tool that may change anything in the world (a command) is measured after,
        # and refused while the world is over its quota; file tools check their writes.
        sweeping = self._quota is not None and tool.effect == "world" and not tool.reports_changes
        started = self.setup.clock.monotonic()
        if sweeping and (over := await self._over_quota(fresh=False)):
            return ToolResult(ok=False, output=f"refused: {over}"), 0.0
        try:
            parsed = self.parsed.pop(call.id, None)
            result = await tool.call(context, call.args, parsed=parsed)
        except HelixError as error:
            result = ToolResult(ok=False, output=str(error))
        except Exception as error:  # a tool's own bug must not take the run down
            result = ToolResult(
                ok=False, output=f"{call.name} failed: {type(error).__name__}: {error}"
            )
        result = checked_component(result, self._secrets)
        if sweeping and (over := await self._over_quota(fresh=True)):
            separator = "" if result.output.endswith("\n") else "\n"
            result = replace(result, output=f"{result.output}{separator}[{over}]")
        return result, (self.setup.clock.monotonic() - started) * 1000

    async def _over_quota(self, *, fresh: bool) -> str | None:
        """Why the world is over its quota (measured in a thread), or ``None``."""
        quota = self._quota
        if quota is None:
            return None
        try:
            return await asyncio.to_thread(quota.over, fresh=fresh)
        except OSError:
            return None  # a world that cannot be read is reported by its snapshots
