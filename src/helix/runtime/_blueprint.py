"""Blueprints: reusable agent definitions in YAML or TOML, checked with precise errors.

```yaml
name: coder
model: [anthropic:claude-sonnet-4-5, openai:gpt-4.1]   # a fallback chain
roles: {summary: groq:llama-3.1-8b-instant, worker: [openai:gpt-4.1-mini, openai:gpt-4.1]}
context: {compact_at_tokens: 60000, keep_turns: 4}   # summarise older turns (the summary role)
system: You are a careful engineer.
tools: [read_file, write_file, edit_file, list_files, search_files, run_command]
approvals:
  timeout_s: 600
  rules: [{tool: run_command, when: {command: "^pytest"}, action: allow}]
budget: {usd: 2.0, max_turns: 40, max_seconds: 3600}
sandbox: {kind: process, network: ["*.python.org"], tmp_mb: 512, world_mb: 4096}
policy: {deny_tools: [http_fetch]}
prices: {"acme:house-model": {input: 0.5, output: 1.5}}   # USD per million tokens
placement: {labels: {gpu: "yes"}, resources: {GPU: 1}}  # commands on such a node (a cluster)
strategy: {kind: tree_of_thoughts, branches: 3, judge: {command: "pytest -q"}}  # docs/strategies.md
model_errors: {pause_after: 5}   # pause after 5 replies in a row the model got wrong
tool_choice: auto   # or required, none, a tool's name (forced until the model has called)
mcp:                                    # MCP servers whose tools the run offers (docs/mcp.md)
  - {name: time, command: python3, args: [-m, mcp_server_time], tools: [get_current_time]}
  - {name: tracker, url: "https://mcp.example.com/mcp", headers: {Authorization: TRACKER_AUTH}}
```
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from helix._util import FileProblem, first_problem, read_structured
from helix.errors import BlueprintError, HelixError, InvalidPayloadError
from helix.gates import ApprovalRule, Policy
from helix.kernel.events import Budget, RunSettings
from helix.mcp.client import McpServerSpec, require_sdk
from helix.providers import (
    ROLE_ALIASES,
    ROLES,
    TOOL_CHOICES,
    ModelSpec,
    Price,
    PriceBook,
    parse_model_name,
)
from helix.tools import ToolRegistry

from ._placement import Placement
from ._strategies import RunJudge, Strategy, TreeOfThoughts, strategy_models
from ._taskgraph import TaskGraph

DEFAULT_SYSTEM = (
    "You are an autonomous agent working in a directory (your world) on the task you are"
    " given. Use the tools to read and change files and to run commands there. Work in"
    " small steps, check your results, and when the task is done reply with a short"
    " summary and no tool call."
)


TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A tool's name as every provider takes it (what ``tool_choice`` may name)."""

GRAPH_KEYS = ("tasks", "max_parallel")
"""A graph's keys, which a blueprint may hold at its top as well as under ``graph``."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ApprovalSettings(_Strict):
    """How approvals are asked and how long they wait."""

    timeout_s: float = Field(default=600.0, gt=0)
    """After this many seconds an unanswered request is denied automatically."""
    rules: tuple[ApprovalRule, ...] = ()


class SamplingSettings(_Strict):
    """Whether a tool source (an MCP server) may have the run's model answer a prompt."""

    allow: Literal["ask", "allow", "deny"] = "ask"
    """``ask``: a person decides each request, like a tool call (an unattended run
    refuses it); ``allow``: served at once; ``deny``: always refused."""
    max_tokens: int = Field(default=1024, gt=0)
    """The most a sampling reply may take (a request asking for more gets this)."""


