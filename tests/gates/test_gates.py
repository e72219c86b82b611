"""The ceiling, arguments, boundary, budget and approval gates, and policy algebra."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from helix.gates import (
    ApprovalGate,
    ApprovalRule,
    ArgumentConstraint,
    ArgumentsGate,
    BoundaryGate,
    BudgetGate,
    BudgetState,
    CeilingGate,
    Policy,
)

from ._support import make_call, make_ctx


def limit(pattern: str) -> tuple[ArgumentConstraint, ...]:
    return (ArgumentConstraint(pattern=pattern),)


# ceiling


async def test_ceiling_allows_everything_by_default(world: Path) -> None:
    decision = await CeilingGate()(make_call("run_command", command="ls"), make_ctx(world))
    assert decision.verdict == "allow"


async def test_ceiling_refuses_tools_not_listed(world: Path) -> None:
    ctx = make_ctx(world, policy=Policy(tools=frozenset({"read_file", "list_files"})))
    decision = await CeilingGate()(make_call("run_command", command="ls"), ctx)
    assert decision.verdict == "deny"
    assert "above the policy ceiling" in decision.reason
    assert "list_files, read_file" in decision.reason


async def test_ceiling_refuses_denied_tools_even_when_listed(world: Path) -> None:
    policy = Policy(tools=frozenset({"run_command"}), deny_tools=frozenset({"run_command"}))
    decision = await CeilingGate()(
        make_call("run_command", command="ls"), make_ctx(world, policy=policy)
    )
    assert decision.verdict == "deny"


async def test_ceiling_checks_names_only_for_unknown_tools(world: Path) -> None:
    decision = await CeilingGate()(make_call("no_such_tool"), make_ctx(world))
    assert decision.verdict == "allow"  # the arguments gate refuses it, with the list


async def test_ceiling_applies_argument_constraints_as_full_matches(world: Path) -> None:
    policy = Policy(arguments={"run_command": {"command": limit(r"git (status|log)")}})
    ctx = make_ctx(world, policy=policy)
    ok = await CeilingGate()(make_call("run_command", command="git status"), ctx)
    partial = await CeilingGate()(make_call("run_command", command="git status; rm x"), ctx)
    assert ok.verdict == "allow"
    assert partial.verdict == "deny"
    assert "must match" in partial.reason


async def test_ceiling_constraints_see_a_tool_default(world: Path) -> None:
    policy = Policy(arguments={"http_fetch": {"method": limit("HEAD")}})
    decision = await CeilingGate()(
        make_call("http_fetch", url="https://a.test"), make_ctx(world, policy=policy)
    )
    assert decision.verdict == "deny"  # method defaults to GET


async def test_ceiling_constraints_read_non_strings_as_json(world: Path) -> None:
    policy = Policy(arguments={"run_command": {"timeout_s": limit(r"\d{1,2}(\.\d+)?")}})
    ctx = make_ctx(world, policy=policy)
    short = await CeilingGate()(make_call("run_command", command="ls", timeout_s=30), ctx)
    long = await CeilingGate()(make_call("run_command", command="ls", timeout_s=3000), ctx)
    assert (short.verdict, long.verdict) == ("allow", "deny")


def test_invalid_patterns_are_refused_when_the_policy_is_read() -> None:
    with pytest.raises(ValidationError, match="invalid regular expression"):
        ArgumentConstraint(pattern="(unclosed")
    with pytest.raises(ValidationError, match="invalid regular expression"):
        ApprovalRule(tool="run_command", when={"command": "[a-"}, action="allow")


def test_policy_intersection_narrows() -> None:
    org = Policy(
        tools=frozenset({"read_file", "run_command", "http_fetch"}),
        deny_tools=frozenset({"send_email"}),
        arguments={"run_command": {"command": limit("git .*")}},
    )
    blueprint = Policy(
        tools=frozenset({"run_command", "write_file"}),
        deny_tools=frozenset({"http_fetch"}),
        arguments={
            "run_command": {"command": limit(".*status.*"), "timeout_s": limit(r"\d+")},
            "read_file": {"path": limit("src/.*")},
        },
    )
    both = org.intersect(blueprint)
    assert both.tools == frozenset({"run_command"})
    assert both.deny_tools == frozenset({"send_email", "http_fetch"})
    assert both.arguments["run_command"]["command"] == (*limit("git .*"), *limit(".*status.*"))
    assert both.arguments["run_command"]["timeout_s"] == limit(r"\d+")
    assert both.arguments["read_file"]["path"] == limit("src/.*")


def test_policy_intersection_treats_none_as_every_tool() -> None:
    some = Policy(tools=frozenset({"read_file"}))
    assert Policy().intersect(some).tools == frozenset({"read_file"})
    assert some.intersect(Policy()).tools == frozenset({"read_file"})
    assert Policy().intersect(Policy()).tools is None


def test_policy_intersection_does_not_repeat_shared_constraints() -> None:
    a = Policy(arguments={"read_file": {"path": limit("x")}})
    assert a.intersect(a).arguments == {"read_file": {"path": limit("x")}}


# arguments


async def test_arguments_refuses_unknown_tools(world: Path) -> None:
    decision = await ArgumentsGate(["read_file"])(make_call("rm_everything"), make_ctx(world))
    assert decision.verdict == "deny"
    assert decision.reason == "unknown tool 'rm_everything'; available: read_file"


async def test_arguments_names_the_ceiling_when_the_run_gave_no_list(world: Path) -> None:
    ctx = make_ctx(world, policy=Policy(tools=frozenset({"read_file", "write_file"})))
    decision = await ArgumentsGate()(make_call("rm_everything"), ctx)
    assert decision.reason == "unknown tool 'rm_everything'; available: read_file, write_file"


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("read_file", {}, "path: Field required"),
        ("read_file", {"path": 3}, "path: Input should be a valid string"),
        ("read_file", {"path": "a", "mode": "w"}, "mode: Extra inputs are not permitted"),
        ("run_command", {"command": "ls", "timeout_s": "soon"}, "timeout_s:"),
    ],
)
async def test_arguments_refuses_what_the_schema_refuses(
    world: Path, name: str, args: dict[str, object], expected: str
) -> None:
    decision = await ArgumentsGate()(make_call(name, **args), make_ctx(world))
    assert decision.verdict == "deny"
    assert decision.reason.startswith(f"invalid arguments: {name}: ")
    assert expected in decision.reason


async def test_arguments_allows_valid_calls(world: Path) -> None:
    decision = await ArgumentsGate()(make_call("read_file", path="a.txt"), make_ctx(world))
    assert decision.verdict == "allow"


async def test_arguments_refuses_other_tools_while_one_is_forced(world: Path) -> None:
    ctx = make_ctx(world, forced_tool="write_file")
    other = await ArgumentsGate()(make_call("read_file", path="a.txt"), ctx)
    assert (other.verdict, other.reason) == (
        "deny",
        "you were asked to call 'write_file', not 'read_file': call 'write_file' now",
    )
    unknown = await ArgumentsGate(["read_file"])(make_call("nope"), ctx)
    assert unknown.reason == "unknown tool 'nope'; available: read_file"  # that, first
    forced = await ArgumentsGate()(make_call("write_file", path="a", content="x"), ctx)
    assert forced.verdict == "allow"


# boundary


@pytest.mark.parametrize(
    "path", ["a.txt", "src/deep/er/file.py", ".", "src/../a.txt", "./b", "new/dir/not/yet/there"]
)
async def test_boundary_allows_paths_in_the_world(world: Path, path: str) -> None:
    decision = await BoundaryGate()(make_call("read_file", path=path), make_ctx(world))
    assert decision.verdict == "allow"


@pytest.mark.parametrize("path", ["../x", "..", "/etc/passwd", "src/../../x", "/", "a/../../.."])
async def test_boundary_refuses_paths_outside_the_world(world: Path, path: str) -> None:
    decision = await BoundaryGate()(make_call("write_file", path=path, content=""), make_ctx(world))
    assert decision.verdict == "deny"
    assert "outside the world" in decision.reason


async def test_boundary_allows_absolute_paths_inside_the_world(world: Path) -> None:
    path = str(world / "a.txt")
    decision = await BoundaryGate()(make_call("read_file", path=path), make_ctx(world))
    assert decision.verdict == "allow"


async def test_boundary_refuses_a_sibling_sharing_the_worlds_prefix(world: Path) -> None:
    sibling = world.parent / (world.name + "-other")
    sibling.mkdir()
    decision = await BoundaryGate()(
        make_call("read_file", path=str(sibling / "x")), make_ctx(world)
    )
    assert decision.verdict == "deny"


async def test_boundary_follows_symlinks_out_of_the_world(world: Path) -> None:
    (world / "etc").symlink_to("/etc")
    (world / "passwd").symlink_to("/etc/passwd")
    for path in ["etc/passwd", "etc", "passwd"]:
        decision = await BoundaryGate()(make_call("read_file", path=path), make_ctx(world))
        assert decision.verdict == "deny", path


async def test_boundary_checks_every_component_of_a_plain_path(world: Path) -> None:
    # Plain relative paths skip the full resolve; a link anywhere on the way still counts.
    (world / "a" / "b").mkdir(parents=True)
    (world / "a" / "b" / "out").symlink_to("/etc")
    (world / "dangling").symlink_to("/nonexistent-helix-target/x")
    (world / "notes.txt").write_text("x")
    cases = {
        "a/b/out/passwd": "deny",
        "./a//b/out": "deny",
        "dangling": "deny",
        "a/b/new/deeper.txt": "allow",
        "notes.txt": "allow",
        "notes.txt/under-a-file": "allow",
    }
    for path, verdict in cases.items():
        decision = await BoundaryGate()(make_call("read_file", path=path), make_ctx(world))
        assert decision.verdict == verdict, path


async def test_boundary_allows_symlinks_that_stay_inside(world: Path) -> None:
    (world / "real").mkdir()
    (world / "link").symlink_to(world / "real")
    decision = await BoundaryGate()(make_call("read_file", path="link/x"), make_ctx(world))
    assert decision.verdict == "allow"


async def test_boundary_refuses_unresolvable_paths(world: Path) -> None:
    decision = await BoundaryGate()(make_call("read_file", path="a\x00b"), make_ctx(world))
    assert decision.verdict == "deny"


async def test_boundary_checks_the_default_path_of_listings(world: Path) -> None:
    listing = await BoundaryGate()(make_call("list_files"), make_ctx(world))
    escaping = await BoundaryGate()(
        make_call("search_files", pattern="x", path=".."), make_ctx(world)
    )
    assert (listing.verdict, escaping.verdict) == ("allow", "deny")


async def test_boundary_leaves_commands_to_the_sandbox(world: Path) -> None:
    decision = await BoundaryGate()(
        make_call("run_command", command="cat /etc/passwd"), make_ctx(world)
    )
    assert decision == decision.__class__("allow", "commands run in the world's sandbox")


async def test_boundary_passes_tools_without_paths(world: Path) -> None:
    decision = await BoundaryGate()(make_call("http_fetch", url="https://a.test"), make_ctx(world))
    assert decision.verdict == "allow"


async def test_boundary_judges_an_unresolved_world_by_its_real_place(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    decision = await BoundaryGate()(make_call("read_file", path="a"), make_ctx(alias))
    assert decision.verdict == "allow"


# budget


@pytest.mark.parametrize(
    ("budget", "verdict"),
    [
        (BudgetState(), "allow"),
        (BudgetState(cap_usd=5.0, spent_usd=4.99), "allow"),
        (BudgetState(cap_usd=5.0, spent_usd=5.0), "deny"),
        (BudgetState(cap_usd=5.0, spent_usd=7.5), "deny"),
        (BudgetState(cap_usd=0.0), "deny"),
        (BudgetState(cap_usd=5.0, spent_usd=float("nan")), "deny"),
        (BudgetState(max_seconds=60, elapsed_s=59.9), "allow"),
        (BudgetState(max_seconds=60, elapsed_s=60), "deny"),
    ],
)
async def test_budget(world: Path, budget: BudgetState, verdict: str) -> None:
    decision = await BudgetGate()(make_call("read_file", path="a"), make_ctx(world, budget=budget))
    assert decision.verdict == verdict


async def test_budget_reasons_name_the_figures(world: Path) -> None:
    money = make_ctx(world, budget=BudgetState(cap_usd=2.0, spent_usd=2.5))
    time = make_ctx(world, budget=BudgetState(max_seconds=600, elapsed_s=601))
    assert (await BudgetGate()(make_call("read_file", path="a"), money)).reason == (
        "budget exhausted: $2.50 of $2.00"
    )
    assert (await BudgetGate()(make_call("read_file", path="a"), time)).reason == (
        "time limit reached: 601s of 600s"
    )


# approval


@pytest.mark.parametrize(
    ("name", "args", "verdict"),
    [
        ("read_file", {"path": "a"}, "allow"),
        ("list_files", {}, "allow"),
        ("write_file", {"path": "a", "content": "x"}, "allow"),
        ("edit_file", {"path": "a", "old": "x", "new": "y"}, "allow"),
        ("run_command", {"command": "git status"}, "allow"),
        ("run_command", {"command": "pytest -q"}, "ask"),
        ("http_fetch", {"url": "https://a.test"}, "ask"),
        ("send_email", {"to": "a@b.test", "body": "hi"}, "ask"),
        ("not_a_tool", {}, "ask"),
    ],
)
async def test_approval_defaults(
    repo: Path, name: str, args: dict[str, object], verdict: str
) -> None:
    decision = await ApprovalGate()(make_call(name, **args), make_ctx(repo))
    assert decision.verdict == verdict


async def test_approval_rules_first_match_wins(world: Path) -> None:
    rules = (
        ApprovalRule(tool="run_command", when={"command": r"^git push"}, action="deny"),
        ApprovalRule(tool="run_command", when={"command": r"^(git|pytest)\b"}, action="allow"),
        ApprovalRule(tool="*", action="ask"),
    )
    ctx = make_ctx(world, approvals=rules)
    gate = ApprovalGate()
    push = await gate(make_call("run_command", command="git push --force"), ctx)
    test = await gate(make_call("run_command", command="pytest -q"), ctx)
    read = await gate(make_call("read_file", path="a"), ctx)
    assert (push.verdict, test.verdict, read.verdict) == ("deny", "allow", "ask")
    assert push.reason == "approval rule 1 (run_command when command ~ '^git push') says deny"
    assert read.reason == "approval rule 3 (*) says ask"


async def test_approval_rule_needs_every_when_pattern(world: Path) -> None:
    rule = ApprovalRule(
        tool="http_fetch", when={"url": r"^https://docs\.", "method": "^GET$"}, action="allow"
    )
    ctx = make_ctx(world, approvals=(rule,))
    get = await ApprovalGate()(make_call("http_fetch", url="https://docs.python.org/3/"), ctx)
    post = await ApprovalGate()(
        make_call("http_fetch", url="https://docs.python.org/3/", method="POST"), ctx
    )
    elsewhere = await ApprovalGate()(make_call("http_fetch", url="https://evil.test/"), ctx)
    assert (get.verdict, post.verdict, elsewhere.verdict) == ("allow", "ask", "ask")


async def test_approval_rule_can_deny_what_defaults_allow(world: Path) -> None:
    rule = ApprovalRule(tool="write_file", when={"path": r"(^|/)\.github/"}, action="deny")
    ctx = make_ctx(world, approvals=(rule,))
    ci = await ApprovalGate()(
        make_call("write_file", path=".github/workflows/x.yml", content=""), ctx
    )
    src = await ApprovalGate()(make_call("write_file", path="src/x.py", content=""), ctx)
    assert (ci.verdict, src.verdict) == ("deny", "allow")


async def test_approval_rule_about_an_absent_argument_does_not_match(world: Path) -> None:
    rule = ApprovalRule(tool="*", when={"command": "."}, action="deny")
    decision = await ApprovalGate()(
        make_call("read_file", path="a"), make_ctx(world, approvals=(rule,))
    )
    assert decision.verdict == "allow"
