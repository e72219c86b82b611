"""Policy replay in process: budget from the logged spend, unknown tools, egress, a gone world."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helix.errors import PolicyError, RunNotFoundError
from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Price, PriceBook, Scenario, ScriptedModel
from helix.runtime import Blueprint, CandidatePolicy, Engine, RunSetup, replay_policy
from helix.tools import ToolContext, ToolRegistry, ToolResult, builtin_registry, tool

MODEL = "scripted:t"
MILLION = {"input_tokens": 1_000_000, "output_tokens": 0}


def _engine(tmp_path: Path, scenario: Scenario, registry: ToolRegistry | None = None) -> Engine:
    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="t")

    return Engine(
        MemoryEventStore(),
        home=tmp_path / "home",
        tools=registry,
        prices=PriceBook({MODEL: Price(input=2.0, output=0.0)}),
        model_factory=model,
        env={},
    )


def _world(tmp_path: Path) -> Path:
    world = tmp_path / "world"
    world.mkdir()
    return world


async def test_the_budget_gate_is_judged_on_the_spend_logged_before_each_call(
    tmp_path: Path,
) -> None:
    listing = {"name": "list_files", "args": {}}
    scenario = Scenario.of(
        {"text": "look", "tool_calls": [listing], "usage": {"input_tokens": 0, "output_tokens": 0}},
        {"text": "look again", "tool_calls": [listing], "usage": MILLION},  # $2 spent here
        {"text": "done", "usage": {"input_tokens": 0, "output_tokens": 0}},
    )
    engine = _engine(tmp_path, scenario)
    record = await engine.create("look", blueprint=Blueprint(model=MODEL), world=_world(tmp_path))
    assert (await engine.drive(record.id)).status == "completed"
    head = (await engine.store.get_run(record.id)).next_seq

    capped = CandidatePolicy.parse({"budget": {"usd": 1.0}}, source="test")
    report = await replay_policy(engine.store, record.id, capped, tools=engine.tools)
    assert report.calls == 2
    (late,) = report.differences  # the first call came before any spend
    assert (late.turn, late.logged, late.candidate, late.candidate_gate) == (
        2, "allow", "deny", "budget"
    )  # fmt: skip
    assert "$2.00 of $1.00" in late.candidate_reason
    roomy = CandidatePolicy.parse({"budget": {"usd": 3.0}}, source="test")
    assert (
        await replay_policy(engine.store, record.id, roomy, tools=engine.tools)
    ).differences == []
    assert (await engine.store.get_run(record.id)).next_seq == head  # nothing appended


async def test_a_tool_not_registered_here_is_unjudged_not_a_difference(tmp_path: Path) -> None:
    @tool(read_only=True, idempotent=True, effect="none")
    async def probe(ctx: ToolContext, what: str) -> ToolResult:
        """Look at something."""
        return ToolResult(ok=True, output=what)

    registry = builtin_registry()
    registry.register(probe)
    scenario = Scenario.of(
        {"text": "probe", "tool_calls": [
            {"name": "probe", "args": {"what": "x"}},
            {"name": "nonesuch", "args": {}},
        ]},
        {"text": "done"},
    )  # fmt: skip
    engine = _engine(tmp_path, scenario, registry)
    record = await engine.create("p", blueprint=Blueprint(model=MODEL), world=_world(tmp_path))
    await engine.drive(record.id)

    strict = CandidatePolicy.parse({"policy": {"deny_tools": ["probe"]}}, source="test")
    here = await replay_policy(engine.store, record.id, strict, tools=registry)
    assert [(d.tool, d.candidate, d.candidate_gate) for d in here.differences] == [
        ("probe", "deny", "ceiling")
    ]
    # A process without the plugin cannot say what its schema allows: not judged.
    elsewhere = await replay_policy(engine.store, record.id, strict, tools=builtin_registry())
    assert elsewhere.differences == []
    assert [(u.tool, u.reason) for u in elsewhere.unjudged] == [
        ("probe", "the tool 'probe' is not registered in this process")
    ]
    # The model's made-up tool was refused then and is refused now: judged, no change.
    assert elsewhere.calls == 1


async def test_egress_lists_and_an_unattended_run(tmp_path: Path) -> None:
    fetch = {"name": "http_fetch", "args": {"url": "https://docs.example.invalid/page"}}
    scenario = Scenario.of({"text": "fetch", "tool_calls": [fetch]}, {"text": "done"})
    engine = _engine(tmp_path, scenario)
    blueprint = Blueprint(model=MODEL)
    record = await engine.create("f", blueprint=blueprint, world=_world(tmp_path), attended=False)
    await engine.drive(record.id)  # refused: unlisted host, nobody attending

    listed = CandidatePolicy.parse(
        {"sandbox": {"network": ["*.example.invalid"]},
         "approvals": {"rules": [{"tool": "http_fetch", "action": "allow"}]}},
        source="test",
    )  # fmt: skip
    (call,) = (await replay_policy(engine.store, record.id, listed, tools=engine.tools)).differences
    assert (call.logged, call.candidate, call.change, call.ran) == (
        "deny",
        "allow",
        "looser",
        False,
    )
    assert "egress" in call.logged_reason
    asked = CandidatePolicy.parse({"sandbox": {"network": ["*.example.invalid"]}}, source="test")
    (call,) = (await replay_policy(engine.store, record.id, asked, tools=engine.tools)).differences
    assert (call.candidate, call.candidate_gate) == ("ask", "approval")
    denied = CandidatePolicy.parse(
        {"sandbox": {"network": ["*.example.invalid"], "deny": ["docs.example.invalid"]}},
        source="test",
    )
    report = await replay_policy(engine.store, record.id, denied, tools=engine.tools)
    assert report.differences == []  # denied then (unlisted), denied now (deny list)


async def test_a_gone_world_is_judged_by_the_paths_text(tmp_path: Path) -> None:
    writes = [
        {"name": "write_file", "args": {"path": "notes/a.md", "content": "a"}},
        {"name": "write_file", "args": {"path": "../outside.md", "content": "b"}},
    ]
    scenario = Scenario.of({"text": "write", "tool_calls": writes}, {"text": "done"})
    engine = _engine(tmp_path, scenario)
    world = _world(tmp_path)
    record = await engine.create("w", blueprint=Blueprint(model=MODEL), world=world)
    await engine.drive(record.id)
    shutil.rmtree(world)

    ask_writes = CandidatePolicy.parse(
        {"approvals": {"rules": [{"tool": "write_file", "action": "ask"}]}}, source="test"
    )
    report = await replay_policy(engine.store, record.id, ask_writes, tools=engine.tools)
    assert report.calls == 2
    # The write inside asks now; the one outside is still refused by the boundary.
    (inside,) = report.differences
    assert inside.args["path"] == "notes/a.md"
    assert not world.exists()  # judging made nothing


async def test_unknown_runs_and_bad_policies(tmp_path: Path) -> None:
    engine = _engine(tmp_path, Scenario.of({"text": "done"}))
    candidate = CandidatePolicy.parse({"policy": {}}, source="test")
    with pytest.raises(RunNotFoundError):
        await replay_policy(engine.store, "run_nope", candidate, tools=engine.tools)
    with pytest.raises(PolicyError, match=r"sandbox\.kind: unknown field"):
        CandidatePolicy.parse({"sandbox": {"kind": "bwrap"}}, source="test")
    with pytest.raises(PolicyError, match="invalid regular expression"):
        CandidatePolicy.parse(
            {"approvals": {"rules": [{"tool": "x", "when": {"a": "("}, "action": "ask"}]}},
            source="test",
        )
    with pytest.raises(PolicyError, match="a policy is a mapping"):
        CandidatePolicy.from_text("- a\n- b\n")


async def test_a_malformed_call_is_denied_again_under_any_policy(tmp_path: Path) -> None:
    scenario = Scenario.of(
        {"text": "list", "tool_calls": [{"name": "list_files", "raw_args": '{"path": '}]},
        {"text": "done"},
    )
    engine = _engine(tmp_path, scenario)
    record = await engine.create("look", blueprint=Blueprint(model=MODEL), world=_world(tmp_path))
    assert (await engine.drive(record.id)).status == "completed"

    # list_files takes no required argument: judged on {} it would be allowed
    open_policy = CandidatePolicy.parse({"policy": {"tools": ["list_files"]}}, source="test")
    report = await replay_policy(engine.store, record.id, open_policy, tools=engine.tools)
    assert report.calls == 1
    assert report.differences == []


async def test_a_call_of_another_tool_than_the_forced_one_is_denied_again(tmp_path: Path) -> None:
    listing = {"name": "list_files", "args": {}}
    scenario = Scenario.of(
        {"text": "", "tool_calls": [listing]},  # denied: list_files is not the tool named
        {"text": "", "tool_calls": [{"name": "read_file", "args": {"path": "a"}}]},
        {"text": "", "tool_calls": [listing]},  # allowed: the choice was met
        {"text": "done"},
    )
    engine = _engine(tmp_path, scenario)
    blueprint = Blueprint(model=MODEL, tool_choice="read_file")
    record = await engine.create("look", blueprint=blueprint, world=_world(tmp_path))
    assert (await engine.drive(record.id)).status == "completed"

    tools = {"policy": {"tools": ["list_files", "read_file"]}}
    same = CandidatePolicy.parse(tools, source="test")
    report = await replay_policy(engine.store, record.id, same, tools=engine.tools)
    assert report.calls == 3
    assert report.differences == []
