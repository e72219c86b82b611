"""Tree of thoughts: a run forked N ways, each branch judged, the best kept (docs/strategies.md).

Each branch plays its own scripted model (``strategy.models``), so each writes a
different answer in its own world; the judge is a test command run in each branch's
world, and only one branch's answer passes it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from helix.errors import BlueprintError
from helix.kernel.events import Event
from helix.kernel.log import EventStore
from helix.runtime import Blueprint, Engine, ModelPrice, cancel, fork_with_world
from helix.sandbox import ProcessSandbox

JUDGE = "grep -qx 42 answer.txt"
"""Passes only in a world whose answer.txt says 42."""


def _scenario(path: Path, answer: str, *, delay_s: float = 0.0, after: int = 0) -> str:
    """A model that writes ``answer`` then says so (``after``: replies it is not asked for)."""
    write = {"name": "write_file", "args": {"path": "answer.txt", "content": f"{answer}\n"}}
    steps = [
        *[{"text": "(not mine)"}] * after,
        {"text": f"I think it is {answer}.", "tool_calls": [write], "delay_s": delay_s},
        {"text": f"Answered {answer}."},
    ]
    path.write_text(json.dumps({"steps": steps}))
    return f"scripted:{path}"


def _blueprint(models: list[str], **strategy: object) -> Blueprint:
    return Blueprint.parse(
        {
            "model": models[0],
            "tools": ["write_file", "read_file"],
            "strategy": {
                "kind": "tree_of_thoughts",
                "branches": len(models),
                "models": models,
                "judge": {"command": JUDGE},
                **strategy,  # replaces any of these
            },
        },
        source="tot.yaml",
    )


@pytest.fixture
def engine(store: EventStore, helix_home: Path) -> Engine:
    return Engine(store, home=helix_home, sandbox=ProcessSandbox(), env={})


def _of(log: list[Event], kind: str) -> list[Event]:
    return [e for e in log if e.type == kind]


async def test_three_branches_and_a_test_command_judge_keep_the_passing_branch(
    engine: Engine, tmp_path: Path
) -> None:
    models = [_scenario(tmp_path / f"b{i}.json", a) for i, a in enumerate(["41", "42", "43"])]
    world = tmp_path / "world"
    world.mkdir()
    run = await engine.create("what is six times seven?", blueprint=_blueprint(models), world=world)

    state = await engine.drive(run.id)

    log = await engine.store.read(run.id)
    (branched,) = _of(log, "strategy.branched")
    branches = [b["run_id"] for b in branched.data["branches"]]
    assert len(branches) == 3
    assert branched.data["judge"] == f"command: {JUDGE}"
    scored = {e.data["branch"]: e.data for e in _of(log, "strategy.scored")}
    assert {b: scored[b]["score"] for b in branches} == {
        branches[0]: 0.0,
        branches[1]: 1.0,
        branches[2]: 0.0,
    }
    assert scored[branches[1]]["detail"].startswith("exit 0")
    (chosen,) = _of(log, "strategy.chosen")
    assert chosen.data["branch"] == branches[1]
    assert chosen.data["score"] == 1.0
    assert sorted(chosen.data["closed"]) == sorted([branches[0], branches[2]])
    (kept,) = _of(log, "world.kept")
    assert kept.data["branch"] == branches[1]
    # the run's own world now holds the passing branch's answer; the branches their own
    assert (world / "answer.txt").read_text() == "42\n"
    assert state.status == "completed"
    assert state.summary == f"kept branch {branches[1]} (score 1): Answered 42."
    assert state.strategy is not None
    assert state.strategy.kept
    for branch, answer in zip(branches, ["41", "42", "43"], strict=True):
        record = await engine.store.get_run(branch)
        assert record.parent is not None
        assert record.parent.run_id == run.id
        assert record.status == "completed"
        assert (Path(record.world) / "answer.txt").read_text() == f"{answer}\n"
        assert record.model == models[int(answer) - 41]
    # the order in the log: branched before any branch's events, chosen after every score
    seqs = [e.seq for e in log]
    assert branched.seq < min(e.seq for e in _of(log, "strategy.scored"))
    assert chosen.seq > max(e.seq for e in _of(log, "strategy.scored"))
    assert log[-1].type == "run.completed"
    assert seqs == list(range(len(log)))


async def test_a_drive_cut_short_resumes_without_rerunning_finished_branches(
    engine: Engine, tmp_path: Path
) -> None:
    slow = tmp_path / "b2.json"
    models = [
        _scenario(tmp_path / "b0.json", "41"),
        _scenario(tmp_path / "b1.json", "42"),
        _scenario(slow, "43", delay_s=3600),  # holds the third branch in its model call
    ]
    world = tmp_path / "world"
    world.mkdir()
    run = await engine.create("six times seven", blueprint=_blueprint(models), world=world)

    async def two_scored() -> None:
        async with engine.store.subscribe(run.id) as events:
            count = 0
            async for event in events:
                count += event.type == "strategy.scored"
                if count == 2:
                    return

    drive = asyncio.ensure_future(engine.drive(run.id))
    await two_scored()
    drive.cancel()
    with pytest.raises(asyncio.CancelledError):
        await drive

    log = await engine.store.read(run.id)
    (branched,) = _of(log, "strategy.branched")
    branches = [b["run_id"] for b in branched.data["branches"]]
    finished = [e.data["branch"] for e in _of(log, "strategy.scored")]
    assert sorted(finished) == sorted(branches[:2])
    before = {b: await engine.store.read(b) for b in finished}
    assert (await engine.store.get_run(branches[2])).status == "running"

    _scenario(slow, "43")  # the slow branch's model answers at once from now on
    state = await engine.drive(run.id)

    assert state.status == "completed"
    log = await engine.store.read(run.id)
    assert len(_of(log, "strategy.branched")) == 1
    assert sorted(e.data["branch"] for e in _of(log, "strategy.scored")) == sorted(branches)
    for branch in finished:  # not run again: only the kept one got keep's marker since
        after = await engine.store.read(branch)
        assert after[: len(before[branch])] == before[branch]
        added = {e.type for e in after[len(before[branch]) :]}
        if branch == branches[1]:  # keep's marker (and a snapshot when the world moved)
            assert "world.kept" in added <= {"world.snapshotted", "world.kept"}
        else:
            assert added == set()
    (chosen,) = _of(log, "strategy.chosen")
    assert chosen.data["branch"] == branches[1]
    assert _of(log, "run.resumed")
    assert (world / "answer.txt").read_text() == "42\n"
    third = await engine.store.read(branches[2])
    assert len(_of(third, "model.responded")) == 2  # its first call, asked again, then done


async def test_no_passing_branch_keeps_nothing_and_fails_the_run(
    engine: Engine, tmp_path: Path
) -> None:
    models = [_scenario(tmp_path / f"b{i}.json", a) for i, a in enumerate(["1", "2"])]
    world = tmp_path / "world"
    world.mkdir()
    (world / "answer.txt").write_text("untouched\n")
    run = await engine.create("x", blueprint=_blueprint(models), world=world)
    state = await engine.drive(run.id)
    assert state.status == "failed"
    assert state.error is not None
    assert "no branch was kept" in state.error
    (chosen,) = _of(await engine.store.read(run.id), "strategy.chosen")
    assert chosen.data["branch"] is None
    assert chosen.data["reason"] == "no branch scored above 0"
    assert (world / "answer.txt").read_text() == "untouched\n"


async def test_branches_fork_at_a_later_turn_with_their_own_budget(
    engine: Engine, tmp_path: Path
) -> None:
    first = {"name": "write_file", "args": {"path": "notes.txt", "content": "turn one\n"}}
    parent = tmp_path / "parent.json"
    parent.write_text(json.dumps({"steps": [{"text": "Noting.", "tool_calls": [first]}]}))
    # each branch's conversation holds the parent's first reply: its own replies come next
    models = [_scenario(tmp_path / f"b{i}.json", a, after=1) for i, a in enumerate(["7", "42"])]
    price = {"input": 1.0, "output": 1.0}
    blueprint = _blueprint(models, at_turn=1, budget_usd=0.25, messages=["try A", "try B"])
    blueprint = blueprint.model_copy(
        update={
            "model": f"scripted:{parent}",
            "prices": {m: ModelPrice(**price) for m in [*models, f"scripted:{parent}"]},
        }
    )
    world = tmp_path / "world"
    world.mkdir()
    run = await engine.create("x", blueprint=blueprint, world=world)
    state = await engine.drive(run.id)

    assert state.status == "completed"
    log = await engine.store.read(run.id)
    (branched,) = _of(log, "strategy.branched")
    assert branched.data["turn"] == 1
    assert branched.seq > _of(log, "turn.ended")[0].seq
    assert len(_of(log, "model.responded")) == 1  # the run's own turn; the rest is branches'
    for entry, told in zip(branched.data["branches"], ["try A", "try B"], strict=True):
        own = [e for e in await engine.store.read(entry["run_id"]) if e.run_id == entry["run_id"]]
        forked = own[0]
        assert forked.type == "run.forked"
        assert (forked.data["turn"], forked.data["message"]) == (1, told)
        assert forked.data["budget"]["usd"] == 0.25
        world_of = Path((await engine.store.get_run(entry["run_id"])).world)
        assert (world_of / "notes.txt").read_text() == "turn one\n"  # forked after turn 1
    assert (world / "answer.txt").read_text() == "42\n"
    assert (world / "notes.txt").read_text() == "turn one\n"


@pytest.mark.parametrize(
    ("strategy", "message"),
    [
        (
            {"branches": 1, "judge": {"command": "true"}},
            "strategy.tree_of_thoughts.branches: Input should be greater than or equal to 2",
        ),
        ({"judge": {"oracle": "x"}}, "unknown judge: give a command"),
        ({"judge": {"kind": "oracle"}}, "unknown judge kind 'oracle'"),
        ({}, "strategy.tree_of_thoughts.judge: Field required"),
        ({"judge": {"kind": "command"}}, "judge.command.command: Field required"),
        ({"judge": {"command": "  "}}, "the judge's command is empty"),
        ({"judge": {"command": "true"}, "models": ["scripted:a"]}, "models: 1 given for 3"),
    ],
)
def test_bad_strategies_are_refused_with_the_field_and_the_reason(
    strategy: dict[str, object], message: str
) -> None:
    """Refused as the blueprint is read: before any run exists (the CLI: tests/cli)."""
    with pytest.raises(BlueprintError, match=r"tot\.yaml: ") as refused:
        Blueprint.parse({"strategy": {"kind": "tree_of_thoughts", **strategy}}, source="tot.yaml")
    assert message in str(refused.value)


@pytest.mark.parametrize("choice", ["auto", "write_file"])
async def test_a_judge_run_scores_each_branch_in_its_world(
    engine: Engine, tmp_path: Path, choice: str
) -> None:
    """A branch's forced tool choice is not its judge's (whose tools are readers)."""
    models = [_scenario(tmp_path / f"b{i}.json", a) for i, a in enumerate(["41", "42"])]
    judge = tmp_path / "judge.json"
    look = {"name": "read_file", "args": {"path": "answer.txt"}}
    steps = [{"text": "Looking.", "tool_calls": [look]}, {"text": "Plausible. Score: 0.75"}]
    judge.write_text(json.dumps({"steps": steps}))
    judge_spec = {"objective": "Rate the answer.", "model": f"scripted:{judge}"}
    blueprint = _blueprint(models, judge=judge_spec).model_copy(update={"tool_choice": choice})
    world = tmp_path / "world"
    world.mkdir()
    run = await engine.create("six times seven", blueprint=blueprint, world=world)
    state = await engine.drive(run.id)

    assert state.status == "completed"
    log = await engine.store.read(run.id)
    (branched,) = _of(log, "strategy.branched")
    for entry in branched.data["branches"]:
        judge_run = await engine.store.get_run(entry["judge_run_id"])
        branch_run = await engine.store.get_run(entry["run_id"])
        assert judge_run.world == branch_run.world  # it judged the branch's own files
        assert judge_run.status == "completed"
        reads = _of(await engine.store.read(judge_run.id), "tool.completed")
        assert reads[0].data["output"].strip() in ("41", "42")
    scores = [e.data["score"] for e in _of(log, "strategy.scored")]
    assert scores == [0.75, 0.75]
    (chosen,) = _of(log, "strategy.chosen")
    assert chosen.data["branch"] == branched.data["branches"][0]["run_id"]  # the first of equals


async def test_cancelling_the_run_cancels_the_branches_still_going(
    engine: Engine, tmp_path: Path
) -> None:
    models = [
        _scenario(tmp_path / "b0.json", "42"),
        _scenario(tmp_path / "b1.json", "7", delay_s=3600),  # still working when cancelled
    ]
    world = tmp_path / "world"
    world.mkdir()
    run = await engine.create("x", blueprint=_blueprint(models), world=world)

    async def scored_once() -> None:
        async with engine.store.subscribe(run.id) as events:
            async for event in events:
                if event.type == "strategy.scored":
                    return

    drive = asyncio.ensure_future(engine.drive(run.id))
    await scored_once()
    await cancel(engine.store, run.id, by="user:ann")
    state = await drive

    assert state.status == "cancelled"
    log = await engine.store.read(run.id)
    assert not _of(log, "strategy.chosen")
    (branched,) = _of(log, "strategy.branched")
    first, second = (b["run_id"] for b in branched.data["branches"])
    assert (await engine.store.get_run(first)).status == "completed"
    assert (await engine.store.get_run(second)).status == "cancelled"
    assert not (world / "answer.txt").exists()  # nothing was kept


async def test_a_fork_of_a_strategy_run_is_a_plain_run(engine: Engine, tmp_path: Path) -> None:
    models = [_scenario(tmp_path / f"b{i}.json", a) for i, a in enumerate(["42", "7"])]
    world = tmp_path / "world"
    world.mkdir()
    run = await engine.create("x", blueprint=_blueprint(models), world=world)
    await engine.drive(run.id)
    fork = await fork_with_world(engine, run.id, 0, message="once more")
    state = await engine.drive(fork.id)
    assert state.status == "completed"
    assert state.summary == "Answered 42."  # the run's own model, played once, no branches
    own = [e for e in await engine.store.read(fork.id) if e.run_id == fork.id]
    assert not [e for e in own if e.type.startswith("strategy.")]


async def test_a_branch_model_that_cannot_open_fails_the_run_before_it_branches(
    engine: Engine, tmp_path: Path
) -> None:
    mine = _scenario(tmp_path / "b0.json", "42")
    world = tmp_path / "world"
    world.mkdir()
    blueprint = _blueprint([mine, "openai:gpt-4.1"])  # no OPENAI_API_KEY in this engine
    run = await engine.create("x", blueprint=blueprint, world=world)
    state = await engine.drive(run.id)
    assert state.status == "failed"
    assert state.error is not None
    assert "OPENAI_API_KEY" in state.error
    log = await engine.store.read(run.id)
    assert not _of(log, "strategy.branched")  # refused before anything was logged for it
    listed = (await engine.store.list_runs(limit=500)).runs
    assert not [r for r in listed if r.parent is not None and r.parent.run_id == run.id]
