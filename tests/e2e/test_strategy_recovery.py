"""A tree-of-thoughts run whose process is killed mid-way: ``helix resume`` finishes it,
and no branch that had finished is driven (or judged) again."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Helix, of_type, types


def _model(path: Path, answer: str, *, delay_s: float = 0.0) -> str:
    write = {"name": "write_file", "args": {"path": "answer.txt", "content": f"{answer}\n"}}
    steps = [
        {"text": "Writing.", "tool_calls": [write], "delay_s": delay_s},
        {"text": f"Answered {answer}."},
    ]
    path.write_text(json.dumps({"steps": steps}))
    return f"scripted:{path}"


def test_a_killed_tree_of_thoughts_resumes_without_rerunning_finished_branches(
    helix: Helix,
) -> None:
    slow = helix.tmp / "m2.json"
    models = [
        _model(helix.tmp / "m0.json", "41"),
        _model(helix.tmp / "m1.json", "42"),
        _model(slow, "43", delay_s=3600),  # the third branch hangs in its model call
    ]
    blueprint = helix.tmp / "tot.json"
    strategy = {
        "kind": "tree_of_thoughts",
        "models": models,
        "judge": {"command": "grep -qx 42 answer.txt"},
    }
    blueprint.write_text(json.dumps({"model": models[0], "strategy": strategy}))
    # A lease long enough that only the killed holder's end can let it go (however slow
    # the reads below are on a busy machine): the resume must see that end.
    helix.env["HELIX_LEASE_TTL_S"] = "300"
    running = helix.start(
        "run", "six times seven", "--blueprint", str(blueprint), "--dir", str(helix.world), "--json"
    )
    root = running.run_id
    first = running.wait_for("strategy.scored")
    running.wait_for("strategy.scored", lambda e: e["data"]["branch"] != first["data"]["branch"])
    running.kill()

    log = helix.logs(root)
    (branched,) = of_type(log, "strategy.branched")
    branches = [b["run_id"] for b in branched["data"]["branches"]]
    finished = sorted(e["data"]["branch"] for e in of_type(log, "strategy.scored"))
    assert finished == sorted(branches[:2])
    before = {b: helix.logs(b) for b in finished}
    assert helix.show(branches[2])["status"] == "running"

    _model(slow, "43")  # from now on the third branch's model answers at once
    resumed = helix("resume", root, "--json")
    assert resumed.returncode == 0, resumed.stderr

    log = helix.logs(root)
    assert types(log)[-1] == "run.completed"
    assert len(of_type(log, "strategy.branched")) == 1
    assert sorted(e["data"]["branch"] for e in of_type(log, "strategy.scored")) == sorted(branches)
    (chosen,) = of_type(log, "strategy.chosen")
    assert chosen["data"]["branch"] == branches[1]
    assert (helix.world / "answer.txt").read_text() == "42\n"
    # the killed driver held the run's lease: the resume took it over, and said so
    assert of_type(log, "lease.taken_over")[0]["data"]["reason"] == "holder_gone"
    for branch in finished:  # never driven again: only the kept one got keep's marker
        after = helix.logs(branch)
        assert after[: len(before[branch])] == before[branch]
        added = set(types(after[len(before[branch]) :]))
        assert added <= ({"world.snapshotted", "world.kept"} if branch == branches[1] else set())
    third = helix.logs(branches[2])
    assert of_type(third, "lease.taken_over")  # the hung branch was taken over and finished
    assert types(third)[-1] == "run.completed"
    assert helix.show(root)["strategy"]["kept"] == branches[1]
