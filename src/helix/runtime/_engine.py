"""The engine: creates runs, resumes them from their logs, and supervises their loops.

A run is driven by at most one process at a time, on any machine that shares its store:
the driver holds the run's lease in the log (``_lease.py``), renews it while it drives,
and appends with it, so the store refuses the appends of a driver that lost the run.
Everything else people do to a run (approve, steer, pause, cancel) is an append to its
log, needing no lease, and reaches the driving process through the log's subscriptions,
whichever process it comes from.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from helix._util import holder_gone
from helix.errors import ConfigError, LeaseLostError, ModelNameError, RunStateError
from helix.gates import Gate, GatePipeline, Policy, build_gate_pipeline
from helix.kernel.events import NewEvent, RunCreated, RunSettings
from helix.kernel.log import EventStore, Lease, RunRecord
from helix.kernel.session import SessionState, replay_run
from helix.mcp.client import McpSource
from helix.plugins import Plugins, PluginSource
from helix.providers import (
    ModelAdapter,
    PriceBook,
    ScriptAccess,
    check_model,
    check_usable,
)
from helix.sandbox import Sandbox, StrongestSandbox, require_sandbox
from helix.tools import (
    LIVE_TOOLS,
    MEMORY_TOOLS,
    MemoryDoor,
    ToolRegistry,
    ToolSource,
    WorkflowEditor,
    builtin_registry,
    edit_workflow,
)
from helix.world import ObjectStore

from ._blueprint import Blueprint, blueprint_of
from ._clock import SYSTEM_CLOCK, Clock
from ._crashes import log_gave_up, log_restart
from ._engine_checks import require_bound, require_tool_choice
from ._graph import GraphConductor
from ._lease import HolderGone, driving, holding_lease, lease_ttl
from ._live_world import live_sandbox, offered
from ._loop import TERMINAL, RunLoop
from ._origin import run_origin
from ._placement import Placer, placed_sandbox
from ._plan import check_graph, task_models
from ._roles import main_model, resolved, role_names
from ._run_world import choose_world
from ._session import append_checked, finished
from ._setup import RunSetup
from ._spending import Spending
from ._streaming import DeltaSink
from ._supervisor import ChildSpec, open_supervisor
from ._tree import TreeOfThoughtsLoop, loop_for
from ._until import Until, UntilFailed

_log = logging.getLogger(__name__)

ModelFactory = Callable[[RunSetup], ModelAdapter | None]
"""A model object for a run (``None``: the one its model name opens)."""
PipelineFactory = Callable[[ToolRegistry], GatePipeline]
"""The gate pipeline for a run, given the tools it offers (replaces Helix's own)."""
SourceFactory = Callable[[RunSetup], Sequence[ToolSource]]
"""A run's tool sources beyond its blueprint's (new objects for each run: opened and
closed with its loop)."""
WorkflowEditors = Callable[[RunSetup], WorkflowEditor | None]
"""The ``edit_workflow`` editor of a run (``None``: it may edit none), given its setup."""
MemoryDoors = Callable[[RunSetup], MemoryDoor | None]
"""A run's memory, given its setup (``workspace``, ``actor``: its person); ``None``: none."""


class Engine:
    """Runs agents: ``create`` a run, then ``drive`` it (or ``resume_all`` of them)."""

    def __init__(
        self,
        store: EventStore,
        *,
        home: Path,
        tools: ToolRegistry | None = None,
        sandbox: Sandbox | None = None,
        prices: PriceBook | None = None,
        env: dict[str, str] | None = None,
        policy: Policy | None = None,
        model_factory: ModelFactory | None = None,
        scripts: ScriptAccess = True,
        clock: Clock = SYSTEM_CLOCK,
        gates: Sequence[Gate] = (),
        pipeline: PipelineFactory | None = None,
        snapshots: bool = True,
        sources: SourceFactory | None = None,
        plugins: Plugins | None = None,
        lease_ttl_s: float | None = None,
        placer: Placer | None = None,
        workflows: WorkflowEditors | None = None,
        spending: Spending | None = None,
        memory: MemoryDoors | None = None,
        deltas: DeltaSink | None = None,
    ) -> None:
        """Hold what every run driven here shares.

        ``gates`` are added to every run's pipeline (after the budget gate, before
        approval: see ``build_gate_pipeline``); ``pipeline`` replaces the pipeline whole.
        ``sources`` gives each run tool sources of its own (``helix.tools.ToolSource``:
        their tools are offered beside the built-ins). ``snapshots=False`` leaves runs'
        worlds alone: never walked, hashed or watched (for a library whose tools touch
        no folder), so no world history either: no ``files``/``diff`` at a turn, no
        rollback, and forks share their parent's folder. ``plugins`` are the plugins
        runs may name in their blueprint (default: those ``HELIX_PLUGINS``, ``home``
        and the installed entry points offer, loaded when a blueprint first names one).
        ``lease_ttl_s``: how long a driver's lease on a run lasts unrenewed (default:
        ``HELIX_LEASE_TTL_S``, else 10 s), the bound on how long a run whose driver
        stopped answering waits for another. ``placer`` gives the sandbox of runs whose
        blueprint has a ``placement`` (without one, such runs are refused).
        ``workflows`` gives each run the editor its ``edit_workflow`` calls go through
        (``helix.workflows``); with it, the engine offers that tool too. ``spending``:
        the cumulative budgets every run's model calls are reserved against (docs/budgets.md).
        ``memory`` gives each run its memory (``helix.memory``); with it, the memory tools too.
        ``deltas``: where live views take the pieces of replies as they arrive (a
        ``ReplyHub`` for many); with it, runs' model calls stream while it watches them
        (docs/engine.md, "Streaming"; ``self.deltas`` may be set between drives).
        """
        self.snapshots = snapshots
        self.store = store
        self.home = home
        self.tools = tools or builtin_registry()
        self._sandbox = sandbox
        self.prices = prices or PriceBook()
        self.env = dict(os.environ) if env is None else env
        self.policy = policy or Policy()
        """The workspace's ceiling; each run's is intersected with it."""
        self._model_factory = model_factory
        self.scripts = scripts
        """Which scenario files ``scripted:PATH`` models may read (a server: a folder, or none)."""
        self.clock = clock
        """What every run's deadlines, time budget and durations are read on."""
        self.objects = ObjectStore(home / "objects")
        """The content of every run's world snapshots (shared: identical files cost once)."""
        self.lease_ttl_s = lease_ttl(self.env, lease_ttl_s)
        """How long a driver's lease lasts unrenewed (renewed every third of it)."""
        if gates and pipeline is not None:
            raise ConfigError("give extra gates or a whole pipeline, not both")
        self.gates = tuple(gates)
        """Gates every run's calls pass besides Helix's own (before approval)."""
        self._pipeline = pipeline
        self._sources = sources
        self._plugins = plugins
        self._placer = placer
        self._workflows = workflows
        self.spending = spending
        self.deltas = deltas
        """Where the replies of runs set up from now on stream (``None``: they do not)."""
        if workflows is not None and "edit_workflow" not in self.tools:
            self.tools.register(edit_workflow)
        self._memory = memory
        for memory_tool in MEMORY_TOOLS if memory is not None else ():
            if memory_tool.name not in self.tools:
                self.tools.register(memory_tool)
        for live_tool in LIVE_TOOLS:  # offered only to runs whose world is live
            if live_tool.name not in self.tools:
                self.tools.register(live_tool)
        if gates:
            self.pipeline_for(self.tools)  # distinct names, valid scopes: refused here

    def pipeline_for(self, tools: ToolRegistry, extra: Sequence[Gate] = ()) -> GatePipeline:
        """The gate pipeline a run offering ``tools`` passes (this engine's gates included).

        ``extra``: the gates of the run's plugins, after the engine's (before approval).
        """
        if self._pipeline is not None:
            if extra:
                raise ConfigError("a whole pipeline was given: plugins cannot add gates to it")
            return self._pipeline(tools)
        return build_gate_pipeline((*self.gates, *extra), available_tools=tools.names)

    @property
    def plugins(self) -> Plugins:
        """The plugins runs may name (made on first use; loaded by their first ``refresh``)."""
        if self._plugins is None:
            self._plugins = Plugins(home=self.home, env=self.env)
        return self._plugins

    @property
    def sandbox(self) -> Sandbox:
        """Where commands run: as given, else the strongest tier here (probed on first use)."""
        if self._sandbox is None:
            self._sandbox = StrongestSandbox()
        return self._sandbox

    async def create(
        self,
        objective: str,
        *,
        blueprint: Blueprint | None = None,
        model: str | Sequence[str] | None = None,
        world: Path | None = None,
        budget_usd: float | None = None,
        budget_tokens: int | None = None,
        auto_approve: bool = False,
        attended: bool = True,
        workspace: str = "default",
        run_id: str | None = None,
        depth: int = 0,
        actor: str = "system",
        role: str | None = None,
        blueprint_version: int | None = None,
    ) -> RunRecord:
        """Register a run (checked: blueprint, model, tools); ``drive`` runs it.

        ``depth`` counts the delegations above a child run (0: started by a person).
        ``actor`` is who made it (its ``run.created``'s actor: ``user:ann``, or ``system``).
        ``role``: the role its turns serve for the run that made it (``worker``, ``judge``).
        ``blueprint_version``: the stored blueprint's version it was made from, if one.
        """
        if not objective.strip():
            raise ConfigError("the objective is empty: say what the agent should do")
        if blueprint is not None and blueprint.plugins:
            # Refused here if unknown, disabled or inactive; active, a plugin's model
            # providers are registered before the blueprint's model names are checked.
            await self.plugins.refresh()
            self.plugins.require(blueprint.plugins)
        blueprint = (blueprint or Blueprint()).check(self.tools)
        sources = bool(blueprint.mcp or blueprint.plugins) or self._sources is not None
        require_tool_choice(blueprint, self.tools, sources)
        # refuse before creating: a tier too weak, a placement no node (or engine) takes
        require_sandbox(
            live_sandbox(placed_sandbox(self._placer, None, blueprint, self.sandbox), blueprint),
            blueprint.sandbox.kind,
        )
        spec = main_model(blueprint, model)
        if blueprint.graph is not None:
            check_graph(blueprint, self.tools)
        elif spec is None:
            raise ConfigError("no model: pass --model provider:model or set model in the blueprint")
        names = [] if spec is None else [spec] if isinstance(spec, str) else list(spec)
        names += task_models(blueprint) if spec is None else []
        names += role_names(blueprint)
        self.check_model(names)
        self.check_usable(names)  # a missing SDK or key is refused here, not retried later
        caps = {"usd": budget_usd, "tokens": budget_tokens}
        budget = blueprint.budget.model_copy(
            update={k: v for k, v in caps.items() if v is not None}
        )
        await require_bound(blueprint, self.prices, names, budget, self.spending, workspace, actor)
        blueprint = resolved(blueprint, spec).model_copy(update={"budget": budget})
        world, run_id = await choose_world(
            self.home, self.store, self.plugins, blueprint, world, run_id
        )
        settings = RunSettings(
            blueprint=blueprint.model_dump(mode="json"),
            auto_approve=auto_approve,
            attended=attended,
            depth=depth,
            role=role,
        )
        created = RunCreated(
            objective=objective,
            model=_joined(spec) or "",
            world=str(world),
            blueprint=blueprint.name,
            blueprint_version=blueprint_version,
            budget=budget,
            settings=settings,
        )
        return await self.store.create_run(created, workspace=workspace, run_id=run_id, actor=actor)

    def check_model(self, spec: str | Sequence[str]) -> None:
        """``ModelNameError`` unless every name is well formed and this engine may open it."""
        for name in [spec] if isinstance(spec, str) else list(spec):
            check_model(name, scripts=self.scripts)

    def check_usable(self, spec: str | Sequence[str]) -> None:
        """``ConfigError`` unless this engine could open every model now: SDK, key.

        The message names the fix (``pip install 'helix-harness[EXTRA]'``, or the key's
        variable). Nothing to check when a model factory supplies the runs' models.
        """
        if self._model_factory is not None:
            return
        for name in [spec] if isinstance(spec, str) else list(spec):
            check_usable(name, env=self.env, scripts=self.scripts)

    async def check_ready(self, run_id: str) -> None:
        """``ConfigError`` if the run could not be driven here as it stands (model, sandbox).

        Checked before a run is resumed, so a key that vanished since it started is said
        once, and the run is left as it was.
        """
        setup = await self.setup(run_id)
        if setup.blueprint.model is not None:
            self.check_model(setup.blueprint.model)
            self.check_usable(setup.blueprint.model)

    async def setup(self, run_id: str) -> RunSetup:
        """Rebuild a run's collaborators from its log (any process can).

        Two reads, not a replay: the registry row and ``run.created`` hold all of it, and
        the loop replays the log itself right after.
        """
        record = await self.store.get_run(run_id)
        settings, actor = await run_origin(self.store, run_id)
        blueprint = blueprint_of(settings)
        if record.parent is not None and record.model != _joined(blueprint.model):
            blueprint = blueprint.model_copy(update={"model": record.model})  # a fork's own
        tools = self.tools.subset(
            blueprint.tools if blueprint.tools is not None else offered(self.tools, blueprint)
        )
        sandbox = live_sandbox(
            placed_sandbox(self._placer, run_id, blueprint, self.sandbox), blueprint
        )
        require_sandbox(sandbox, blueprint.sandbox.kind)
        if blueprint.plugins:  # active before the run's model opens (it may be a plugin's)
            await self.plugins.refresh()
        setup = RunSetup(
            pipeline=self.pipeline_for(tools),
            store=self.store,
            run_id=run_id,
            blueprint=blueprint,
            tools=tools,
            sandbox=sandbox,
            world=await asyncio.to_thread(lambda: Path(record.world).resolve()),
            prices=blueprint.price_book(self.prices),
            policy=self.policy.intersect(blueprint.policy),
            auto_approve=settings.auto_approve,
            attended=settings.attended,
            env=self.env,
            objects=self.objects if self.snapshots else None,
            engine=self,
            depth=settings.depth,
            workspace=record.workspace,
            scripts=self.scripts,
            clock=self.clock,
            spending=self.spending,
            deltas=self.deltas,
            role=settings.role or "main",
            actor=actor,
        )
        plugins = tuple(PluginSource(self.plugins, name) for name in blueprint.plugins)
        servers = tuple(McpSource(spec) for spec in blueprint.mcp)
        own = tuple(self._sources(setup)) if self._sources is not None else ()
        setup.sources = (*plugins, *servers, *own)
        setup.workflows = self._workflows(setup) if self._workflows is not None else None
        setup.memory = self._memory(setup) if self._memory is not None else None
        return setup

    async def drive(
        self, run_id: str, *, until: Until | None = None, gone: HolderGone | None = None
    ) -> SessionState:
        """Drive the run in this process; return its state when it stops.

        It stops when the run ends, or, given ``until``, as soon as ``until(state)``
        holds on the folded state (checked before each step of the loop, so at once if
        it holds already). A run that is paused when ``drive`` is called is not driven:
        its state is returned at once (``resume`` it first). A run that pauses while
        driven is waited on, until someone resumes or cancels it, unless ``until`` stops
        there (``until=lambda s: s.status == "paused"``). Every step is a scheduling
        point, so ``asyncio.wait_for`` and a task's ``cancel()`` work even when the model
        and the tools never await; a cancelled drive leaves the run as its log says
        (``drive`` again, in any process, to continue it).

        An exception raised by ``until`` stops the drive and is raised here (the run is
        left as its log says, neither restarted nor failed). ``ModelNameError``, before
        anything is logged, if this process cannot open the run's model (a provider
        registered in another process). ``RunStateError`` if another process is
        driving it (it holds the run's lease); ``LeaseLostError`` (a ``RunStateError``)
        if another driver took the run over meanwhile: this drive stops, having written
        nothing since, and the run is the other driver's. ``gone``: as for ``lock``.
        """
        return await self._drive(run_id, until, None, gone)

    async def step(self, run_id: str) -> SessionState:
        """Take the run's next step and return its state (``drive``, stopping after one).

        A step is what the loop does next: start the next turn and call the model (with
        the calls it asks for, or their first group), run the calls left pending, or
        close a turn (completing the run or pausing it at a limit when that is next).
        A paused or finished run is returned as it is. Like any drive that stops before
        the run ends, the next ``step``/``drive`` logs ``run.resumed`` first.
        """
        return await self._drive(run_id, None, 1, None)

    async def _drive(
        self, run_id: str, until: Until | None, steps: int | None, gone: HolderGone | None
    ) -> SessionState:
        async with self.lock(run_id, gone=gone) as lease:
            if (await self.store.get_run(run_id)).status == "paused":
                return await replay_run(self.store, run_id)
            setup = await self.setup(run_id)
            setup.lease = lease
            loop: RunLoop | GraphConductor | TreeOfThoughtsLoop
            if setup.blueprint.graph is not None:
                loop = GraphConductor(setup)  # its steps start tasks, not turns
            else:
                model = self._model_factory(setup) if self._model_factory is not None else None
                if model is None and setup.blueprint.model is not None:
                    self.check_model(setup.blueprint.model)  # an unknown name fails no run
                loop = loop_for(setup, model)  # RunLoop, or the blueprint's strategy's
            result: list[SessionState] = []
            refused: list[BaseException] = []

            async def incarnation() -> None:
                try:
                    result[:] = [await loop.run(until, steps=steps)]
                except* UntilFailed as failed:  # the caller's error, not the run's
                    refused.extend(e.__cause__ or e for e in failed.exceptions)
                except* LeaseLostError as lost:  # the run is another driver's: stop here
                    refused.extend(lost.exceptions)

            async def restarted(child: str, error: BaseException, attempt: int) -> None:
                await log_restart(self.store, lease, error, attempt)

            async def gave_up(child: str, error: BaseException) -> None:
                await log_gave_up(self.store, lease, error)

            async with open_supervisor(
                on_restart=restarted, on_give_up=gave_up, clock=self.clock
            ) as supervisor:
                # A configuration error (no SDK, no key) is not a crash: no restart helps.
                spec = ChildSpec(id=run_id, start=incarnation, fatal=(ConfigError,))
                supervisor.start_child(spec)
            if refused:
                raise refused[0]
            return result[0] if result else await replay_run(self.store, run_id)

    async def unfinished(self) -> list[str]:
        """Ids of the runs left unfinished and not paused: the ones to drive on a start."""
        unfinished: list[str] = []
        cursor = None
        while True:
            page = await self.store.list_runs(limit=500, cursor=cursor)
            unfinished += [r.id for r in page.runs if r.status not in TERMINAL | {"paused"}]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        return unfinished

    async def resume_all(self) -> list[str]:
        """Drive every run left unfinished, here (``LocalExecutor`` does it for a server)."""
        unfinished = await self.unfinished()
        async with open_supervisor() as supervisor:
            for run_id in unfinished:
                supervisor.spawn(self.drive_quietly(run_id), name=f"resume:{run_id}")
        return unfinished

    async def drive_quietly(self, run_id: str) -> None:
        """``drive``, leaving a run another process drives, or whose model it cannot open."""
        try:
            await self.drive(run_id)
        except RunStateError:  # another process drives it
            pass
        except ModelNameError as error:  # its provider was registered in another process
            _log.warning("run %s is not driven here: %s", run_id, error)

    @asynccontextmanager
    async def lock(self, run_id: str, *, gone: HolderGone | None = None) -> AsyncIterator[Lease]:
        """Hold the run's lease for the block: its one driver, on any machine.

        Taking it over from a driver that neither finished nor released it (expired, or
        an ended process of this host) logs ``lease.taken_over`` first, with the lease.

        Renewed every third of ``lease_ttl_s`` on this engine's clock, released after.
        ``RunStateError`` (``LeaseHeldError``) if another live driver holds it;
        ``LeaseLostError`` in place of the block's end if another driver took it over
        meanwhile (the block is cancelled then: its appends would be refused anyway).
        ``gone``: which holders are known to have ended, taken over at once (default: a
        process of this host that ended; a Ray actor adds its lost incarnation's).
        """
        ended = gone or holder_gone
        async with holding_lease(
            self.store, run_id, ttl_s=self.lease_ttl_s, clock=self.clock, gone=ended
        ) as (lease, taken):
            if taken is not None:
                logged = [NewEvent(taken)]
                await append_checked(
                    self.store, run_id, lambda s: None if finished(s) else logged, lease=lease
                )
            yield lease

    async def is_driven(self, run_id: str) -> bool:
        """Whether a live driver (any process, any machine) holds the run's lease now."""
        return await driving(self.store, run_id, self.clock.now())


def _joined(model: str | tuple[str, ...] | None) -> str | None:
    return model if isinstance(model, str) or model is None else " | ".join(model)
