"""The CLI goes through one door (``helix.api``), chosen once: no mode branches in cli/."""

from __future__ import annotations

import json
from pathlib import Path

from .test_cli import helix

CLI = Path(__file__).resolve().parents[2] / "src" / "helix" / "cli"


def test_no_command_asks_which_mode_it_is_in() -> None:
    """Commands call ``door.api``; only ``_door.py`` knows a server from a store."""
    for path in sorted(CLI.glob("*.py")):
        text = path.read_text()
        for needle in ("connected()", "Remote(", "ServerClient", "record_of(", 'HELIX_SERVER")'):
            assert needle not in text, f"{path.name}: {needle}"
    assert not (CLI / "_remote.py").exists()
    assert not (CLI / "_client.py").exists()


def test_spend_adds_up_the_demos_model_calls(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert helix(home, "demo").returncode == 0
    by_model = helix(home, "spend", "--json")
    assert by_model.returncode == 0, by_model.stderr
    *rows, total = (json.loads(line) for line in by_model.stdout.splitlines())
    assert total["total"] is True
    assert total["runs"] == 2  # the demo's run and its fork
    assert [row["model"] for row in rows] == ["openai:scripted-demo"]
    assert rows[0]["input_tokens"] == total["input_tokens"] > 0
    table = helix(home, "spend", "--by", "blueprint")
    assert table.returncode == 0, table.stderr
    assert "total (2 runs)" in table.stdout
    per_workspace = helix(home, "spend", "--by", "workspace", "--json")
    by_workspace = [json.loads(line) for line in per_workspace.stdout.splitlines()]
    assert by_workspace[0]["workspace"] == "default"
    assert by_workspace[0]["input_tokens"] == by_workspace[1]["input_tokens"] > 0
    per_person = helix(home, "spend", "--by", "person", "--json")
    people = {row.get("person"): row for row in map(json.loads, per_person.stdout.splitlines())}
    assert set(people) == {"system", "user:demo", None}  # the demo's run; its fork; total
    assert people["user:demo"]["input_tokens"] > 0  # the fork's own calls, made for user:demo
    wrong = helix(home, "spend", "--by", "colour")
    assert wrong.returncode == 2
    assert "choose model, blueprint, provider, workspace" in wrong.stderr


def test_spend_over_time_and_a_runs_trace(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert helix(home, "demo").returncode == 0
    daily = helix(home, "spend", "--by", "run", "--bucket", "day", "--since", "1d", "--json")
    assert daily.returncode == 0, daily.stderr
    lines = [json.loads(line) for line in daily.stdout.splitlines()]
    groups = [row for row in lines if "run" in row and "start" not in row]
    points = [row for row in lines if "start" in row]
    assert len(groups) == 2  # the demo's run and its fork, each its own calls
    assert {p["run"] for p in points} == {g["run"] for g in groups}
    assert all(p["start"].endswith("T00:00:00Z") for p in points)
    assert sum(p["input_tokens"] for p in points) == lines[-1]["input_tokens"] > 0
    future = helix(home, "spend", "--since", "2999-01-01", "--json")
    assert json.loads(future.stdout.splitlines()[-1])["input_tokens"] == 0
    for bad in (["--bucket", "week"], ["--since", "someday"]):
        refused = helix(home, "spend", *bad)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.startswith("error: ")
        assert "Traceback" not in refused.stderr

    run_id = groups[0]["run"]
    waterfall = helix(home, "trace", run_id)
    assert waterfall.returncode == 0, waterfall.stderr
    rows = waterfall.stdout.splitlines()
    assert rows[0].startswith("run ")
    assert any(row.startswith("  turn ") for row in rows)
    assert any(row.lstrip().startswith("model openai:scripted-demo") for row in rows)
    assert all("|" in row for row in rows)
    tree = json.loads(helix(home, "trace", run_id, "--json").stdout)
    assert tree["kind"] == "run"
    assert tree["run_id"] == run_id
    missing = helix(home, "trace", "run_nothing")
    assert missing.returncode != 0
    assert missing.stderr.startswith("error: ")
