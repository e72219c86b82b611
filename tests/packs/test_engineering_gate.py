"""The pack's publish gate: pushing and publishing ask a person, by command text and facets."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from helix.gates import ApprovalRule, GateCall, GateContext, Policy, build_gate_pipeline
from helix.packs.engineering import TOOLS, PublishGate, publishes
from helix.tools import BUILTIN_TOOLS, ToolDef

DELIVER = next(t for t in TOOLS if t.name == "deliver")
RUN_TESTS = next(t for t in TOOLS if t.name == "run_tests")

RUN_COMMAND = next(t for t in BUILTIN_TOOLS if t.name == "run_command")


@pytest.mark.parametrize(
    ("command", "what"),
    [
        ("git push origin main", "pushes with git"),
        ("cd sub && git -C . -c a=b push", "pushes with git"),
        ("FOO=1 sudo -E git push --force", "pushes with git"),
        ("npm publish --access public", "publishes an npm package"),
        ("python3 -m twine upload dist/*", "uploads a Python package"),
        ("/usr/bin/twine upload dist/*", "uploads a Python package"),
        ("echo hi; cargo publish", "publishes a crate"),
        ("docker push registry/app:1", "pushes an image"),
        ("x=$(git push)", "pushes with git"),
        ("eval 'git pu''sh'", None),
        ("g=git; $g push", "may push or publish (it names a publishing program and verb)"),
    ],
)
def test_what_publishes(command: str, what: str | None) -> None:
    assert publishes(command) == what


@pytest.mark.parametrize(
    "command",
    ["git status", "git log --grep push", "pytest -k publish", "npm test", "ls push"],
)
def test_what_does_not(command: str) -> None:
    assert publishes(command) is None


def _ctx(tmp_path: Path, *rules: ApprovalRule) -> GateContext:
    return GateContext(run_id="r", world=tmp_path, policy=Policy(), approvals=rules)


async def _decide(tool: ToolDef, args: Mapping[str, object], ctx: GateContext) -> tuple[str, str]:
    pipeline = build_gate_pipeline([PublishGate()], available_tools=[tool.name])
    outcome = await pipeline.evaluate(GateCall("c", tool.name, dict(args), tool), ctx)
    mine = dict(outcome.decisions).get("engineering.publish")
    return outcome.verdict, mine.verdict if mine else "-"


async def test_a_push_asks_even_where_commands_are_allowed(tmp_path: Path) -> None:
    blanket = ApprovalRule(tool="run_command", action="allow")
    ctx = _ctx(tmp_path, blanket)
    assert await _decide(RUN_COMMAND, {"command": "git push origin x"}, ctx) == ("ask", "ask")
    assert await _decide(RUN_COMMAND, {"command": "make test"}, ctx) == ("allow", "allow")
    everything = _ctx(tmp_path, ApprovalRule(tool="*", action="allow"))
    assert await _decide(RUN_COMMAND, {"command": "npm publish"}, everything) == ("ask", "ask")


async def test_a_rule_written_for_pushes_decides(tmp_path: Path) -> None:
    allow = ApprovalRule(tool="run_command", when={"command": "^git push"}, action="allow")
    deny = ApprovalRule(tool="run_command", when={"command": "push"}, action="deny")
    assert await _decide(RUN_COMMAND, {"command": "git push"}, _ctx(tmp_path, allow)) == (
        "allow",
        "allow",
    )
    verdict, _ = await _decide(RUN_COMMAND, {"command": "git push"}, _ctx(tmp_path, deny))
    assert verdict == "deny"


async def test_deliver_asks_unless_a_rule_names_it(tmp_path: Path) -> None:
    args = {"message": "m", "summary": "s"}
    assert DELIVER.facets.effect == "external"
    assert await _decide(DELIVER, args, _ctx(tmp_path)) == ("ask", "ask")
    blanket = _ctx(tmp_path, ApprovalRule(tool="*", action="allow"))
    assert await _decide(DELIVER, args, blanket) == ("ask", "ask")
    named = _ctx(tmp_path, ApprovalRule(tool="deliver", action="allow"))
    assert await _decide(DELIVER, args, named) == ("allow", "allow")


async def test_run_tests_command_is_read_by_the_gates(tmp_path: Path) -> None:
    assert RUN_TESTS.facets.command == "command"
    assert RUN_TESTS.facets.sandboxed
    allowed = _ctx(tmp_path, ApprovalRule(tool="run_tests", action="allow"))
    assert await _decide(RUN_TESTS, {}, allowed) == ("allow", "allow")
    sneaky = {"command": "git push origin main; python3 -m pytest"}
    assert await _decide(RUN_TESTS, sneaky, allowed) == ("ask", "ask")
    verdict, _ = await _decide(RUN_TESTS, {"command": "rm -rf / #"}, allowed)
    assert verdict == "deny"  # the commands gate reads it too
