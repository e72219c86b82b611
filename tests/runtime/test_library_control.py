"""Driving a run from code: step by step, until a condition, paused runs, own gates.

The model is an in-process object registered as a provider (``register_provider``), so
the run's model name is an ordinary ``provider:model`` that ``drive`` (in this process)
resolves again on every incarnation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.errors import ConfigError, ModelNameError
from helix.gates import Decision, GateCall, GateContext, GatePipeline, build_gate_pipeline
from helix.kernel.log import SqliteEventStore
from helix.providers import check_model, register_provider, unregister_provider
from helix.runtime import Engine, pause, resume
from helix.tools import ToolRegistry

from ._library import BLUEPRINT, Ticker, inproc_provider, library_engine


async def test_step_takes_one_step_at_a_time_until_the_run_ends(
    tmp_path: Path, helix_home: Path
) -> None:
    with inproc_provider(turns=3), library_engine(helix_home) as engine:
        run = await engine.create("step", blueprint=BLUEPRINT, model="inproc:a", world=tmp_path)
        states = []
        for _ in range(20):
            state = await engine.step(run.id)
            states.append((state.status, state.turn, state.head))
            if state.status == "completed":
                break
        again = await engine.step(run.id)  # a finished run is returned as it is
    assert states[-1][0] == "completed"
    heads = [head for _status, _turn, head in states]
    assert heads == sorted(set(heads))  # every step appended something
    assert [turn for _s, turn, _h in states] == sorted(t for _s, t, _h in states)
    assert len(states) > 3  # one step is less than one turn here: a turn has two
    assert again.head == states[-1][2]


async def test_drive_until_stops_at_a_turn_and_drive_goes_on_from_there(
    tmp_path: Path, helix_home: Path
) -> None:
    store = SqliteEventStore(helix_home / "events.db")
    with inproc_provider(turns=5), library_engine(helix_home, store) as engine:
        run = await engine.create("until", blueprint=BLUEPRINT, model="inproc:a", world=tmp_path)
        state = await engine.drive(run.id, until=lambda s: s.turn == 2 and not s.in_turn)
        assert (state.status, state.turn, state.in_turn) == ("running", 2, False)
        assert [e.type for e in await store.read(run.id)][-1] == "turn.ended"
        state = await engine.drive(run.id)
    await store.close()
    assert (state.status, state.turn) == ("completed", 5)


async def test_a_paused_runs_drive_returns_its_state_at_once(
    tmp_path: Path, helix_home: Path
) -> None:
    with inproc_provider(turns=3), library_engine(helix_home) as engine:
        run = await engine.create("pause", blueprint=BLUEPRINT, model="inproc:a", world=tmp_path)
        await engine.step(run.id)
        await pause(engine.store, run.id, by="user:test")
        head = (await engine.store.get_run(run.id)).head
        state = await engine.drive(run.id)  # returns: it does not wait for a resume
        assert state.status == "paused"
        assert state.head == head
        assert (await engine.step(run.id)).head == head
        assert await resume(engine.store, run.id, by="user:test")
        state = await engine.drive(run.id)
    assert state.status == "completed"


async def test_drive_until_paused_returns_at_a_pause_taken_while_driving(
    tmp_path: Path, helix_home: Path
) -> None:
    blueprint = BLUEPRINT.model_copy(
        update={"budget": BLUEPRINT.budget.model_copy(update={"max_turns": 2})}
    )
    with inproc_provider(turns=5), library_engine(helix_home) as engine:
        run = await engine.create("cap", blueprint=blueprint, model="inproc:a", world=tmp_path)
        state = await engine.drive(run.id, until=lambda s: s.status == "paused")
    assert (state.status, state.pause_reason, state.turn) == ("paused", "max_turns", 2)


class NoTicks:
    """A gate of the caller's: refuses ``tick`` (asked about that tool only)."""

    name = "no-ticks"
    tools = frozenset({"tick"})

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        return Decision("deny", "no ticks in this test")


async def test_the_engines_own_gates_decide_every_runs_calls(
    tmp_path: Path, helix_home: Path
) -> None:
    with inproc_provider(turns=2), library_engine(helix_home, gates=[NoTicks()]) as engine:
        run = await engine.create("gated", blueprint=BLUEPRINT, model="inproc:a", world=tmp_path)
        state = await engine.drive(run.id)
        log = await engine.store.read(run.id)
    assert state.status == "completed"
    decided = [e.data for e in log if e.type == "gate.decided"]
    assert {"gate": "no-ticks", "verdict": "deny"}.items() <= decided[-1].items()
    (result,) = [e.data for e in log if e.type == "tool.completed"]
    assert result["ok"] is False
    assert [e for e in log if e.type == "tool.started"] == []


