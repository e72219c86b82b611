"""A workflow's definition: checked as untrusted text, and turned into a task graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.errors import WorkflowError
from helix.workflows import (
    MAX_TEXT,
    apply_ops,
    describe_change,
    load_file,
    load_text,
    parse_ops,
    to_plan,
)

RELEASE = """
name: release
description: Test, review and ship
model: openai:gpt-4.1
steps:
  - id: tests
    objective: Run the tests
    tools: [run_command]
    report: {type: object, required: [passed], properties: {passed: {type: boolean}}}
  - {id: review, objective: Review the diff, model: anthropic:claude-sonnet-4-5, retries: 2}
  - {id: signoff, kind: approval, objective: A person signs off}
  - {id: ship, objective: Tag the release, when: {step: tests, field: passed, equals: true}}
edges:
  - {from: tests, to: review}
  - {from: review, to: signoff}
  - {from: signoff, to: ship}
"""


def test_a_workflow_becomes_a_task_graph_with_its_gates_and_branches() -> None:
    plan = to_plan(load_text(RELEASE))
    graph = plan.blueprint.graph
    assert graph is not None
    assert [t.id for t in graph.tasks] == ["tests", "review", "ship"]  # approval: a gate
    review, ship = graph.task("review"), graph.task("ship")
    assert review.approve
    assert review.depends_on == ("tests",)
    assert review.retries == 2
    assert review.model == "anthropic:claude-sonnet-4-5"
    assert ship.depends_on == ("review",)  # through the approval step
    assert ship.when is not None
    assert (ship.when.field, ship.when.equals) == ("passed", True)
    assert "tests" in ship.needs
    assert graph.task("tests").tools == ("run_command",)
    assert plan.blueprint.model == "openai:gpt-4.1"
    assert plan.objective == "Test, review and ship"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("name: [unclosed", "does not parse"),
        ("- a\n- b\n", "a mapping"),
        ("name: x\nsteps: []\n", "steps"),
        (
            "name: x\nsteps: [{id: a, objective: A}, {id: b, objective: B}]\n"
            "edges: [{from: a, to: b}, {from: b, to: a}]\n",
            "cycle: a -> b -> a",
        ),
        (
            "name: x\nsteps: [{id: a, objective: A}]\nedges: [{from: a, to: nope}]\n",
            "unknown step 'nope'",
        ),
        ("name: x\nsteps: [{id: a, objective: A}, {id: a, objective: B}]\n", "two steps"),
        (
            "name: x\nsteps: [{id: a, objective: A}, {id: b, objective: B,"
            " when: {step: a, equals: 1}}]\n",
            "not a step before it",
        ),
        ("name: x\nsteps: [{id: a, objective: A, colour: red}]\n", "colour"),
        ("name: ../etc\nsteps: [{id: a, objective: A}]\n", "name"),
        ("name: x\nsteps: [{id: a, objective: !!python/object:os.system x}]\n", "parse"),
        ("name: x\nwhen: 2024-01-01\nsteps: [{id: a, objective: A}]\n", "JSON cannot"),
    ],
)
def test_bad_definitions_are_refused_with_the_reason(text: str, says: str) -> None:
    with pytest.raises(WorkflowError, match=says.replace("(", r"\(").replace(")", r"\)")):
        load_text(text)


def test_alias_bombs_and_huge_texts_are_refused() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9)
    )
    with pytest.raises(WorkflowError, match="aliases"):
        load_text(bomb)
    with pytest.raises(WorkflowError, match="larger than"):
        load_text("name: x\n" + "#" * MAX_TEXT)
    with pytest.raises(WorkflowError, match="nested too deeply"):
        load_text("a: " + "[" * 50_000 + "]" * 50_000)


def test_a_file_is_read_with_limits_and_never_through_a_link(tmp_path: Path) -> None:
    good = tmp_path / "release.yaml"
    good.write_text(RELEASE)
    assert load_file(good).name == "release"
    link = tmp_path / "link.yaml"
    link.symlink_to(good)
    with pytest.raises(WorkflowError, match="is a link"):
        load_file(link)
    with pytest.raises(WorkflowError, match="cannot read"):
        load_file(tmp_path / "missing.yaml")


def test_operations_add_a_step_after_another_and_say_what_changed() -> None:
    before = load_text(RELEASE)
    ops = parse_ops(
        [{"op": "add_step", "after": "tests", "step": {"id": "lint", "objective": "Lint it"}}]
    )
    after = apply_ops(before, ops)
    assert after.before("lint") == ["tests"]
    assert after.after("lint") == ["review"]
    assert after.before("review") == ["lint"]
    assert describe_change(before, after) == (
        "added step lint; connected lint -> review; connected tests -> lint;"
        " disconnected tests -> review"
    )
    removed = apply_ops(after, parse_ops([{"op": "remove_step", "step": "lint"}]))
    assert removed == before


@pytest.mark.parametrize(
    ("ops", "says"),
    [
        ([], "non-empty"),
        ([{"op": "explode"}], "operations.0"),
        ([{"op": "connect", "from": "ship", "to": "tests"}], "cycle"),
        ([{"op": "remove_step", "step": "nope"}], "no step 'nope'"),
        ([{"op": "disconnect", "from": "tests", "to": "ship"}], "no edge"),
        ([{"op": "set_field", "step": "tests", "field": "retries", "value": 99}], "retries"),
        ([{"op": "remove_step", "step": "tests"}], "operation 0 .remove_step."),
    ],
)
def test_bad_operations_are_refused_and_name_the_operation(
    ops: list[dict[str, object]], says: str
) -> None:
    with pytest.raises(WorkflowError, match=says):
        apply_ops(load_text(RELEASE), parse_ops(ops))