class SandboxSettings(_Strict):
    """Where commands run, and which domains they and ``http_fetch`` may reach."""

    kind: Literal["process", "bwrap", "docker", "podman", "gvisor", "microvm"] = "process"
    """The weakest tier the run accepts: it refuses to start on a host with no stronger."""
    live: bool = False
    """Keep one sandbox for the run's world, between commands and turns: background
    processes (``run_command`` with ``background: true``, ``read_output``,
    ``stop_process``), checkpointed when the run pauses where the tier can (gVisor)
    and restored on resume. It needs a tier that keeps boxes (``process``, ``podman``,
    ``gvisor``, ``microvm``)."""
    checkpoint_idle_min: float | None = Field(default=None, gt=0)
    """With ``live``: checkpoint the world after this many minutes without a new turn
    and no call running (a run waiting on an approval, say), where the tier can; the
    next use restores it. ``None`` (the default): only a pause checkpoints."""
    network: tuple[str, ...] = ()
    """Allowed domains (``*.example.com`` for subdomains)."""
    deny: tuple[str, ...] = ()
    """Refused domains; they win over ``network``."""
    command_timeout_s: float = Field(default=120.0, gt=0)
    tmp_mb: int = Field(default=512, gt=0)
    """The size of each command's private ``/tmp`` in MiB (``bwrap``, ``docker``): it is
    memory (a tmpfs), so it is kept well below the host's RAM."""
    world_mb: int | None = Field(default=4096, gt=0)
    """The disk space the run's world may take, in MiB (``du``'s measure); ``None``: no
    cap. Large enough for a project with its dependencies, small enough to stop a
    runaway command from filling the disk."""


SUMMARY_INSTRUCTION = (
    "Summarise the conversation above for the agent that continues it: the task, what"
    " was done and found (files, commands, results, decisions), what failed and why, and"
    " what is left to do. Be concise but keep every detail the work still needs."
)


class ContextSettings(_Strict):
    """When a long conversation's older turns are summarised (docs/engine.md#context)."""

    compact_at_tokens: int | None = Field(default=None, gt=0)
    """Summarise when the next request would be longer than this many tokens (estimated);
    ``None`` (the default): never."""
    keep_turns: int = Field(default=2, ge=1)
    """The latest turns always sent as they are (never summarised)."""
    max_tokens: int = Field(default=1024, gt=0)
    """The most the summary may take."""
    instruction: str = Field(default=SUMMARY_INSTRUCTION, min_length=1)
    """What the summary model is asked, after the turns it summarises."""


class ModelErrorSettings(_Strict):
    """How many wrong replies in a row a run takes from its model before it pauses.

    A reply goes wrong when a call's arguments do not parse, it calls a tool the run
    does not have, its arguments do not fit the tool's schema, or it holds no text and
    no call; the model is told each time (docs/engine.md, "When the model gets it wrong").
    """

    pause_after: int | None = Field(default=5, ge=1)
    """Pause the run (``run.paused``, reason ``model_errors``) once this many replies in a
    row went wrong; ``helix resume`` goes on and starts the count again. ``None``: never."""


