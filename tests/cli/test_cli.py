"""The ``helix`` command, run as a real process: output and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def helix(
    home: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("HELIX_")}
    environment = {**inherited, "HELIX_HOME": str(home), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "helix", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _demo_runs(home: Path) -> list[dict[str, object]]:
    """The demo's runs, its original first (then the fork it makes)."""
    assert helix(home, "demo").returncode == 0
    return _runs(home)


def _runs(home: Path) -> list[dict[str, object]]:
    """Every run in the store, the ones that are not forks first."""
    listed = helix(home, "runs", "--json")
    assert listed.returncode == 0
    runs = [json.loads(line) for line in listed.stdout.splitlines()]
    return sorted(runs, key=lambda r: r["parent"] is not None)


def test_help_lists_the_commands(home: Path) -> None:
    result = helix(home, "--help")
    assert result.returncode == 0
    for command in ("demo", "runs", "logs", "replay", "fork", "bench", "schema"):
        assert command in result.stdout


def test_demo_runs_a_scripted_agent_through_the_engine(home: Path) -> None:
    result = helix(home, "demo")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "SCRIPTED" in out
    assert "denied by the commands gate" in out
    assert "✗ run_command rm -rf /" in out  # the denial, as one block
    assert "? run_command mkdir -p build" in out  # the ask, then its result
    assert "✓ run_command mkdir -p build && wc -l notes/todo.md > build/lines.txt" in out
    assert "completed · 4 turns" in out
    assert result.stderr == ""
    (world,) = (home / "demo").iterdir()
    assert (world / "notes" / "todo.md").read_text().startswith("# TODO")
    assert (world / "README.md").exists()
    assert (world / "build" / "lines.txt").read_text().split()[0] == "4"
    # It forks the session after turn 1 with another instruction, and replays it.
    assert "fork: the session after turn 1" in out
    assert "replay: " in out
    assert "nothing run again" in out
    (fork_world,) = (home / "worlds").iterdir()
    assert (fork_world / "README.md").read_text().startswith("# Demo project\n\n| file |")
    assert (world / "README.md").read_text() == "# Demo project\n\nNotes live in notes/.\n"
    assert not (fork_world / "build").exists()  # the fork left before the build
    run, fork = _runs(home)
    assert (run["status"], fork["status"]) == ("completed", "completed")
    assert fork["parent"]["run_id"] == run["id"]  # type: ignore[index]


def _forked(home: Path) -> tuple[dict[str, object], dict[str, object]]:
    original = _demo_runs(home)[0]
    made = helix(home, "fork", str(original["id"]), "--turn", "2", "--detach", "--json")
    assert made.returncode == 0, made.stderr
    return original, json.loads(made.stdout)


def test_logs_replay_and_show_agree(home: Path) -> None:
    original, fork = _forked(home)
    logs = helix(home, "logs", str(fork["id"]), "--json")
    assert logs.returncode == 0
    events = [json.loads(line) for line in logs.stdout.splitlines()]
    assert [e["seq"] for e in events] == list(range(len(events)))
    # The fork's own events: its start, then the world it was given (its own copy).
    assert [e["type"] for e in events[-2:]] == ["run.forked", "world.snapshotted"]
    assert events[-2]["data"]["world"].endswith(f"worlds/{fork['id']}")
    assert {e["run_id"] for e in events} == {fork["id"], original["id"]}
    replayed = json.loads(helix(home, "replay", str(fork["id"]), "--json").stdout)
    assert replayed["status"] == "queued"
    assert replayed["head"] == events[-1]["seq"]
    assert replayed["turn"] == 2
    shown = json.loads(helix(home, "show", str(fork["id"]), "--json").stdout)
    assert shown["events"] == len(events)
    partial = json.loads(helix(home, "replay", str(original["id"]), "--to", "5", "--json").stdout)
    assert partial["head"] == 5


def test_logs_follow_stops_when_the_run_has_ended(home: Path) -> None:
    run_id = str(_demo_runs(home)[0]["id"])
    result = helix(home, "logs", run_id, "--follow", "--after", "3")
    assert result.returncode == 0
    assert "run.completed" in result.stdout.splitlines()[-1]


def test_fork_by_turn(home: Path) -> None:
    original, fork = _forked(home)
    assert fork["parent"]["run_id"] == original["id"]  # type: ignore[index]
    assert fork["turns"] == 2
    missing = helix(home, "fork", str(original["id"]), "--turn", "99")
    assert missing.returncode == 1
    assert "no completed turn 99" in missing.stderr


