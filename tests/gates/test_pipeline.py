"""The pipeline: its fixed order, deny winning, failing gates denying, auto-approve."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helix.gates import (
    BudgetState,
    Decision,
    GateCall,
    GateContext,
    GatePipeline,
    Policy,
    Verdict,
    build_gate_pipeline,
)

from ._support import make_call, make_ctx


class Fixed:
    """A gate that always says the same thing, and counts how often it was asked."""

    def __init__(self, name: str, verdict: Verdict, reason: str = "") -> None:
        self.name = name
        self.verdict: Verdict = verdict
        self.reason = reason or f"{name} says {verdict}"
        self.calls = 0

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        self.calls += 1
        return Decision(self.verdict, self.reason)


class Raising:
    name = "broken"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        raise self.error


class Nonsense:
    name = "nonsense"

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        return "allow"  # type: ignore[return-value]


ORDER = ["ceiling", "arguments", "boundary", "commands", "egress", "budget", "approval"]


def test_the_order_is_fixed() -> None:
    assert build_gate_pipeline().names == ORDER


def test_extra_gates_run_after_budget_and_before_approval() -> None:
    pipeline = build_gate_pipeline([Fixed("plugin.a", "allow"), Fixed("plugin.b", "allow")])
    assert pipeline.names == [*ORDER[:-1], "plugin.a", "plugin.b", "approval"]


def test_gate_names_must_be_distinct() -> None:
    with pytest.raises(ValueError, match="budget"):
        build_gate_pipeline([Fixed("budget", "allow")])


async def test_deny_wins_over_earlier_allows_and_later_asks(world: Path) -> None:
    later = Fixed("later", "ask")
    pipeline = GatePipeline([Fixed("a", "allow"), Fixed("b", "deny", "no way"), later])
    outcome = await pipeline.evaluate(make_call("read_file", path="x"), make_ctx(world))
    assert outcome.verdict == "deny"
    assert outcome.reason == "no way"
    assert [(name, d.verdict) for name, d in outcome.decisions] == [("a", "allow"), ("b", "deny")]
    assert later.calls == 0


async def test_deny_after_an_ask_still_wins(world: Path) -> None:
    pipeline = GatePipeline([Fixed("a", "ask"), Fixed("b", "deny")])
    outcome = await pipeline.evaluate(make_call("read_file", path="x"), make_ctx(world))
    assert outcome.verdict == "deny"


async def test_asks_are_collected_when_nothing_denies(world: Path) -> None:
    pipeline = GatePipeline(
        [Fixed("a", "ask", "first reason"), Fixed("b", "allow"), Fixed("c", "ask", "second")]
    )
    outcome = await pipeline.evaluate(make_call("read_file", path="x"), make_ctx(world))
    assert outcome.verdict == "ask"
    assert outcome.reason == "first reason; second"
    assert len(outcome.decisions) == 3


async def test_all_allow_is_allow(world: Path) -> None:
    pipeline = GatePipeline([Fixed("a", "allow"), Fixed("b", "allow")])
    outcome = await pipeline.evaluate(make_call("read_file", path="x"), make_ctx(world))
    assert outcome.verdict == "allow"
    assert len(outcome.decisions) == 2


async def test_a_raising_gate_denies_and_stops_the_pipeline(world: Path) -> None:
    later = Fixed("later", "allow")
    pipeline = GatePipeline([Fixed("a", "allow"), Raising(RuntimeError("boom")), later])
    outcome = await pipeline.evaluate(make_call("read_file", path="x"), make_ctx(world))
    assert outcome.verdict == "deny"
    name, decision = outcome.decisions[-1]
    assert name == "broken"
    assert decision.verdict == "deny"
    assert decision.reason == "gate error: RuntimeError: boom"
    assert later.calls == 0


async def test_a_gate_returning_nonsense_denies(world: Path) -> None:
    pipeline = GatePipeline([Nonsense()])
    outcome = await pipeline.evaluate(make_call("read_file", path="x"), make_ctx(world))
    assert outcome.verdict == "deny"
    assert outcome.reason.startswith("gate error:")


async def test_cancellation_is_not_swallowed(world: Path) -> None:
    pipeline = GatePipeline([Raising(asyncio.CancelledError())])
    with pytest.raises(asyncio.CancelledError):
        await pipeline.evaluate(make_call("read_file", path="x"), make_ctx(world))


async def test_auto_approve_turns_ask_into_allow_keeping_the_decisions(world: Path) -> None:
    pipeline = GatePipeline([Fixed("a", "allow"), Fixed("b", "ask")])
    outcome = await pipeline.evaluate(
        make_call("read_file", path="x"), make_ctx(world), auto_approve=True
    )
    assert outcome.verdict == "allow"
    assert outcome.reason == "auto-approved"
    assert outcome.decisions[-1] == ("b", Decision("ask", "b says ask"))


async def test_auto_approve_never_overrides_a_deny(world: Path) -> None:
    pipeline = GatePipeline([Fixed("a", "ask"), Fixed("b", "deny")])
    outcome = await pipeline.evaluate(
        make_call("read_file", path="x"), make_ctx(world), auto_approve=True
    )
    assert outcome.verdict == "deny"


# The built-in pipeline end to end.


async def test_a_read_inside_the_world_passes_every_gate(world: Path) -> None:
    outcome = await build_gate_pipeline().evaluate(
        make_call("read_file", path="notes.txt"), make_ctx(world)
    )
    assert outcome.verdict == "allow"
    # The commands and egress gates rule on run_command and http_fetch only.
    assert [name for name, _ in outcome.decisions] == [
        "ceiling",
        "arguments",
        "boundary",
        "budget",
        "approval",
    ]


async def test_scoped_gates_are_asked_about_their_tools_only(world: Path) -> None:
    pipeline = build_gate_pipeline()
    command = await pipeline.evaluate(make_call("run_command", command="ls"), make_ctx(world))
    fetch = await pipeline.evaluate(make_call("http_fetch", url="https://a.test"), make_ctx(world))
    assert "commands" in [n for n, _ in command.decisions]
    assert "egress" not in [n for n, _ in command.decisions]
    assert [n for n, _ in fetch.decisions] == [
        "ceiling",
        "arguments",
        "boundary",
        "egress",
        "budget",
        "approval",
    ]


async def test_a_plugin_gate_scoped_to_a_tool_runs_only_for_it(world: Path) -> None:
    class OnlyWrites(Fixed):
        tools = frozenset({"write_file"})

    pipeline = GatePipeline([OnlyWrites("writes.no", "deny")])
    read = await pipeline.evaluate(make_call("read_file", path="x"), make_ctx(world))
    write = await pipeline.evaluate(make_call("write_file", path="x"), make_ctx(world))
    assert (read.verdict, read.decisions) == ("allow", [])
    assert write.verdict == "deny"


async def test_a_path_escape_stops_at_the_boundary(world: Path) -> None:
    outcome = await build_gate_pipeline().evaluate(
        make_call("read_file", path="../secret"), make_ctx(world)
    )
    assert outcome.verdict == "deny"
    assert [name for name, _ in outcome.decisions] == ORDER[:3]  # it stopped there


async def test_a_tool_above_the_ceiling_stops_at_the_ceiling(world: Path) -> None:
    ctx = make_ctx(world, policy=Policy(tools=frozenset({"read_file"})))
    outcome = await build_gate_pipeline().evaluate(make_call("run_command", command="ls"), ctx)
    assert outcome.verdict == "deny"
    assert [name for name, _ in outcome.decisions] == ["ceiling"]


async def test_an_unknown_tool_is_refused_with_the_tools_there_are(world: Path) -> None:
    pipeline = build_gate_pipeline(available_tools=["read_file", "write_file"])
    outcome = await pipeline.evaluate(make_call("delete_everything"), make_ctx(world))
    assert outcome.verdict == "deny"
    assert outcome.decisions[-1][0] == "arguments"
    assert outcome.reason == "unknown tool 'delete_everything'; available: read_file, write_file"


async def test_commands_that_write_ask_and_readers_do_not(world: Path) -> None:
    pipeline = build_gate_pipeline()
    writes = await pipeline.evaluate(
        make_call("run_command", command="make build"), make_ctx(world)
    )
    reads = await pipeline.evaluate(make_call("run_command", command="ls -la"), make_ctx(world))
    assert (writes.verdict, reads.verdict) == ("ask", "allow")
    assert writes.decisions[-1][0] == "approval"


async def test_a_dangerous_command_is_denied_even_with_auto_approve(world: Path) -> None:
    outcome = await build_gate_pipeline().evaluate(
        make_call("run_command", command="rm -rf /"), make_ctx(world), auto_approve=True
    )
    assert outcome.verdict == "deny"
    assert outcome.decisions[-1][0] == "commands"


async def test_an_exhausted_budget_refuses_even_reads(world: Path) -> None:
    ctx = make_ctx(world, budget=BudgetState(cap_usd=1.0, spent_usd=1.0))
    outcome = await build_gate_pipeline().evaluate(make_call("read_file", path="a"), ctx)
    assert outcome.verdict == "deny"
    assert outcome.reason == "budget exhausted: $1.00 of $1.00"


async def test_a_plugin_gate_can_refuse_before_approval(world: Path) -> None:
    pipeline = build_gate_pipeline([Fixed("plugin.no", "deny", "plugin says no")])
    outcome = await pipeline.evaluate(
        make_call("write_file", path="a", content=""), make_ctx(world)
    )
    assert outcome.verdict == "deny"
    assert [name for name, _ in outcome.decisions][-1] == "plugin.no"
