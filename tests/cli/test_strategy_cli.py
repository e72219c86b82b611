"""``helix run --blueprint`` with a strategy, and what ``helix show`` says of its branches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def helix(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("HELIX_")}
    return subprocess.run(
        [sys.executable, "-m", "helix", *args],
        capture_output=True,
        text=True,
        env={**inherited, "HELIX_HOME": str(home)},
        timeout=120,
        cwd=cwd,
    )


def _model(path: Path, answer: str) -> str:
    write = {"name": "write_file", "args": {"path": "answer.txt", "content": f"{answer}\n"}}
    steps = [{"text": "Writing.", "tool_calls": [write]}, {"text": f"Answered {answer}."}]
    path.write_text(json.dumps({"steps": steps}))
    return f"scripted:{path}"


def test_show_lists_the_branches_their_scores_and_the_one_kept(tmp_path: Path) -> None:
    home, world = tmp_path / "home", tmp_path / "world"
    world.mkdir()
    models = [_model(tmp_path / f"m{i}.json", a) for i, a in enumerate(["41", "42", "43"])]
    blueprint = tmp_path / "tot.yaml"
    strategy = {
        "kind": "tree_of_thoughts",
        "branches": 3,
        "models": models,
        "judge": {"command": ["grep", "-qx", "42", "answer.txt"]},
    }
    blueprint.write_text(json.dumps({"model": models[0], "strategy": strategy}))

    ran = helix(home, "run", "six times seven", "--blueprint", str(blueprint), "--dir", str(world))
    assert ran.returncode == 0, ran.stderr
    assert (world / "answer.txt").read_text() == "42\n"
    said = " ".join(ran.stdout.split())  # the terminal's view, unwrapped
    assert "branched 3 ways at turn 0: run_" in said
    assert "(judged by command: grep -qx 42 answer.txt)" in said
    assert said.count("completed: score 0") == 2
    assert said.count("completed: score 1") == 1
    assert "the best score of 3 branches (1)" in said

    listed = [json.loads(line) for line in helix(home, "runs", "--json").stdout.splitlines()]
    (root,) = [r["id"] for r in listed if r["parent"] is None]  # the branches are its forks
    assert len(listed) == 4
    shown = helix(home, "show", root)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert (
        "strategy   tree of thoughts at turn 0, judged by command: grep -qx 42 answer.txt" in text
    )
    rows = [line for line in text.splitlines() if line.startswith("  branch ")]
    assert len(rows) == 3
    assert sorted(r.split()[4] for r in rows) == ["0", "0", "1"]  # the scores
    (kept,) = [r for r in rows if r.endswith("kept")]
    assert "completed  score 1  kept" in kept
    assert "  chosen   run_" in text

    data = json.loads(helix(home, "show", root, "--json").stdout)
    tree = data["strategy"]
    assert tree["decided"] is True
    assert [b["score"] for b in tree["branches"] if b["run_id"] == tree["kept"]] == [1.0]


@pytest.mark.parametrize(
    ("strategy", "message"),
    [
        (
            "{kind: tree_of_thoughts, branches: 1, judge: {command: 'true'}}",
            "greater than or equal to 2",
        ),
        ("{kind: tree_of_thoughts, judge: {oracle: yes}}", "unknown judge"),
        (
            "{kind: tree_of_thoughts, judge: {kind: command}}",
            "judge.command.command: Field required",
        ),
        ("{kind: tree_of_thoughts}", "strategy.tree_of_thoughts.judge: Field required"),
        ("{kind: ponder}", "Input tag 'ponder'"),
    ],
)
def test_a_bad_strategy_is_a_usage_error_and_starts_nothing(
    tmp_path: Path, strategy: str, message: str
) -> None:
    home = tmp_path / "home"
    blueprint = tmp_path / "bad.yaml"
    blueprint.write_text(f"model: scripted:nowhere.json\nstrategy: {strategy}\n")
    result = helix(home, "run", "x", "--blueprint", str(blueprint), "--dir", str(tmp_path))
    assert result.returncode == 2, result.stderr
    assert f"{blueprint}: strategy" in result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert helix(home, "runs", "--json").stdout == ""


def test_schema_events_lists_the_strategy_events(tmp_path: Path) -> None:
    result = helix(tmp_path / "home", "schema", "events")
    assert result.returncode == 0, result.stderr
    mapping = json.loads(result.stdout)["discriminator"]["mapping"]
    for kind in ("strategy.branched", "strategy.scored", "strategy.chosen"):
        assert kind in mapping