class ModelPrice(_Strict):
    """A model's price in USD per million tokens, for models the price list lacks."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)

    def to_price(self) -> Price:
        """The price as the cost book takes it."""
        return Price(input=self.input, output=self.output, cached_input=self.cached_input)


class Blueprint(_Strict):
    """A reusable agent definition."""

    name: str = "default"
    model: str | tuple[str, ...] | None = None
    """One ``provider:model``, or a fallback chain; the run's ``--model`` overrides it."""
    roles: dict[str, str | tuple[str, ...]] = Field(
        default_factory=dict[str, str | tuple[str, ...]]
    )
    """A model (or fallback chain) per kind of call: ``main``, ``summary``, ``judge``,
    ``planner``, ``worker`` (docs/models.md#roles); ``default`` and ``summarizer`` are
    read as ``main`` and ``summary``."""
    context: ContextSettings = Field(default_factory=ContextSettings)
    """When older turns are summarised by the ``summary`` role's model (off by default)."""
    system: str = DEFAULT_SYSTEM
    tools: tuple[str, ...] | None = None
    """Tools offered to the model; ``None`` offers every built-in tool."""
    approvals: ApprovalSettings = Field(default_factory=ApprovalSettings)
    sampling: SamplingSettings = Field(default_factory=SamplingSettings)
    budget: Budget = Field(default_factory=Budget)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    placement: Placement | None = None
    """Run the commands on a cluster node with these labels and resources (in that
    node's ``bwrap``); ``None``: where the run is driven. Needs an engine that places
    tools (``Engine(placer=…)``: the ray executor's)."""
    policy: Policy = Field(default_factory=Policy)
    """The blueprint's ceiling, intersected with the workspace's and the run's."""
    prices: dict[str, ModelPrice] = Field(default_factory=dict[str, ModelPrice])
    """Prices by ``provider:model``, over the shipped price list (a USD cap needs one)."""
    plugins: tuple[str, ...] = ()
    mcp: tuple[McpServerSpec, ...] = ()
    """MCP servers whose tools the run offers as ``SERVER__TOOL`` (names unique)."""
    graph: TaskGraph | None = None
    """A task graph: the run is a graph whose tasks are child runs (``_taskgraph.py``,
    docs/graphs.md); the rest of the blueprint is the tasks' ceiling and defaults."""
    max_tokens: int = Field(default=4096, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)
    strategy: Strategy | None = None
    """How the run reasons: ``chain_of_thought``, ``plan_then_act`` or
    ``tree_of_thoughts`` (docs/strategies.md); ``None``: the plain loop."""
    model_errors: ModelErrorSettings = Field(default_factory=ModelErrorSettings)
    """When the model's wrong replies pause the run (after 5 in a row, by default)."""
    tool_choice: str = "auto"
    """What the model may do with its tools: ``auto`` (it decides), ``none`` (it may call
    none: every request says so), ``required`` (it must call one) or the name of one of
    the run's tools (it must call that one). A forced choice (``required``, a name) holds
    until the model has made a call that was not rejected as its mistake; requests then
    go with ``auto`` (``runtime/_forced.py``; docs/engine.md, "Forcing a tool call")."""

    @field_validator("tool_choice")
    @classmethod
    def _plain_tool_choice(cls, choice: str) -> str:
        if choice not in TOOL_CHOICES and not TOOL_NAME.fullmatch(choice):
            raise ValueError(
                f"{choice!r} is not auto, required, none or a tool's name (letters, digits,"
                " _ and -, at most 64 characters)"
            )
        return choice

    @field_validator("roles")
    @classmethod
    def _current_role_names(
        cls, roles: dict[str, str | tuple[str, ...]]
    ) -> dict[str, str | tuple[str, ...]]:
        named: dict[str, str | tuple[str, ...]] = {}
        for role, spec in roles.items():
            name = ROLE_ALIASES.get(role, role)
            if name in named:
                raise ValueError(
                    f"{role} is the older name of {name}, which is given too: give one"
                )
            named[name] = spec
        return named

    def role_model(self, role: str) -> ModelSpec | None:
        """The model ``roles`` names for ``role`` (``main``: else ``model``), or ``None``."""
        spec = self.roles.get(role)
        if spec is None and role == "main":
            spec = self.model
        return spec

    @field_validator("mcp")
    @classmethod
    def _distinct_servers(cls, servers: tuple[McpServerSpec, ...]) -> tuple[McpServerSpec, ...]:
        names = [s.name for s in servers]
        doubled = sorted({n for n in names if names.count(n) > 1})
        if doubled:
            raise ValueError(f"two MCP servers are named {', '.join(doubled)}")
        return servers

    def price_book(self, base: PriceBook) -> PriceBook:
        """``base`` with this blueprint's prices on top."""
        return base.with_overrides({n: p.to_price() for n, p in self.prices.items()})

    def check(self, registry: ToolRegistry) -> Blueprint:
        """Check names the schema cannot: models, roles, tools. Returns ``self``.

        MCP servers need the ``mcp`` SDK: without it, ``ConfigError`` names the extra.
        """
        if self.mcp:
            require_sdk()
        for name in [self.model] if isinstance(self.model, str) else list(self.model or ()):
            _check_model(name, "model")
        _check_roles(self.roles)
        for name in self.prices:
            _check_model(name, f"prices.{name}")
        for index, tool_name in enumerate(self.tools or ()):
            if tool_name not in registry:
                raise BlueprintError(
                    f"tools.{index}: unknown tool {tool_name!r}; known tools are"
                    f" {', '.join(registry.names)}"
                )
        for field, name in strategy_models(self.strategy):
            _check_model(name, field)
        judge = self.strategy.judge if isinstance(self.strategy, TreeOfThoughts) else None
        for index, tool_name in enumerate(
            (judge.tools or ()) if isinstance(judge, RunJudge) else ()
        ):
            if tool_name not in registry:
                raise BlueprintError(
                    f"strategy.judge.tools.{index}: unknown tool {tool_name!r}; known tools"
                    f" are {', '.join(registry.names)}"
                )
        return self

    @classmethod
    def load(cls, path: str | Path) -> Blueprint:
        """Read a YAML, TOML or JSON blueprint; ``BlueprintError`` names file, field, reason."""
        path = Path(path)
        return cls.parse(read_settings(path, "blueprint"), source=str(path), name=path.stem)

    @classmethod
    def parse(cls, data: object, *, source: str, name: str | None = None) -> Blueprint:
        """Validate a blueprint's settings (from a file, or sent to the server).

        ``name`` is used unless the settings name themselves; ``BlueprintError`` names
        ``source``, the field and the reason.
        """
        if not isinstance(data, dict):
            raise BlueprintError(f"{source}: a blueprint is a mapping of settings")
        graph = {key: data[key] for key in GRAPH_KEYS if key in data}
        if graph:  # a plan's tasks may stand at the top (docs/graphs.md)
            if "graph" in data:
                raise BlueprintError(f"{source}: give tasks at the top or under graph, not both")
            data = {**{k: v for k, v in data.items() if k not in GRAPH_KEYS}, "graph": graph}
        try:
            return cls.model_validate({"name": name, **data} if name is not None else data)
        except ValidationError as error:
            raise BlueprintError(f"{source}: {first_problem(error)}") from None