def test_export_then_import_round_trips(home: Path, tmp_path: Path) -> None:
    run_id = str(_demo_runs(home)[0]["id"])
    exported = helix(home, "export", run_id)
    assert exported.returncode == 0
    # The same export again: its id is taken, so the copy gets a fresh one, and says so.
    again = helix(home, "import", "-", "--json", stdin=exported.stdout)
    assert again.returncode == 0, again.stderr
    made = json.loads(again.stdout)
    assert made["original_id"] == run_id
    assert made["id"] != run_id
    assert made["id"].startswith("run_")
    assert f"run {run_id} exists already: imported as {made['id']}" in again.stderr
    assert helix(home, "show", made["id"]).returncode == 0
    assert helix(home, "show", run_id).returncode == 0  # the original is untouched
    # An id asked for is that id or nothing.
    taken = helix(home, "import", "-", "--as", run_id, stdin=exported.stdout)
    assert taken.returncode == 1
    assert "--as NEW_ID" in taken.stderr
    imported = helix(home, "import", "-", "--as", "copy-1", stdin=exported.stdout)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "copy-1"
    copy = helix(home, "export", "copy-1").stdout.splitlines()
    original = exported.stdout.splitlines()
    assert len(copy) == len(original)
    first = json.loads(copy[0])["data"]
    # Re-homed under HELIX_HOME's worlds, never the file's; and never auto-approving.
    world = Path(first["world"])
    assert world.parent == (home / "worlds" / "default").resolve()
    assert world.name.startswith("imported-")
    assert world.is_dir()
    assert first["settings"]["auto_approve"] is False
    for mine, theirs in zip(copy[1:], original[1:], strict=True):
        a, b = json.loads(mine), json.loads(theirs)
        assert (a["seq"], a["type"], a["ts"], a["data"]) == (
            b["seq"],
            b["type"],
            b["ts"],
            b["data"],
        )


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('{"x": 1}', "string 'type'"),
        ("not json", "line 1"),
        (
            '{"run_id":"r","seq":0,"type":"nope","v":1,"ts":"t","turn":0,"actor":"system","data":{}}',
            "unknown event type",
        ),
        (
            '{"run_id":"r","seq":0,"type":"run.paused","v":1,"ts":"t","turn":0,"actor":"system",'
            '"data":{"reason":7}}',
            "run.paused",
        ),
        (
            '{"run_id":"r","seq":0,"type":"run.started","v":1,"ts":"t","turn":0,"actor":"system",'
            '"data":{}}',
            "starts with run.created",
        ),
        (
            '{"run_id":"r","seq":3,"type":"run.started","v":1,"ts":"t","turn":0,"actor":"system",'
            '"data":{}}',
            "expected seq 0",
        ),
        ("", "empty"),
    ],
)
def test_import_refuses_bad_logs_and_writes_nothing(home: Path, lines: str, message: str) -> None:
    result = helix(home, "import", "-", stdin=lines)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert helix(home, "runs", "--json").stdout == ""


def test_schema_events_is_json_schema(home: Path) -> None:
    result = helix(home, "schema", "events")
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    assert schema["discriminator"]["propertyName"] == "type"
    mapping = schema["discriminator"]["mapping"]
    for event_type in (
        "run.created",
        "tool.completed",
        "gate.decided",
        "turn.ended",
        "model.rejected",
    ):
        assert event_type in mapping


@pytest.mark.parametrize(
    ("args", "env", "code", "message"),
    [
        (["show", "run_missing"], None, 3, "does not exist"),
        (["logs", "run_missing"], None, 3, "does not exist"),
        (["runs"], {"HELIX_DB": "mysql://db"}, 2, "HELIX_DB: invalid store URL"),
        (["runs"], {"HELIX_DB": "sqlite://relative.db"}, 2, "three slashes"),
        (["runs"], {"HELIX_DURABILITY": "maybe"}, 2, "HELIX_DURABILITY"),
        (["runs"], {"HELIX_DB": "sqlite:////proc/no/such/dir/x.db"}, 4, "cannot open"),
        (["runs", "--status", "bogus"], None, 2, "unknown status"),
        (["runs", "--limit", "0"], None, 2, ""),
        (["bench", "nope"], None, 2, "unknown benchmark suite"),
        (["import", "/no/such/file"], None, 2, "cannot read"),
        (["replay", "run_nope", "--to", "-1"], None, 2, "--to"),
        (["replay", "run_nope"], None, 3, "run_nope"),
        (["nonsense"], None, 2, ""),
    ],
)
def test_bad_input_is_a_clear_error(
    home: Path, args: list[str], env: dict[str, str] | None, code: int, message: str
) -> None:
    result = helix(home, *args, env=env)
    assert result.returncode == code, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_unwritable_home_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = helix(blocker / "home", "runs")
    assert result.returncode == 4
    assert "cannot open the SQLite store" in result.stderr
    assert "Traceback" not in result.stderr


def test_bench_quick_prints_contract_json(home: Path, tmp_path: Path) -> None:
    result = helix(home, "bench", "eventlog", "--quick", "--json", "--no-postgres")
    assert result.returncode == 0, result.stderr
    figures = [json.loads(line) for line in result.stdout.splitlines()]
    names = {f["name"] for f in figures}
    assert names >= {
        "append_single",
        "append_batched",
        "replay",
        "fork_latency",
        "fork_bytes",
        "subscriber_latency_p99",
    }
    for figure in figures:
        assert figure["suite"] == "eventlog"
        assert set(figure) >= {"suite", "name", "value", "unit", "params"}
        assert figure["value"] > 0
        if "baseline" in figure:
            assert figure["ratio"] == pytest.approx(figure["value"] / figure["baseline"], rel=1e-2)
    modes = {f["params"].get("mode") for f in figures if f["name"] == "subscriber_latency_p99"}
    assert modes == {"in-process", "cross-process"}
    histories = {f["params"]["history"] for f in figures if f["name"] == "fork_bytes"}
    assert len(histories) == 2
