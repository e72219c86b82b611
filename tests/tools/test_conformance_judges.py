"""``ToolConformance`` judges: each check fails a tool that breaks it, naming the tool.

The misbehaving tools here are real tools (declared with ``@tool``, run against a real
world directory and the process sandbox); only what they do wrong is contrived.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

import pytest
import pytest_asyncio
from pydantic import BaseModel, ConfigDict, Field, create_model

from helix.sandbox import ProcessSandbox
from helix.testing.conformance import SlowCall, ToolConformance, ToolSample
from helix.tools import (
    Facets,
    SourceHost,
    ToolContext,
    ToolDef,
    ToolResult,
    builtin_registry,
    example_tools,
    tool,
)


@pytest.fixture
def world(tmp_path: Path) -> Path:
    root = tmp_path / "world"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def sandbox() -> Iterator[ProcessSandbox]:
    box = ProcessSandbox()
    yield box
    box.close()


@tool(read_only=True, effect="none")
async def echo(ctx: ToolContext, text: str) -> ToolResult:
    """Say `text` back."""
    return ToolResult(ok=True, output=text)


def _suite(**samples: ToolSample) -> ToolConformance:
    """A suite instance with these samples (the checks are called by hand below)."""
    judged: type[ToolConformance] = type("_Judged", (ToolConformance,), {"samples": samples})
    return judged()


ECHO = ToolSample(args={"text": "hi"}, failing={"text": ""})


# -- declarations ----------------------------------------------------------------------


async def test_tools_and_samples_must_match() -> None:
    with pytest.raises(AssertionError, match=r"tools without a sample .*: echo"):
        await _suite().test_every_tool_has_a_sample([echo])
    with pytest.raises(AssertionError, match="samples for tools the source lacks: gone"):
        await _suite(echo=ECHO, gone=ECHO).test_every_tool_has_a_sample([echo])
    with pytest.raises(AssertionError, match="tool names must be unique: echo repeat"):
        await _suite(echo=ECHO).test_every_tool_has_a_sample([echo, echo])


async def test_a_name_no_provider_takes_fails() -> None:
    spaced = dataclasses.replace(echo, name="echo back")
    with pytest.raises(AssertionError, match="'echo back': a tool name must match"):
        await _suite(**{"echo back": ECHO}).test_name_and_description([spaced], "echo back")


async def test_an_empty_description_or_a_stray_origin_fails() -> None:
    with pytest.raises(AssertionError, match="echo: the description is empty"):
        await _suite(echo=ECHO).test_name_and_description(
            [dataclasses.replace(echo, description=" ")], "echo"
        )
    with pytest.raises(AssertionError, match="echo: origin 'npm:x' is neither"):
        await _suite(echo=ECHO).test_name_and_description(
            [dataclasses.replace(echo, origin="npm:x")], "echo"
        )


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"type": "array"}, "type must be 'object'"),
        (
            {"type": "object", "properties": {}, "required": ["text"]},
            "required names no property: text",
        ),
        (
            {"type": "object", "title": "Echo", "properties": {"text": {"type": "string"}}},
            "a top-level 'title' is noise",
        ),
        (
            {"type": "object", "properties": {"text": {"type": "string", "title": "Text"}}},
            "'title' is noise to the model in text",
        ),
        ({"type": "object", "properties": {"text": {"type": "string"}}}, "additionalProperties"),
        (
            {
                "type": "object",
                "properties": {"text": {"type": "strang"}},
                "additionalProperties": False,
            },
            "not a valid JSON Schema",
        ),
        (
            {"type": "object", "properties": {"words": {}}, "additionalProperties": False},
            r"show \['words'\] but its arguments model takes \['text'\]",
        ),
    ],
)
async def test_a_bad_parameters_schema_fails(parameters: dict[str, object], message: str) -> None:
    broken = dataclasses.replace(echo, parameters=parameters)
    with pytest.raises(AssertionError, match=f"echo's parameters.*{message}"):
        await _suite(echo=ECHO).test_parameters_schema([broken], "echo")


async def test_an_argument_named_by_its_alias_passes() -> None:
    # An MCP tool's argument need not be a Python name: the model takes it by alias.
    model = _model(max_results=(int, Field(alias="max-results")))
    schema = {
        "type": "object",
        "properties": {"max-results": {"type": "integer"}},
        "required": ["max-results"],
        "additionalProperties": False,
    }
    aliased = dataclasses.replace(echo, arguments=model, parameters=schema)
    suite = _suite(echo=ToolSample(args={"max-results": 3}))
    await suite.test_parameters_schema([aliased], "echo")
    await suite.test_sample_arguments_round_trip([aliased], "echo")
    await suite.test_unknown_arguments_are_refused([aliased], "echo")


async def test_sample_arguments_the_tool_refuses_fail() -> None:
    suite = _suite(echo=ToolSample(args={"text": "hi"}, failing={"text": 3}))
    with pytest.raises(AssertionError, match="echo: the sample's failing are refused"):
        await suite.test_sample_arguments_round_trip([echo], "echo")
    loose = dataclasses.replace(echo, arguments=_model(text=(object, ...)))
    with pytest.raises(AssertionError, match="echo: the schema refuses the sample's failing"):
        await suite.test_sample_arguments_round_trip([loose], "echo")


def _model(**fields: object) -> type[BaseModel]:
    return create_model(  # type: ignore[no-any-return, call-overload]
        "echo_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )


async def test_unknown_arguments_taken_silently_fail() -> None:
    lax = create_model("echo_arguments", __config__=ConfigDict(extra="ignore"), text=(str, ...))
    with pytest.raises(AssertionError, match="echo takes an unknown argument without a word"):
        await _suite(echo=ECHO).test_unknown_arguments_are_refused(
            [dataclasses.replace(echo, arguments=lax)], "echo"
        )


async def test_inconsistent_facets_fail() -> None:
    suite = _suite(echo=ECHO)
    writes = dataclasses.replace(echo, facets=Facets(read_only=True, effect="world"))
    with pytest.raises(AssertionError, match="echo is read-only, so its effect is 'none'"):
        await suite.test_facets_are_consistent([writes], "echo")
    racing = dataclasses.replace(echo, facets=Facets(effect="world"), concurrent=True)
    with pytest.raises(AssertionError, match="echo runs concurrently but is not read-only"):
        await suite.test_facets_are_consistent([racing], "echo")
    declared = _suite(echo=dataclasses.replace(ECHO, concurrent=True))
    await declared.test_facets_are_consistent([racing], "echo")
    missing = dataclasses.replace(echo, facets=Facets(paths={"file": "read"}))
    with pytest.raises(AssertionError, match="echo: facets name arguments it lacks: file"):
        await suite.test_facets_are_consistent([missing], "echo")
    numeric = dataclasses.replace(
        echo,
        facets=Facets(url="text"),
        parameters={"type": "object", "properties": {"text": {"type": "integer"}}},
    )
    with pytest.raises(AssertionError, match="echo: url argument 'text' is not a string"):
        await suite.test_facets_are_consistent([numeric], "echo")


async def test_an_effect_without_its_hook_fails() -> None:
    record_create, outbox_send = example_tools(Path("/nonexistent"))
    hookless = dataclasses.replace(outbox_send, perform=None)
    suite = _suite(outbox_send=ECHO)
    with pytest.raises(AssertionError, match="outbox_send: a 'perform' hook goes with"):
        await suite.test_effect_kind([hookless], "outbox_send")
    stray = dataclasses.replace(record_create, perform=record_create.undo)
    with pytest.raises(AssertionError, match="record_create: a 'perform' hook goes with"):
        await _suite(record_create=ECHO).test_effect_kind([stray], "record_create")


# -- calls -------------------------------------------------------------------------------


@tool(effect="none")
async def sneaky(ctx: ToolContext, text: str) -> ToolResult:
    """Claims no effect, writes a file."""
    (ctx.world / "sneaked.txt").write_text(text)
    return ToolResult(ok=True, output="done")


@tool(effect="world", reports_changes=True, paths={"path": "write"})
async def forgetful(ctx: ToolContext, path: str) -> ToolResult:
    """Writes two files, reports none."""
    (ctx.world / path).write_text("one")
    (ctx.world / "also.txt").write_text("two")
    return ToolResult(ok=True, output="written")


@tool(effect="world")
async def crashing(ctx: ToolContext, text: str) -> ToolResult:
    """Raises on empty text instead of saying so."""
    if not text:
        raise ValueError("empty text")
    return ToolResult(ok=True, output=text * 10_000)


@tool(idempotent=True, effect="world", paths={"path": "write"})
async def appending(ctx: ToolContext, path: str) -> ToolResult:
    """Appends a line: declared idempotent, but it is not."""
    with (ctx.world / path).open("a") as out:
        out.write("line\n")
    return ToolResult(ok=True, output="appended")


async def test_a_call_doing_more_than_it_declares_fails(
    world: Path, sandbox: ProcessSandbox
) -> None:
    suite = _suite(sneaky=ECHO)
    with pytest.raises(
        AssertionError, match="sneaky declares effect 'none', but its sample changed"
    ):
        await suite.test_call_does_what_it_declares([sneaky], "sneaky", world, sandbox)
    assert (world / "sneaked.txt").read_text() == "hi"


async def test_unreported_changes_fail(world: Path, sandbox: ProcessSandbox) -> None:
    suite = _suite(forgetful=ToolSample(args={"path": "a.txt"}))
    with pytest.raises(AssertionError, match="forgetful says it reports its changes, but"):
        await suite.test_call_does_what_it_declares([forgetful], "forgetful", world, sandbox)


async def test_a_raising_or_succeeding_failing_call_fails(
    world: Path, sandbox: ProcessSandbox
) -> None:
    suite = _suite(crashing=ECHO)
    with pytest.raises(AssertionError, match="crashing raised ValueError on its failing call"):
        await suite.test_failing_call_returns_a_clear_error([crashing], "crashing", world, sandbox)
    lucky = _suite(crashing=ToolSample(args={"text": "a"}, failing={"text": "b"}))
    with pytest.raises(
        AssertionError, match="crashing: the output of its failing call is 10000 bytes"
    ):
        await lucky.test_failing_call_returns_a_clear_error([crashing], "crashing", world, sandbox)


async def test_an_unbounded_output_fails(world: Path, sandbox: ProcessSandbox) -> None:
    suite = _suite(crashing=ToolSample(args={"text": "abc"}))
    with pytest.raises(AssertionError, match="crashing: the output of its sample is 30000 bytes"):
        await suite.test_call_does_what_it_declares([crashing], "crashing", world, sandbox)


async def test_a_false_idempotence_fails(world: Path, sandbox: ProcessSandbox) -> None:
    suite = _suite(appending=ToolSample(args={"path": "log.txt"}))
    with pytest.raises(
        AssertionError, match="appending is declared idempotent, but running it again"
    ):
        await suite.test_idempotent_call_twice_is_once([appending], "appending", world, sandbox)


# -- cancellation ------------------------------------------------------------------------

_UNDER_WAY = SlowCall(
    args={"path": "partial.txt"}, started=lambda world: (world / "partial.txt").exists()
)


@tool(effect="world", paths={"path": "write"})
async def stubborn(ctx: ToolContext, path: str) -> ToolResult:
    """Waits, and answers a cancellation with a result instead of stopping."""
    (ctx.world / path).write_text("half")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        return ToolResult(ok=False, output="cancelled, but carrying on")
    return ToolResult(ok=True, output="never")


@tool(effect="world", paths={"path": "write"})
async def halfway(ctx: ToolContext, path: str) -> ToolResult:
    """Writes half a file, then waits for the rest forever."""
    (ctx.world / path).write_text("half")
    await asyncio.Event().wait()
    return ToolResult(ok=True, output="never")


async def test_a_swallowed_cancellation_fails(world: Path, sandbox: ProcessSandbox) -> None:
    sample = ToolSample(
        args={"path": "x"}, slow=dataclasses.replace(_UNDER_WAY, leaves=frozenset({"partial.txt"}))
    )
    with pytest.raises(AssertionError, match="stubborn swallowed its cancellation"):
        await _suite(stubborn=sample).test_cancelled_call_stops_and_leaves_no_partial_file(
            [stubborn], "stubborn", world, sandbox
        )


async def test_a_partial_file_left_fails(world: Path, sandbox: ProcessSandbox) -> None:
    sample = ToolSample(args={"path": "x"}, slow=_UNDER_WAY)
    with pytest.raises(
        AssertionError,
        match=r"halfway: the cancelled call left partial changes: \{'partial.txt': 'create'\}",
    ):
        await _suite(halfway=sample).test_cancelled_call_stops_and_leaves_no_partial_file(
            [halfway], "halfway", world, sandbox
        )


async def test_a_slow_call_never_under_way_fails(world: Path, sandbox: ProcessSandbox) -> None:
    never = SlowCall(args={"text": "hi"}, started=lambda world: False)
    suite = _suite(echo=ToolSample(args={"text": "hi"}, slow=never))
    with pytest.raises(AssertionError, match="echo: the slow call was not under way"):
        await suite.test_cancelled_call_stops_and_leaves_no_partial_file(
            [echo], "echo", world, sandbox
        )


class _Session:
    """A connection a cancelled call leaves broken (a wedged MCP session, say)."""

    broken = False


@tool(effect="world", paths={"path": "write"})
async def wedging(ctx: ToolContext, path: str) -> ToolResult:
    """Waits on its session when `path` is `slow`; a cancellation breaks the session."""
    if _Session.broken:
        return ToolResult(ok=False, output="the session is broken")
    if path == "slow":
        (ctx.world / "started").write_text("")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            _Session.broken = True
            raise
    return ToolResult(ok=True, output="fine")


async def test_a_source_wedged_by_a_cancellation_fails(
    world: Path, sandbox: ProcessSandbox
) -> None:
    slow = SlowCall(
        args={"path": "slow"},
        started=lambda world: (world / "started").exists(),
        leaves=frozenset({"started"}),
    )
    suite = _suite(wedging=ToolSample(args={"path": "quick"}, slow=slow))
    with pytest.raises(AssertionError, match="wedging: the sample call failed after a cancelled"):
        await suite.test_cancelled_call_stops_and_leaves_no_partial_file(
            [wedging], "wedging", world, sandbox
        )


# -- a source rather than a list: the suite opens and closes it ------------------------


class _PluginLike:
    """A tool source in-process, as a plugin is: its tools carry their origin."""

    name = "plugin:conformance"

    def __init__(self) -> None:
        self.host: SourceHost | None = None
        self.closed = False

    async def open(self, host: SourceHost) -> None:
        self.host = host

    def tools(self) -> Sequence[ToolDef]:
        assert self.host is not None, "tools() before open()"
        return [dataclasses.replace(echo, origin="plugin:conformance@1.0.0")]

    async def close(self) -> None:
        self.closed = True


class TestAToolSource(ToolConformance):
    samples = {"echo": ToolSample(args={"text": "hi"}, failing=None)}

    @pytest.fixture
    def tool_source(self) -> Iterator[_PluginLike]:
        source = _PluginLike()
        yield source
        assert source.closed, "the suite did not close the source it opened"
        assert source.host is not None
        assert source.host.world.is_dir()


class _Started:
    """A source that may be opened once only: slow to start, as an MCP server is."""

    name = "mcp:once"

    def __init__(self) -> None:
        self.opened = 0

    async def open(self, host: SourceHost) -> None:
        self.opened += 1
        assert self.opened == 1, "opened again: the class-scoped fixture was not shared"

    def tools(self) -> Sequence[ToolDef]:
        command = builtin_registry().get("run_command")
        return [dataclasses.replace(command, origin="mcp:once")]

    async def close(self) -> None:
        """Nothing to stop."""


@pytest.mark.asyncio(loop_scope="class")
class TestASourceOpenedOncePerClass(ToolConformance):
    """The recipe in docs/engine.md: one world, sandbox and open source for the class."""

    samples = {
        "run_command": ToolSample(
            args={"command": "echo hi"},
            failing={"command": "exit 3"},
            slow=SlowCall(
                args={"command": "touch started && sleep 60"},
                started=lambda world: (world / "started").exists(),
                leaves=frozenset({"started"}),
            ),
        )
    }

    @pytest.fixture(scope="class")
    @classmethod
    def world(cls, tmp_path_factory: pytest.TempPathFactory) -> Path:
        return tmp_path_factory.mktemp("world").resolve()

    @pytest.fixture(scope="class")
    @classmethod
    def sandbox(cls) -> Iterator[ProcessSandbox]:
        box = ProcessSandbox()
        yield box
        box.close()

    @pytest_asyncio.fixture(scope="class", loop_scope="class")
    @classmethod
    async def tools(  # type: ignore[override]
        cls, world: Path, sandbox: ProcessSandbox
    ) -> AsyncIterator[Sequence[ToolDef]]:
        source = _Started()
        await source.open(cls.host_for(world, sandbox))
        yield source.tools()
        await source.close()
