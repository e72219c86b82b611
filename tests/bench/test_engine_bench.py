"""``helix bench engine`` at smoke-test sizes: every contract figure, sensible values."""

from __future__ import annotations

from pathlib import Path

from helix.bench._engine import EngineSizes, run_engine


async def test_engine_suite_emits_the_contract_figures(tmp_path: Path) -> None:
    figures = [f async for f in run_engine(EngineSizes.quick(), tmp_path)]
    by_name = {f.name: f for f in figures if f.params.get("system") != "langgraph"}
    for name in ("tool_call_overhead_p50", "tool_call_overhead_p99", "gates_p50"):
        assert by_name[name].unit == "ms"
        assert by_name[name].value > 0
    gates = {f.params["tool"]: f.params["gates"] for f in figures if f.name == "gates_p50"}
    assert gates == {"read_file": 5, "run_command": 6}  # each meets the gates scoped to it
    commit_floor = by_name["tool_call_commit_floor"]
    # Two commits a turn (the run's first and last appends besides), the same rows.
    turns = EngineSizes.quick().turns
    assert 2 * turns <= commit_floor.params["commits"] <= 2 * turns + 3
    assert commit_floor.value > 0
    concurrent = by_name["concurrent_runs_vs_ideal"]
    assert concurrent.params["runs"] == EngineSizes.quick().concurrent_runs
    assert concurrent.value >= 1  # nothing beats the model's own time
    floor = by_name["concurrent_write_floor"]
    # The floor writes exactly the rows the runs wrote, and takes less time than they did.
    assert floor.params["rows"] > EngineSizes.quick().concurrent_runs
    assert 0 < floor.value < concurrent.value
    # The same runs driven by worker processes (the processes executor), each with its
    # own floor: every run completed, and no figure beats its floor.
    runs = {f.params["executor"]: f for f in figures if f.name == "concurrent_runs_vs_ideal"}
    assert set(runs) == {"local", "processes"}
    assert runs["local"].params["workers"] == 1
    processes = runs["processes"]
    assert (processes.params["workers"], processes.params["store"]) == (2, "sqlite")
    assert processes.params["completed"] == EngineSizes.quick().concurrent_runs
    (paired,) = [
        f for f in figures if f.name == "concurrent_write_floor" and f.params.get("workers") == 2
    ]
    (local_floor,) = [
        f for f in figures if f.name == "concurrent_write_floor" and "workers" not in f.params
    ]
    assert paired.params["rows"] == local_floor.params["rows"]  # the same events written
    assert 0 < paired.value < processes.value
    assert by_name["resume_100_runs"].unit == "s"
    assert {
        (f.params["system"], f.params["turns"]) for f in figures if f.name == "bytes_per_turn"
    } == {(system, turns) for system in ("helix", "langgraph") for turns in (5, 20)}
    assert _entries(tmp_path) == []  # scratch files are gone


def _entries(folder: Path) -> list[Path]:
    return list(folder.iterdir())
