"""Every command that takes RUN takes a unique prefix or ``last``, and says ids in full.

An unknown prefix is not found (exit 3), an ambiguous one a usage error (exit 2) that
lists the candidates; both before anything is done.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_cli import helix

COMMANDS: list[list[str]] = [
    ["show", "RUN"], ["logs", "RUN"], ["replay", "RUN"], ["export", "RUN"],
    ["files", "RUN"], ["diff", "RUN"], ["rollback", "RUN", "--to", "start"],
    ["compare", "RUN", "RUN"], ["keep", "RUN", "--yes"],
    ["fork", "RUN", "--turn", "0", "--detach"],
    ["policy", "replay", "RUN", "--policy", "POLICY"],
    ["approve", "RUN"], ["deny", "RUN"], ["steer", "RUN", "hello"],
    ["pause", "RUN"], ["resume", "RUN"], ["cancel", "RUN"],
]  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with the demo's two runs, and two copies named run_abc1 and run_abc2."""
    home = tmp_path_factory.mktemp("ids") / "home"
    assert helix(home, "demo").returncode == 0
    original = json.loads(helix(home, "runs", "--json").stdout.splitlines()[-1])["id"]
    exported = helix(home, "export", original).stdout
    for name in ("run_abc1", "run_abc2"):
        made = helix(home, "import", "-", "--as", name, stdin=exported)
        assert made.returncode == 0, made.stderr
    (home / "policy.yaml").write_text("policy:\n  deny_tools: [run_command]\n")
    return home


def _args(template: list[str], ref: str, home: Path) -> list[str]:
    return [ref if a == "RUN" else str(home / "policy.yaml") if a == "POLICY" else a
            for a in template]  # fmt: skip


@pytest.mark.parametrize("template", COMMANDS, ids=lambda t: "-".join(t[:2]))
def test_an_unknown_or_ambiguous_run_is_refused_before_anything_is_done(
    store: Path, template: list[str]
) -> None:
    before = helix(store, "export", "run_abc1").stdout
    unknown = helix(store, *_args(template, "zzzz", store))
    assert unknown.returncode == 3, unknown.stderr
    assert "error: run 'zzzz' does not exist" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    ambiguous = helix(store, *_args(template, "abc", store))
    assert ambiguous.returncode == 2, ambiguous.stderr
    assert "error: run id 'abc' is ambiguous: it starts run_abc1, run_abc2" in ambiguous.stderr
    assert ambiguous.stdout == ""
    assert helix(store, "export", "run_abc1").stdout == before  # nothing was appended


def test_prefixes_and_last_work_and_ids_come_back_in_full(store: Path) -> None:
    listed = [json.loads(line) for line in helix(store, "runs", "--json").stdout.splitlines()]
    newest = listed[0]["id"]
    assert json.loads(helix(store, "show", "last", "--json").stdout)["id"] == newest
    for ref in (newest[:8], newest[4:10], newest):
        shown = helix(store, "show", ref, "--json")
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["id"] == newest
    # Logs and exports carry full ids, never the prefix typed.
    logged = [
        json.loads(line) for line in helix(store, "logs", "abc2", "--json").stdout.splitlines()
    ]
    assert {e["run_id"] for e in logged[1:]} == {"run_abc2"}
    assert '"run_id":"run_abc2"' in helix(store, "export", "abc2").stdout.splitlines()[-1]
    compared = helix(store, "compare", "abc1", "abc2", "--json")
    assert [r["id"] for r in json.loads(compared.stdout)["runs"]] == ["run_abc1", "run_abc2"]
    rolled = helix(store, "rollback", "abc1", "--to", "start")
    assert rolled.returncode == 0, rolled.stderr
    assert rolled.stdout.startswith("rolled run_abc1 back to its start")
    forked = helix(store, "fork", "abc2", "--turn", "1", "--detach", "--json")
    assert forked.returncode == 0, forked.stderr
    parent = json.loads(forked.stdout)["parent"]
    assert (parent["run_id"], parent["turn"]) == ("run_abc2", 1)
    judged = helix(store, "policy", "replay", "abc1", "--policy", str(store / "policy.yaml"))
    assert judged.returncode == 0, judged.stderr
    assert judged.stdout.startswith("run_abc1: ")
    replayed = helix(store, "replay", "last", "--json")
    assert replayed.returncode == 0, replayed.stderr


def test_runs_prints_short_ids_times_and_fork_marks(store: Path) -> None:
    listed = [json.loads(line) for line in helix(store, "runs", "--json").stdout.splitlines()]
    assert all(r["created_at"].endswith("Z") for r in listed)  # ISO for scripts
    fork = next(r for r in listed if r["parent"] is not None and r["id"].startswith("run_"))
    table = helix(store, "runs").stdout.splitlines()
    assert table[0].split() == [
        "ID", "STATUS", "TURNS", "COST", "CREATED", "UPDATED", "OBJECTIVE",
    ]  # fmt: skip
    (row,) = [line for line in table if line.startswith(fork["id"][:12])]
    assert fork["id"] not in row
    parent = fork["parent"]
    assert f"↳ {parent['run_id'][:12]}@t{parent['turn']}" in row
    assert " ago " in row
    copy = next(line for line in table if line.startswith("run_abc1 "))
    assert "completed" in copy
    assert "(driven)" not in copy  # an ended run has nothing to drive


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rollback", "abc1", "--to", "banana"], "'banana' is not a point of a run"),
        (["rollback", "abc1", "--to", "²"], "'²' is not a point of a run"),
        (["rollback", "abc1", "--to", "now"], "--to takes start or a turn number"),
        (["files", "abc1", "--turn", "-1"], "is not a point of a run"),
        (["diff", "abc1", "--from", "³"], "is not a point of a run"),
        (["fork", "abc1", "--turn", "banana"], ""),  # Click says so, in its own words
        (["import", "-", "--as", "last"], "names the newest run"),
    ],
)
def test_bad_points_are_usage_errors(store: Path, args: list[str], message: str) -> None:
    stdin = helix(store, "export", "abc1").stdout if args[0] == "import" else None
    result = helix(store, *args, stdin=stdin)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_seq_past_any_log_reads_as_the_end(store: Path) -> None:
    result = helix(store, "logs", "abc1", "--after", str(10**30))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
