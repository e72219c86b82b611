"""The conformance suite every source of tools passes: built-in, plugin, MCP server.

Subclass ``ToolConformance`` in a test module (its name must start with ``Test``),
give every tool a ``ToolSample`` in ``samples`` (by tool name: the arguments of a call
that succeeds, of one that fails, of one slow enough to cancel), and provide the tools
under test, either way:

- a ``tools`` fixture: a ``ToolRegistry`` or a sequence of ``ToolDef``;
- or a ``tool_source`` fixture: an unopened ``ToolSource``. The suite opens it with the
  ``source_host`` fixture (the test's world and sandbox; override it to give the source
  an asker, a sampler, egress) and closes it after each test.

Each check is a test method, parametrised per tool (``tool_name``), and fails with a
message naming the tool: its schema and a JSON round trip of its arguments, its
facets and effect kind against what a call really does to the world, the shape of a
failing call (a ``ToolResult(ok=False)``, never an exception), cancellation mid-call,
and idempotence. Calls run for real: a fresh world directory per test and the
process sandbox (override ``sandbox`` for another tier). Every test is async
(pytest-asyncio in ``auto`` mode; a class may share one loop and one opened source,
see docs/engine.md); ``jsonschema`` must be installed.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, get_args

import pytest
from pydantic import RootModel

from helix.errors import InvalidToolArgumentsError
from helix.kernel.events import Payload
from helix.sandbox import ProcessSandbox, Sandbox
from helix.tools import EffectKind, SourceHost, ToolContext, ToolDef, ToolResult, ToolSource

from ._tool_checks import judge_call, outcome, refusal, settled, takes_strings
from ._tool_samples import ToolSample, world_changes, world_state

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""A tool name every model provider accepts."""
ORIGIN = re.compile(r"^(mcp:\S+|plugin:\S+@\S+)$")
"""``ToolDef.origin``: ``mcp:SERVER`` or ``plugin:NAME@VERSION`` (``None``: Helix's own)."""
UNKNOWN_ARGUMENT = "zz_not_an_argument"
"""An argument no tool has: a call giving it must be refused."""