async def test_a_whole_pipeline_replaces_helixs_own(tmp_path: Path, helix_home: Path) -> None:
    made: list[list[str]] = []

    def pipeline(tools: ToolRegistry) -> GatePipeline:
        made.append(sorted(tools.names))
        return GatePipeline([NoTicks()])

    with inproc_provider(turns=2), library_engine(helix_home, pipeline=pipeline) as engine:
        run = await engine.create("own", blueprint=BLUEPRINT, model="inproc:a", world=tmp_path)
        await engine.drive(run.id)
        log = await engine.store.read(run.id)
    assert made == [["tick"]]
    assert [e.data["gate"] for e in log if e.type == "gate.decided"] == ["no-ticks"]


def test_gates_and_a_pipeline_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not both"):
        Engine(
            SqliteEventStore(tmp_path / "x.db"),
            home=tmp_path,
            gates=[NoTicks()],
            pipeline=lambda tools: build_gate_pipeline(),
        )
    with pytest.raises(ValueError, match="distinct"):
        Engine(SqliteEventStore(tmp_path / "y.db"), home=tmp_path, gates=[NoTicks(), NoTicks()])


def test_an_in_process_provider_is_known_while_registered_only() -> None:
    with inproc_provider():
        check_model("inproc:anything")
    with pytest.raises(ModelNameError, match="unknown provider 'inproc'"):
        check_model("inproc:anything")
    with pytest.raises(ModelNameError, match="built-in provider"):
        register_provider("openai", lambda name: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(ModelNameError, match="invalid provider name"):
        register_provider("Bad:Name", lambda name: None)  # type: ignore[arg-type,return-value]


async def test_an_until_that_raises_stops_the_drive_not_the_run(
    tmp_path: Path, helix_home: Path
) -> None:
    def broken(state: object) -> bool:
        raise ValueError("my predicate is wrong")

    with inproc_provider(turns=3), library_engine(helix_home) as engine:
        run = await engine.create("until", blueprint=BLUEPRINT, model="inproc:a", world=tmp_path)
        await engine.step(run.id)
        with pytest.raises(ValueError, match="my predicate is wrong"):
            await engine.drive(run.id, until=broken)
        types = [e.type for e in await engine.store.read(run.id)]
        assert "supervisor.restarted" not in types
        assert "run.failed" not in types
        state = await engine.drive(run.id)
    assert state.status == "completed"


async def test_a_run_whose_provider_this_process_lacks_is_refused_not_failed(
    tmp_path: Path,
) -> None:
    with library_engine(tmp_path) as engine:
        with inproc_provider(turns=3):
            run = await engine.create("gone", blueprint=BLUEPRINT, model="inproc:a")
        with pytest.raises(ModelNameError, match="unknown provider 'inproc'"):
            await engine.drive(run.id)  # as `helix resume` in another process would
        types = [e.type for e in await engine.store.read(run.id)]
        assert types == ["run.created"]
        with inproc_provider(turns=3):
            state = await engine.drive(run.id)
    assert state.status == "completed"


async def test_resume_all_passes_over_a_run_whose_provider_is_missing(tmp_path: Path) -> None:
    with library_engine(tmp_path) as engine, inproc_provider(turns=2):
        register_provider("elsewhere", lambda name: Ticker(name, turns=2))
        try:
            gone = await engine.create("gone", blueprint=BLUEPRINT, model="elsewhere:a")
            await engine.step(gone.id)  # started: resume_all picks it up
        finally:
            unregister_provider("elsewhere")
        here = await engine.create("here", blueprint=BLUEPRINT, model="inproc:b")
        await engine.step(here.id)
        resumed = await engine.resume_all()
        assert sorted(resumed) == sorted([gone.id, here.id])
        assert (await engine.store.get_run(here.id)).status == "completed"
        assert (await engine.store.get_run(gone.id)).status == "running"


async def test_an_engine_without_snapshots_never_reads_the_world(tmp_path: Path) -> None:
    from helix.kernel.log import MemoryEventStore
    from helix.providers import ModelAdapter, Scenario, ScriptedModel
    from helix.runtime import Blueprint, Engine, RunSetup

    write = {"name": "write_file", "args": {"path": "a.txt", "content": "a\n"}}
    scenario = Scenario.of({"text": "writing", "tool_calls": [write]}, {"text": "done"})

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    engine = Engine(
        MemoryEventStore(), home=tmp_path / "home", model_factory=model, env={}, snapshots=False
    )
    world = tmp_path / "world"
    world.mkdir()
    record = await engine.create("write", blueprint=Blueprint(model="scripted:t"), world=world)
    assert (await engine.drive(record.id)).status == "completed"
    assert (world / "a.txt").read_text() == "a\n"
    log = await engine.store.read(record.id)
    assert not [e for e in log if e.type.startswith("world.")]
    assert not (tmp_path / "home" / "objects").exists()  # nothing stored either
