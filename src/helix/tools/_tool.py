"""Declaring a tool once: its name, arguments (as JSON Schema), nature and effects.

A tool is an async function whose first parameter is the ``ToolContext``; its other
parameters, with their annotations and defaults, become the argument model and its
JSON Schema, and its docstring the description the model reads::

    @tool(read_only=True, idempotent=True, effect="none", paths={"path": "read"})
    async def read_file(ctx: ToolContext, path: str, offset: int = 0) -> ToolResult:
        \"\"\"Read a text file in the world.\"\"\"

What the tool does (``read_only``, ``effect``, ``paths``, ``command``, ``url``,
``sandboxed``, ``delegates``) becomes its ``Facets``: the gates read those, never its
name (see ``_facets``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from helix.errors import InvalidToolArgumentsError, UnknownToolError
from helix.sandbox import EgressHook, LiveWorld, Sandbox

from ._facets import EffectKind, Facets, PathAccess
from ._quota import WorldQuota

if TYPE_CHECKING:
    from helix.kernel.events import Payload

    from ._delegate import Delegator
    from ._memory import MemoryDoor
    from ._plan import Planner
    from ._ui import Chooser
    from ._workflow import WorkflowEditor


@dataclass(frozen=True, slots=True)
class FileChange:
    """A file a tool created, modified or deleted (hashes are SHA-256 of the content)."""

    path: str
    """Relative to the world, with ``/`` separators."""
    op: Literal["create", "modify", "delete"]
    before: str | None
    after: str | None


@dataclass(frozen=True, slots=True)
class Effect:
    """An effect outside the world a call registered, for commit or rollback.

    ``withheld``: not done yet; the tool's ``perform`` hook does it when the run is
    committed (``helix keep``), and a rollback drops it. ``compensable``: done; the
    tool's ``undo`` hook reverses it when the run is rolled back past the call.
    ``irreversible``: done, and nothing can take it back (a POST to someone's API, say):
    a rollback past the call says so rather than staying silent.
    ``args`` is what the hook will be given (JSON, recorded in the log).
    """

    kind: Literal["withheld", "compensable", "irreversible"]
    args: dict[str, Any]
    summary: str


@dataclass(frozen=True, slots=True)
class UiPart:
    """A generative UI component a call shows the person: a kind's name and its props.

    The runtime checks it against the kind's schema (``helix.ui``) and records it as a
    ``ui.component`` event; props that fail make the call's result a failure saying why.
    """

    component: str
    """The kind: ``table``, ``diff``, ``options``, ``markdown``, ``chart``, or a
    plugin's ``package.kind``."""
    props: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call produced: output for the model, file changes, effects, a component."""

    ok: bool
    output: str
    files: tuple[FileChange, ...] = ()
    effects: tuple[Effect, ...] = ()
    ui: UiPart | None = None
    node: str | None = None
    """The cluster node a command ran on (recorded in ``tool.completed``); ``None``: here."""
    events: tuple[Payload, ...] = ()
    """What the call read or wrote beyond the world, as events logged after its
    ``tool.completed`` (the memory tools' ``memory.*``; the runtime logs only the
    types in ``helix.kernel.events.MEMORY_PAYLOADS``)."""


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a running tool may use: the run's world, its sandbox, its limits."""

    run_id: str
    call_id: str
    world: Path
    """The run's world directory, absolute and resolved."""
    sandbox: Sandbox
    command_timeout_s: float = 120.0
    max_output: int = 64 * 1024
    http_timeout_s: float = 30.0
    egress: EgressHook | None = None
    """Decides (and records) each connection a command attempts; ``None``: no network."""
    tmp_bytes: int | None = None
    """The size of a command's private ``/tmp``; ``None``: the sandbox's default."""
    world_quota: WorldQuota | None = None
    """The cap on the world's disk space that file writes must fit; ``None``: no cap."""
    delegator: Delegator | None = None
    """Starts child runs for ``delegate``; ``None`` where runs cannot have children."""
    planner: Planner | None = None
    """Starts a task graph for ``plan``; ``None`` where runs cannot have children."""
    chooser: Chooser | None = None
    """Shows ``ask_choice``'s options card and waits for the choice; ``None`` where
    nobody can be asked."""
    workflows: WorkflowEditor | None = None
    """Applies ``edit_workflow``'s operations to the run's workspace's workflows;
    ``None`` where no workflow store is at hand."""
    memory: MemoryDoor | None = None
    """The run's person's and workspace's memory (``remember``, ``recall``…); ``None``
    where no memory store is at hand."""
    live: LiveDoor | None = None
    """The run's live world (``sandbox.live``), opened on first use; ``None``: the run's
    commands each get a fresh sandbox."""


class LiveDoor(Protocol):
    """A run's live world, as its tools reach it (the runtime's ``RunLiveWorld``)."""

    async def world(self) -> LiveWorld:
        """The world's box, opened (or restored from its last checkpoint) on first use."""
        ...

    def next_process(self) -> str:
        """A new background process id (``p1``, ``p2``…)."""
        ...

    def is_running(self, process: str) -> bool:
        """Whether the run's log still has ``process`` running."""
        ...


ToolFunction = Callable[..., Awaitable[ToolResult]]
EffectHook = Callable[["ToolContext", dict[str, Any]], Awaitable[str]]
"""Performs (or undoes) a recorded ``Effect`` from its ``args``; returns what it did."""


@dataclass(frozen=True, slots=True)
class ToolDef:
    """A declared tool."""

    name: str
    description: str
    arguments: type[BaseModel]
    """Validates the model's arguments (unknown ones are refused)."""
    function: ToolFunction
    facets: Facets = field(default_factory=Facets)
    """What it does, as the gates read it."""
    idempotent: bool = False
    """Running it twice has the effect of running it once: safe to re-run after a crash."""
    concurrent: bool = False
    """May run at the same time as other calls of the same turn."""
    reports_changes: bool = False
    """Every world change it makes is in its result's ``files``: snapshots after it
    read just those paths instead of walking the world."""
    parameters: dict[str, Any] = field(default_factory=dict[str, Any])
    """The arguments' JSON Schema, as models are shown it."""
    perform: EffectHook | None = None
    """Does a ``withheld`` effect this tool registered (``external-withhold`` tools)."""
    undo: EffectHook | None = None
    """Reverses a ``compensable`` effect this tool registered (``external-compensate``)."""
    origin: str | None = None
    """Where the tool comes from, as its ``tool.started`` records it: ``mcp:SERVER``,
    ``plugin:NAME@VERSION``; ``None``: Helix's own, or the engine's."""

    @property
    def read_only(self) -> bool:
        """It only reads (``facets.read_only``)."""
        return self.facets.read_only

    @property
    def effect(self) -> EffectKind:
        """What running it changes (``facets.effect``)."""
        return self.facets.effect

    def validate(self, args: Mapping[str, Any]) -> BaseModel:
        """Check ``args``; ``InvalidToolArgumentsError`` explains what is wrong."""
        try:
            return self.arguments.model_validate(dict(args))
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in error.errors()[:5]
            )
            raise InvalidToolArgumentsError(f"{self.name}: {problems}") from None

    async def call(
        self, ctx: ToolContext, args: Mapping[str, Any], *, parsed: BaseModel | None = None
    ) -> ToolResult:
        """Validate ``args`` (unless ``parsed`` is them, validated already) and run the tool."""
        if parsed is None or not isinstance(parsed, self.arguments):
            parsed = self.validate(args)
        values = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        return await self.function(ctx, **values)


