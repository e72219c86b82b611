"""Gates know tools by what they declare (facets), never by name.

Three stranger tools declare what ``run_command``, ``write_file`` and ``http_fetch``
do under other names and other argument names; each meets exactly the gates the
built-in meets, with the same decisions.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from helix.gates import (
    ApprovalGate,
    Decision,
    EgressPolicy,
    GateCall,
    GateContext,
    GatePipeline,
    PipelineOutcome,
    build_gate_pipeline,
)
from helix.tools import BUILTIN_TOOLS, Facets, ToolContext, ToolResult, tool

from ._support import make_call, make_ctx

SRC = Path(__file__).resolve().parents[2] / "src" / "helix"


@tool(effect="world", command="cmd", sandboxed=True)
async def shell(ctx: ToolContext, cmd: str) -> ToolResult:
    """Run a command line in the sandbox."""
    return ToolResult(ok=True, output="")


@tool(effect="world", reports_changes=True, paths={"file": "write"})
async def save(ctx: ToolContext, file: str, text: str) -> ToolResult:
    """Write a file in the world."""
    return ToolResult(ok=True, output="")


@tool(effect="none", url="address")
async def fetch(ctx: ToolContext, address: str) -> ToolResult:
    """Fetch a URL."""
    return ToolResult(ok=True, output="")


def stranger(definition: Any, **args: Any) -> GateCall:
    return GateCall("call_1", definition.name, args, definition)


EGRESS = EgressPolicy(allow=("docs.python.org",), deny=("evil.test",))

PAIRS: dict[str, tuple[GateCall, GateCall, dict[str, Any]]] = {
    # case → (the built-in's call, the stranger's call, the context's changes)
    "path outside the world": (
        make_call("write_file", path="../escape.txt", content="x"),
        stranger(save, file="../escape.txt", text="x"),
        {},
    ),
    "path inside the world": (
        make_call("write_file", path="notes/todo.md", content="x"),
        stranger(save, file="notes/todo.md", text="x"),
        {},
    ),
    "catastrophic command": (
        make_call("run_command", command="rm -rf /"),
        stranger(shell, cmd="rm -rf /"),
        {},
    ),
    "command that changes the world": (
        make_call("run_command", command="make build"),
        stranger(shell, cmd="make build"),
        {},
    ),
    "command that only reads": (
        make_call("run_command", command="ls -la"),
        stranger(shell, cmd="ls -la"),
        {},
    ),
    "unlisted host, attended": (
        make_call("http_fetch", url="https://unlisted.test/"),
        stranger(fetch, address="https://unlisted.test/"),
        {"egress": EGRESS},
    ),
    "unlisted host, unattended": (
        make_call("http_fetch", url="https://unlisted.test/"),
        stranger(fetch, address="https://unlisted.test/"),
        {"egress": EGRESS, "attended": False},
    ),
    "denied host": (
        make_call("http_fetch", url="https://evil.test/x"),
        stranger(fetch, address="https://evil.test/x"),
        {"egress": EGRESS},
    ),
    "listed host": (
        make_call("http_fetch", url="https://docs.python.org/3/"),
        stranger(fetch, address="https://docs.python.org/3/"),
        {"egress": EGRESS},
    ),
}

EXPECTED: dict[str, tuple[str, str]] = {
    # case → (verdict, the gate that decided it: the denying one, or the last to run)
    "path outside the world": ("deny", "boundary"),
    "path inside the world": ("allow", "approval"),
    "catastrophic command": ("deny", "commands"),
    "command that changes the world": ("ask", "approval"),
    "command that only reads": ("allow", "approval"),
    "unlisted host, attended": ("ask", "approval"),
    "unlisted host, unattended": ("deny", "egress"),
    "denied host": ("deny", "egress"),
    "listed host": ("ask", "approval"),
}


def votes(outcome: PipelineOutcome) -> list[tuple[str, str]]:
    return [(gate, decision.verdict) for gate, decision in outcome.decisions]


@pytest.mark.parametrize("case", list(PAIRS))
async def test_a_stranger_tool_meets_the_gates_its_builtin_meets(world: Path, case: str) -> None:
    builtin, other, changes = PAIRS[case]
    pipeline = build_gate_pipeline()
    ctx = make_ctx(world, **changes)
    mine = await pipeline.evaluate(builtin, ctx)
    theirs = await pipeline.evaluate(other, ctx)
    assert (theirs.verdict, theirs.decisions[-1][0]) == EXPECTED[case]
    assert votes(theirs) == votes(mine)


@pytest.mark.parametrize("gate", build_gate_pipeline().gates, ids=lambda g: g.name)
@pytest.mark.parametrize("case", list(PAIRS))
async def test_each_gate_rules_on_a_stranger_as_on_its_builtin(
    world: Path, gate: Any, case: str
) -> None:
    builtin, other, changes = PAIRS[case]
    alone = GatePipeline([gate])  # the gate's scope applies, and nothing stops it early
    ctx = make_ctx(world, **changes)
    assert votes(await alone.evaluate(other, ctx)) == votes(await alone.evaluate(builtin, ctx))


async def test_the_scoped_gates_rule_on_strangers(world: Path) -> None:
    pipeline = build_gate_pipeline()
    ran = {
        definition.name: [
            name for name, _ in (await pipeline.evaluate(call, make_ctx(world))).decisions
        ]
        for definition, call in [
            (shell, stranger(shell, cmd="ls")),
            (save, stranger(save, file="a", text="")),
            (fetch, stranger(fetch, address="https://a.test/")),
        ]
    }
    scoped = {name: {"commands", "egress"} & set(gates) for name, gates in ran.items()}
    assert scoped == {"shell": {"commands"}, "save": set(), "fetch": {"egress"}}


async def test_a_boundary_refusal_names_the_strangers_argument(world: Path) -> None:
    outcome = await build_gate_pipeline().evaluate(
        stranger(save, file="/etc/passwd", text=""), make_ctx(world)
    )
    assert outcome.verdict == "deny"
    assert outcome.reason.startswith("file '/etc/passwd' is outside the world")


async def test_every_path_of_a_list_is_checked(world: Path) -> None:
    @tool(effect="world", paths={"files": "write"})
    async def touch_all(ctx: ToolContext, files: list[str]) -> ToolResult:
        """Create empty files."""
        return ToolResult(ok=True, output="")

    pipeline = build_gate_pipeline()
    inside = await pipeline.evaluate(stranger(touch_all, files=["a", "b/c"]), make_ctx(world))
    escape = await pipeline.evaluate(stranger(touch_all, files=["a", "../b"]), make_ctx(world))
    assert inside.verdict == "allow"
    assert (escape.verdict, escape.decisions[-1][0]) == ("deny", "boundary")


# the approval gate's defaults


async def test_a_tool_declaring_no_effect_is_not_asked_about(world: Path) -> None:
    @tool(effect="none")
    async def add(ctx: ToolContext, a: int, b: int) -> ToolResult:
        """Add two numbers."""
        return ToolResult(ok=True, output=str(a + b))

    decision = await ApprovalGate()(stranger(add, a=1, b=2), make_ctx(world))
    assert (decision.verdict, decision.reason) == ("allow", "add declares no effect")


async def test_a_tool_declaring_nothing_is_asked_about(world: Path) -> None:
    @tool()
    async def anything(ctx: ToolContext, file: str) -> ToolResult:
        """May do anything: it declares no facet."""
        return ToolResult(ok=True, output="")

    decision = await ApprovalGate()(stranger(anything, file="a"), make_ctx(world))
    assert decision.verdict == "ask"


async def test_a_tool_with_an_external_effect_is_asked_about(world: Path) -> None:
    @tool(effect="external", sandboxed=True)
    async def post(ctx: ToolContext, text: str) -> ToolResult:
        """Post somewhere outside the world (done for good, as an MCP tool's call is)."""
        return ToolResult(ok=True, output="")

    decision = await ApprovalGate()(stranger(post, text="hi"), make_ctx(world))
    assert (decision.verdict, decision.reason) == (
        "ask",
        "post may have effects, so it needs approval",
    )


async def test_a_command_outside_the_sandbox_is_asked_about_even_when_it_reads(
    world: Path,
) -> None:
    @tool(effect="world", command="line")
    async def host_shell(ctx: ToolContext, line: str) -> ToolResult:
        """Runs on the host: it does not declare the sandbox."""
        return ToolResult(ok=True, output="")

    decision = await ApprovalGate()(stranger(host_shell, line="ls"), make_ctx(world))
    assert decision.verdict == "ask"
    assert "outside the sandbox" in decision.reason


# declaring facets


def test_the_builtins_declare_their_facets() -> None:
    facets = {t.name: t.facets for t in BUILTIN_TOOLS}
    assert facets["read_file"] == Facets(read_only=True, effect="none", paths={"path": "read"})
    assert facets["write_file"] == Facets(paths={"path": "write"})
    assert facets["edit_file"] == Facets(paths={"path": "write"})
    assert facets["list_files"] == Facets(read_only=True, effect="none", paths={"path": "read"})
    assert facets["search_files"] == Facets(read_only=True, effect="none", paths={"path": "read"})
    assert facets["run_command"] == Facets(command="command", sandboxed=True)
    assert facets["http_fetch"] == Facets(effect="none", url="url")
    assert facets["delegate"] == Facets(delegates=True, paths={"blueprint": "read"})


@pytest.mark.parametrize(
    ("declared", "problem"),
    [
        ({"command": "line"}, "has no argument line"),
        ({"paths": {"text": "read", "nowhere": "write"}}, "has no argument nowhere"),
        ({"paths": {"text": "append"}}, "access must be read or write"),
        ({"paths": {"text": "read"}, "url": "text"}, "one role only: text"),
        ({"paths": {"text": "write"}, "read_only": True}, "not read-only"),
        ({"paths": {"text": "write"}, "effect": "none"}, "its effect is 'world'"),
    ],
)
def test_contradictory_facets_are_refused_when_declared(
    declared: dict[str, Any], problem: str
) -> None:
    async def function(ctx: ToolContext, text: str) -> ToolResult:
        """A tool."""
        return ToolResult(ok=True, output="")

    with pytest.raises(ValueError, match=re.escape(problem)):
        tool(**declared)(function)


def test_a_gate_scoped_to_an_unknown_facet_is_refused() -> None:
    class Misspelt:
        name = "misspelt"
        facets = frozenset({"comand"})

        async def __call__(self, call: GateCall, ctx: Any) -> Any:
            raise AssertionError("never asked")

    with pytest.raises(ValueError, match="unknown facet 'comand'"):
        GatePipeline([Misspelt()])


async def test_a_plugin_gate_scoped_to_a_facet_rules_on_every_tool_declaring_it(
    world: Path,
) -> None:
    class NoWrites:
        name = "writes.no"
        facets = frozenset({"writes"})

        async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
            return Decision("deny", "no writes today")

    pipeline = GatePipeline([NoWrites()])
    read = await pipeline.evaluate(make_call("read_file", path="x"), make_ctx(world))
    edit = await pipeline.evaluate(
        make_call("edit_file", path="x", old="a", new="b"), make_ctx(world)
    )
    other = await pipeline.evaluate(stranger(save, file="x", text=""), make_ctx(world))
    assert (read.verdict, read.decisions) == ("allow", [])
    assert (edit.verdict, other.verdict) == ("deny", "deny")


# no name

_NAMING = ("_blueprint.py", "_candidate.py", "_delegation.py", "_planning.py")
_GATING = [
    *sorted((SRC / "gates").rglob("*.py")),
    *sorted((SRC / "sandbox").rglob("*.py")),
    *sorted(
        path
        for path in (SRC / "runtime").glob("*.py")
        # A user's blueprint and candidate-policy examples (their rules name tools, as a
        # user's own rules may), and the runtime halves of delegation and planning
        # (their Delegator and Planner).
        if path.name not in _NAMING
    ),
]


@pytest.mark.parametrize("path", _GATING, ids=lambda p: str(p.relative_to(SRC)))
def test_no_gate_or_runtime_check_names_a_builtin_tool(path: Path) -> None:
    names = "|".join(re.escape(t.name) for t in BUILTIN_TOOLS)
    found = [
        f"{number}: {line.strip()}"
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if re.search(rf"[\"'](?:{names})[\"']", line)  # a name as a value: keyed on it
    ]
    assert found == []