class ToolConformance:
    """What every tool does, whatever its source. Subclass it (see the module)."""

    samples: ClassVar[Mapping[str, ToolSample]] = MappingProxyType({})
    """How to call each tool, by name: exactly the tools under test, no more, no fewer."""
    max_output: ClassVar[int] = 4096
    """The ``ToolContext.max_output`` calls run with (bytes)."""
    output_slack: ClassVar[int] = 1024
    """Bytes an output may run past ``max_output``: its truncation marker, a footer."""
    command_timeout_s: ClassVar[float] = 60.0
    """The ``ToolContext.command_timeout_s`` calls run with."""
    start_timeout_s: ClassVar[float] = 30.0
    """How long a slow call may take to be under way before the suite gives up."""
    stop_timeout_s: ClassVar[float] = 10.0
    """How long a cancelled call may take to stop."""
    settle_s: ClassVar[float] = 0.2
    """How long the world is watched after a cancelled call stopped, for work going on."""

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Run each ``tool_name`` test once per tool in ``samples``."""
        if "tool_name" in metafunc.fixturenames:
            metafunc.parametrize("tool_name", sorted(self.samples))

    # -- fixtures (override to change the surroundings) -------------------------------

    @pytest.fixture
    def world(self, tmp_path: Path) -> Path:
        """The run's world: an empty directory, absolute and resolved."""
        root = tmp_path / "world"
        root.mkdir()
        return root.resolve()

    @pytest.fixture
    def sandbox(self) -> Iterator[Sandbox]:
        """The sandbox calls run in (the process tier)."""
        box = ProcessSandbox()
        yield box
        box.close()

    @pytest.fixture
    def source_host(self, world: Path, sandbox: Sandbox) -> SourceHost:
        """What an opened source is given (``host_for``)."""
        return self.host_for(world, sandbox)

    @staticmethod
    def host_for(world: Path, sandbox: Sandbox) -> SourceHost:
        """A ``SourceHost`` on this world and sandbox, asking nothing of anyone.

        No network, nobody to ask, no model. What the source records must be an event
        payload (``helix.kernel.events.Payload``); it is checked, then dropped.
        """

        async def record(payload: Payload) -> None:
            assert isinstance(payload, Payload), (
                f"the source recorded {payload!r}, not an event payload"
            )

        return SourceHost(
            run_id="run_conformance",
            world=world,
            sandbox=sandbox,
            env={},
            record=record,
            changed=lambda name: None,
        )

    @pytest.fixture
    async def tools(
        self, tool_source: ToolSource, source_host: SourceHost
    ) -> AsyncIterator[Iterable[ToolDef]]:
        """The tools under test: ``tool_source``'s, opened for the test and closed after."""
        await tool_source.open(source_host)
        try:
            yield list(tool_source.tools())
        finally:
            await tool_source.close()

    def context(self, world: Path, sandbox: Sandbox, call_id: str = "call_1") -> ToolContext:
        """The ``ToolContext`` a call runs with."""
        return ToolContext(
            run_id="run_conformance",
            call_id=call_id,
            world=world,
            sandbox=sandbox,
            command_timeout_s=self.command_timeout_s,
            max_output=self.max_output,
        )

    def sample_for(self, name: str) -> ToolSample:
        """The sample the checks use for tool ``name`` (``samples[name]``).

        Override it to fill in what is known only when the test runs, such as the port
        of a server an autouse fixture started (function-scoped fixtures may set
        attributes on ``self``: the test sees them).
        """
        return self.samples[name]

    # -- helpers ----------------------------------------------------------------------

    def _tool(self, tools: Iterable[ToolDef], name: str) -> tuple[ToolDef, ToolSample]:
        found = {t.name: t for t in tools}
        if name not in found:
            raise AssertionError(f"samples names {name!r}, but the source has no such tool")
        return found[name], self.sample_for(name)

    def _runnable(self, tool: ToolDef, sample: ToolSample) -> None:
        if sample.skip_call is not None:
            pytest.skip(f"{tool.name}: {sample.skip_call}")

    async def _call(
        self, tool: ToolDef, args: Mapping[str, Any], ctx: ToolContext, what: str
    ) -> ToolResult:
        """Run a call; an exception, or anything but a bounded ``ToolResult``, fails."""
        try:
            result = await tool.call(ctx, args)
        except Exception as error:
            raise AssertionError(
                f"{tool.name} raised {type(error).__name__} on {what} {dict(args)!r}: {error}."
                " A call that fails must return ToolResult(ok=False, output=<why>)"
            ) from error
        assert isinstance(result, ToolResult), (
            f"{tool.name} returned {type(result).__name__} on {what}, not a ToolResult"
        )
        assert isinstance(result.output, str), f"{tool.name}: output is not a str on {what}"
        size = len(result.output.encode("utf-8"))
        limit = ctx.max_output + self.output_slack
        assert size <= limit, (
            f"{tool.name}: the output of {what} is {size} bytes, past max_output"
            f" ({ctx.max_output}) and room for a truncation marker ({self.output_slack})"
        )
        assert "Traceback (most recent call last)" not in result.output, (
            f"{tool.name}: the output of {what} is a traceback, not a message"
        )
        return result

    # -- the tools under test are the tools sampled -----------------------------------

    async def test_every_tool_has_a_sample(self, tools: Iterable[ToolDef]) -> None:
        names = [t.name for t in tools]
        doubled = sorted({n for n in names if names.count(n) > 1})
        assert not doubled, f"tool names must be unique: {', '.join(doubled)} repeat"
        missing = sorted(set(names) - set(self.samples))
        assert not missing, f"tools without a sample (add them to samples): {', '.join(missing)}"
        stale = sorted(set(self.samples) - set(names))
        assert not stale, f"samples for tools the source lacks: {', '.join(stale)}"

    # -- declaration: name, description, schema ----------------------------------------

    async def test_name_and_description(self, tools: Iterable[ToolDef], tool_name: str) -> None:
        tool, _ = self._tool(tools, tool_name)
        assert NAME.fullmatch(tool.name), (
            f"{tool.name!r}: a tool name must match {NAME.pattern} for every model provider"
        )
        assert tool.description.strip(), f"{tool.name}: the description is empty"
        assert tool.origin is None or ORIGIN.fullmatch(tool.origin), (
            f"{tool.name}: origin {tool.origin!r} is neither mcp:SERVER nor plugin:NAME@VERSION"
        )

    async def test_parameters_schema(self, tools: Iterable[ToolDef], tool_name: str) -> None:
        import jsonschema

        tool, _ = self._tool(tools, tool_name)
        schema = tool.parameters
        where = f"{tool.name}'s parameters"
        assert isinstance(schema, dict), f"{where} are not a JSON object"
        assert schema.get("type") == "object", f"{where}: type must be 'object'"
        properties = schema.get("properties")
        assert isinstance(properties, dict), f"{where}: 'properties' must be an object"
        required = schema.get("required", [])
        assert isinstance(required, list), f"{where}: 'required' must be a list"
        unknown = sorted(set(required) - set(properties))
        assert not unknown, f"{where}: required names no property: {', '.join(unknown)}"
        titled = sorted(p for p, s in properties.items() if isinstance(s, dict) and "title" in s)
        assert "title" not in schema, f"{where}: a top-level 'title' is noise to the model"
        assert not titled, f"{where}: 'title' is noise to the model in {', '.join(titled)}"
        assert schema.get("additionalProperties") is False, (
            f"{where}: 'additionalProperties' must be false (unknown arguments are refused)"
        )
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as error:
            raise AssertionError(f"{where} are not a valid JSON Schema: {error.message}") from None
        if issubclass(tool.arguments, RootModel):
            return  # the whole object checked against this schema (an MCP tool's)
        names = set(properties)
        fields = {f.alias or n for n, f in tool.arguments.model_fields.items()}
        assert names == fields, (
            f"{where} show {sorted(names)} but its arguments model takes {sorted(fields)}"
        )

    async def test_sample_arguments_round_trip(
        self, tools: Iterable[ToolDef], tool_name: str
    ) -> None:
        import jsonschema

        tool, sample = self._tool(tools, tool_name)
        calls = {"args": sample.args, "failing": sample.failing}
        if sample.slow is not None:
            calls["slow.args"] = sample.slow.args
        for label, args in calls.items():
            if args is None:
                continue
            try:
                parsed = tool.validate(args)
            except InvalidToolArgumentsError as error:
                raise AssertionError(
                    f"{tool.name}: the sample's {label} are refused: {error}"
                ) from None
            try:
                jsonschema.validate(dict(args), tool.parameters)
            except jsonschema.ValidationError as error:
                raise AssertionError(
                    f"{tool.name}: the schema refuses the sample's {label}: {error.message}"
                ) from None
            wire = json.loads(json.dumps(dict(args)))
            assert wire == dict(args), f"{tool.name}: the sample's {label} are not plain JSON"
            again = tool.validate(wire)
            assert again.model_dump(mode="json") == parsed.model_dump(mode="json"), (
                f"{tool.name}: the sample's {label} parse differently after a JSON round trip"
            )

    async def test_unknown_arguments_are_refused(
        self, tools: Iterable[ToolDef], tool_name: str
    ) -> None:
        tool, sample = self._tool(tools, tool_name)
        why = refusal(tool, {**sample.args, UNKNOWN_ARGUMENT: 1})
        assert why is not None, f"{tool.name} takes an unknown argument without a word"
        assert tool.name in why, (
            f"{tool.name}: refusing an unknown argument must name the tool: {why}"
        )
        assert UNKNOWN_ARGUMENT in why, (
            f"{tool.name}: refusing an unknown argument must name it: {why}"
        )
        for name in tool.parameters.get("required", []):
            why = refusal(tool, {k: v for k, v in sample.args.items() if k != name})
            assert why is not None, f"{tool.name} takes a call without its required {name!r}"
            assert name in why, f"{tool.name}: refusing a call without {name!r} must name it"

    # -- declaration: facets and effect kind -----------------------------------------

    async def test_facets_are_consistent(self, tools: Iterable[ToolDef], tool_name: str) -> None:
        tool, sample = self._tool(tools, tool_name)
        facets = tool.facets
        properties: dict[str, Any] = tool.parameters.get("properties", {})
        absent = sorted(facets.arguments - set(properties))
        assert not absent, f"{tool.name}: facets name arguments it lacks: {', '.join(absent)}"
        for argument in facets.paths:
            assert takes_strings(properties[argument], lists=True), (
                f"{tool.name}: path argument {argument!r} is not a string (or list of strings)"
            )
        for role, named in (("command", facets.command), ("url", facets.url)):
            if named is not None:
                assert takes_strings(properties[named], lists=False), (
                    f"{tool.name}: {role} argument {named!r} is not a string"
                )
        if facets.read_only:
            assert facets.effect == "none", (
                f"{tool.name} is read-only, so its effect is 'none', not {facets.effect!r}"
            )
        if tool.concurrent and not facets.read_only:
            assert sample.concurrent, (
                f"{tool.name} runs concurrently but is not read-only: declare it so in its"
                " sample (ToolSample(concurrent=True)) if that is by design"
            )

    async def test_effect_kind(self, tools: Iterable[ToolDef], tool_name: str) -> None:
        tool, _ = self._tool(tools, tool_name)
        kinds = get_args(EffectKind)
        assert tool.effect in kinds, f"{tool.name}: effect {tool.effect!r} is not one of {kinds}"
        withholds = tool.effect == "external-withhold"
        compensates = tool.effect == "external-compensate"
        assert (tool.perform is not None) == withholds, (
            f"{tool.name}: a 'perform' hook goes with effect 'external-withhold' (and only"
            f" with it): its effect is {tool.effect!r}, perform is {tool.perform!r}"
        )
        assert (tool.undo is not None) == compensates, (
            f"{tool.name}: an 'undo' hook goes with effect 'external-compensate' (and only"
            f" with it): its effect is {tool.effect!r}, undo is {tool.undo!r}"
        )

    # -- calls: what they do, how they fail -------------------------------------------

    async def test_call_does_what_it_declares(
        self, tools: Iterable[ToolDef], tool_name: str, world: Path, sandbox: Sandbox
    ) -> None:
        tool, sample = self._tool(tools, tool_name)
        self._runnable(tool, sample)
        sample.prepare(world)
        before = world_state(world)
        result = await self._call(tool, sample.args, self.context(world, sandbox), "its sample")
        assert result.ok, f"{tool.name}: the sample call failed: {result.output[:500]}"
        judge_call(tool, before, world_state(world), result, "its sample")

    async def test_failing_call_returns_a_clear_error(
        self, tools: Iterable[ToolDef], tool_name: str, world: Path, sandbox: Sandbox
    ) -> None:
        tool, sample = self._tool(tools, tool_name)
        if sample.failing is None:
            pytest.skip(f"{tool.name}: its sample declares no failing call")
        sample.prepare(world)
        before = world_state(world)
        ctx = self.context(world, sandbox)
        result = await self._call(tool, sample.failing, ctx, "its failing call")
        assert not result.ok, (
            f"{tool.name}: the failing call {dict(sample.failing)!r} succeeded:"
            f" {result.output[:500]}"
        )
        assert result.output.strip(), f"{tool.name}: a failed call must say why (output is empty)"
        judge_call(tool, before, world_state(world), result, "its failing call")

    async def test_idempotent_call_twice_is_once(
        self, tools: Iterable[ToolDef], tool_name: str, world: Path, sandbox: Sandbox
    ) -> None:
        tool, sample = self._tool(tools, tool_name)
        if not tool.idempotent:
            pytest.skip(f"{tool.name} is not declared idempotent")
        self._runnable(tool, sample)
        sample.prepare(world)
        first = await self._call(
            tool, sample.args, self.context(world, sandbox, "call_1"), "a call"
        )
        once = world_state(world)
        second = await self._call(
            tool, sample.args, self.context(world, sandbox, "call_2"), "the call run again"
        )
        twice = world_state(world)
        assert twice == once, (
            f"{tool.name} is declared idempotent, but running it again changed the world:"
            f" {world_changes(once, twice)}"
        )
        assert second.ok == first.ok, (
            f"{tool.name} is declared idempotent, but ok was {first.ok} then {second.ok}:"
            f" {second.output[:300]}"
        )
        assert second.effects == first.effects, (
            f"{tool.name} is declared idempotent, but its effects differ when run again:"
            f" {first.effects} then {second.effects}"
        )

    async def test_cancelled_call_stops_and_leaves_no_partial_file(
        self, tools: Iterable[ToolDef], tool_name: str, world: Path, sandbox: Sandbox
    ) -> None:
        tool, sample = self._tool(tools, tool_name)
        slow = sample.slow
        if slow is None:
            pytest.skip(f"{tool.name}: its sample declares no slow call")
        sample.prepare(world)
        before = world_state(world)
        ctx = self.context(world, sandbox)
        async with asyncio.TaskGroup() as group:
            task = group.create_task(settled(tool.call(ctx, slow.args)))
            for _ in range(int(self.start_timeout_s / 0.02)):  # each wait lasts at least that
                if slow.started(world) or task.done():
                    break
                await asyncio.sleep(0.02)
            under_way = slow.started(world) and not task.done()
            task.cancel()
            done, _ = await asyncio.wait([task], timeout=self.stop_timeout_s)
            # A call that ignores its cancellation keeps the group (and the test) waiting.
            assert done, (
                f"{tool.name} did not stop within {self.stop_timeout_s:g}s of being cancelled"
            )
        assert under_way, (
            f"{tool.name}: the slow call was not under way after {self.start_timeout_s:g}s"
            f" (it ended with {outcome(task)})"
        )
        assert task.cancelled(), (
            f"{tool.name} swallowed its cancellation (it ended with {outcome(task)}):"
            " a cancelled call must stop and let the cancellation through"
        )
        stopped = world_state(world)
        left = {p: op for p, op in world_changes(before, stopped).items() if p not in slow.leaves}
        assert not left, f"{tool.name}: the cancelled call left partial changes: {left}"
        await asyncio.sleep(self.settle_s)
        later = world_changes(stopped, world_state(world))
        assert not later, (
            f"{tool.name}: the world kept changing after the call was cancelled: {later}"
        )
        if sample.skip_call is None:  # the tool still works (an MCP session not wedged)
            ctx = self.context(world, sandbox, "call_2")
            after = await self._call(tool, sample.args, ctx, "its sample, after a cancelled call")
            assert after.ok, (
                f"{tool.name}: the sample call failed after a cancelled call: {after.output[:500]}"
            )