def read_settings(path: Path, what: str) -> object:
    """A settings file's data (YAML, TOML or JSON); ``BlueprintError`` if unread or unparsed."""
    try:
        return read_structured(path, what)
    except FileProblem as problem:
        if problem.stage == "read":
            raise BlueprintError(f"{path}: cannot read the {what}: {problem}") from None
        raise BlueprintError(f"{path}: does not parse: {problem}") from None


def blueprint_of(settings: RunSettings) -> Blueprint:
    """The run's blueprint, validated from its settings (the kernel keeps it as data).

    ``InvalidPayloadError`` names the field and the reason: an imported log with a bad
    blueprint is refused with it (``import_lines(check_settings=…)``), and a run whose
    log holds one cannot be resumed.
    """
    try:
        return Blueprint.model_validate(settings.blueprint)
    except ValidationError as error:
        raise InvalidPayloadError(
            f"run.created: settings.blueprint.{first_problem(error)}"
        ) from None


def _check_roles(roles: dict[str, str | tuple[str, ...]]) -> None:
    for role, spec in roles.items():
        if role not in ROLES:
            raise BlueprintError(
                f"roles.{role}: unknown role; choose from {', '.join(ROLES)}"
                " (default and summarizer: the older names of main and summary)"
            )
        if not spec:
            raise BlueprintError(f"roles.{role}: no model: name one, or a fallback list")
        for name in [spec] if isinstance(spec, str) else list(spec):
            _check_model(name, f"roles.{role}")


def _check_model(name: str, field: str) -> None:
    try:
        parse_model_name(name)
    except HelixError as error:
        raise BlueprintError(f"{field}: {error}") from None