def tool(
    name: str | None = None,
    *,
    read_only: bool = False,
    idempotent: bool = False,
    effect: EffectKind = "world",
    concurrent: bool | None = None,
    reports_changes: bool = False,
    perform: EffectHook | None = None,
    undo: EffectHook | None = None,
    paths: Mapping[str, PathAccess] | None = None,
    command: str | None = None,
    url: str | None = None,
    sandboxed: bool = False,
    delegates: bool = False,
) -> Callable[[ToolFunction], ToolDef]:
    """Declare an async function as a tool (see the module's documentation).

    ``paths``, ``command`` and ``url`` name the function's own parameters; a name it
    does not have, or one argument given two roles, is a ``ValueError`` here.
    """
    facets = Facets(
        read_only=read_only,
        effect=effect,
        paths=dict(paths or {}),
        command=command,
        url=url,
        sandboxed=sandboxed,
        delegates=delegates,
    )

    def declare(function: ToolFunction) -> ToolDef:
        signature = inspect.signature(function)
        hints = get_type_hints(function, include_extras=True)
        fields: dict[str, Any] = {}
        for index, (param, spec) in enumerate(signature.parameters.items()):
            if index == 0:
                continue  # the ToolContext
            default = ... if spec.default is inspect.Parameter.empty else spec.default
            fields[param] = (hints.get(param, Any), default)
        tool_name = name or function.__name__
        unknown = sorted(facets.arguments - fields.keys())
        if unknown:
            raise ValueError(f"tool {tool_name!r} has no argument {', '.join(unknown)}")
        model = create_model(
            f"{tool_name}_arguments",
            __config__=ConfigDict(extra="forbid"),
            **fields,
        )
        schema = model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        return ToolDef(
            name=tool_name,
            description=inspect.cleandoc(function.__doc__ or tool_name),
            arguments=model,
            function=function,
            facets=facets,
            idempotent=idempotent,
            concurrent=read_only if concurrent is None else concurrent,
            reports_changes=reports_changes,
            parameters=schema,
            perform=perform,
            undo=undo,
        )

    return declare


class ToolRegistry:
    """The tools a run may be offered, by name."""

    def __init__(self, tools: Iterable[ToolDef] = ()) -> None:
        self._tools: dict[str, ToolDef] = {}
        for definition in tools:
            self.register(definition)

    def register(self, definition: ToolDef) -> None:
        """Add a tool; its name must be new."""
        if definition.name in self._tools:
            raise ValueError(f"tool {definition.name!r} is already registered")
        self._tools[definition.name] = definition

    def get(self, name: str) -> ToolDef:
        """The tool called ``name``; ``UnknownToolError`` lists the known ones."""
        try:
            return self._tools[name]
        except KeyError:
            known = ", ".join(sorted(self._tools))
            raise UnknownToolError(f"unknown tool {name!r}: known tools are {known}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    @property
    def names(self) -> list[str]:
        """Every registered tool's name, sorted."""
        return sorted(self._tools)

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        """A registry of just these tools (``UnknownToolError`` for a name not here)."""
        return ToolRegistry(self.get(n) for n in names)

    def __iter__(self) -> Any:
        return iter(self._tools.values())
