"""``helix policy replay`` as a real process: a candidate policy over the demo's log."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from .test_cli import _demo_runs, helix


def _tree(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``root``: its content hash and modification time."""
    return {
        str(path.relative_to(root)): (
            hashlib.sha256(path.read_bytes()).hexdigest(),
            path.stat().st_mtime_ns,
        )
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store with the demo's runs, shared: replaying changes nothing (a test checks)."""
    return tmp_path_factory.mktemp("policy") / "home"


@pytest.fixture(scope="module")
def demo(home: Path) -> str:
    """The demo's original run (the fork it makes is the workspace's second run)."""
    return str(_demo_runs(home)[0]["id"])


def test_a_stricter_policy_reports_the_calls_it_would_stop_and_runs_nothing(
    home: Path, demo: str, tmp_path: Path
) -> None:
    policy = tmp_path / "strict.yaml"
    policy.write_text(
        "policy: {deny_tools: [run_command]}\n"
        "approvals:\n  rules: [{tool: write_file, action: ask}]\n"
    )
    (world,) = (home / "demo").iterdir()
    files_before = _tree(world)
    log_before = helix(home, "export", demo).stdout
    runs_before = helix(home, "runs", "--json").stdout

    result = helix(home, "policy", "replay", demo, "--policy", str(policy))
    assert result.returncode == 0, result.stderr
    assert f"{demo}: 4 calls judged, 3 stricter, 0 looser" in result.stdout
    table = result.stdout.splitlines()
    (build,) = [line for line in table if "mkdir -p build" in line]
    assert "ask → allowed by user:demo, ran" in build
    assert "deny (ceiling)" in build
    assert sum("ask (approval)" in line and "write_file" in line for line in table) == 2

    found = _lines(helix(home, "policy", "replay", demo, "--policy", str(policy), "--json").stdout)
    *differences, summary = found
    assert summary == {
        "kind": "summary", "run_id": demo, "calls": 4, "stricter": 3, "looser": 0, "unjudged": 0,
    }  # fmt: skip
    command = next(d for d in differences if d["tool"] == "run_command")
    assert command["args"] == {"command": "mkdir -p build && wc -l notes/todo.md > build/lines.txt"}
    assert command["logged"] == "ask"
    assert command["approval"] == {"decision": "allow", "by": "user:demo", "auto": False}
    assert command["candidate"] == "deny"
    assert command["candidate_gate"] == "ceiling"
    assert command["change"] == "stricter"
    writes = [d for d in differences if d["tool"] == "write_file"]
    assert [(d["logged"], d["candidate"], d["ran"]) for d in writes] == [("allow", "ask", True)] * 2

    # Nothing was executed and nothing was written: the world and the log are as they were.
    assert _tree(world) == files_before
    assert helix(home, "export", demo).stdout == log_before
    assert helix(home, "runs", "--json").stdout == runs_before


def test_the_runs_own_policy_changes_nothing_and_a_looser_one_says_so(
    home: Path, demo: str, tmp_path: Path
) -> None:
    same = tmp_path / "same.toml"
    same.write_text("[approvals]\nrules = []\n")
    found = _lines(helix(home, "policy", "replay", demo, "--policy", str(same), "--json").stdout)
    assert found == [
        {"kind": "summary", "run_id": demo, "calls": 4, "stricter": 0, "looser": 0, "unjudged": 0}
    ]
    loose = tmp_path / "loose.json"
    loose.write_text(json.dumps({"approvals": {"rules": [{"tool": "*", "action": "allow"}]}}))
    looser, summary = _lines(
        helix(home, "policy", "replay", demo, "--policy", str(loose), "--json").stdout
    )
    assert (looser["tool"], looser["logged"], looser["candidate"]) == (
        "run_command",
        "ask",
        "allow",
    )
    assert looser["change"] == "looser"
    # The catastrophic command stays denied: approval rules cannot loosen the commands gate.
    assert summary["looser"] == 1


def test_a_workspace_replay_judges_each_call_once(home: Path, demo: str, tmp_path: Path) -> None:
    policy = tmp_path / "strict.yaml"
    policy.write_text("approvals:\n  rules: [{tool: write_file, action: ask}]\n")
    found = _lines(
        helix(
            home, "policy", "replay", "--workspace", "default", "--policy", str(policy), "--json"
        ).stdout
    )
    summaries = [line for line in found if line["kind"] == "summary"]
    assert summaries[0]["run_id"] == demo  # oldest first
    # The fork inherits turn 1's two writes; they are judged once, in the original.
    assert [(s["calls"], s["stricter"]) for s in summaries] == [(4, 2), (1, 1)]
    # Alone, the fork is judged on its whole history: its parent's turn 1, then its own
    # call (whose id, call_0_0, its model reused from the parent's first call).
    fork = summaries[1]["run_id"]
    alone = _lines(
        helix(home, "policy", "replay", str(fork), "--policy", str(policy), "--json").stdout
    )
    *differences, summary = alone
    assert [(d["run_id"], d["call_id"], d["args"]["path"]) for d in differences] == [
        (demo, "call_0_0", "notes/todo.md"),
        (demo, "call_0_1", "README.md"),
        (fork, "call_0_0", "README.md"),
    ]
    assert (summary["calls"], summary["stricter"]) == (3, 3)
    empty = helix(home, "policy", "replay", "--workspace", "nobody", "--policy", str(policy))
    assert empty.returncode == 0
    assert "no runs to judge" in empty.stdout


@pytest.mark.parametrize(
    ("text", "name", "message"),
    [
        (None, "missing.yaml", "cannot read the policy"),
        ("policy: [unclosed\n", "bad.yaml", "does not parse"),
        ("policy: {deny_tool: [run_command]}\n", "typo.yaml", "policy.deny_tool: unknown field"),
        ("ceiling: {}\n", "section.yaml", "ceiling: unknown field"),
        ("approvals: {rules: [{tool: x, action: maybe}]}\n", "verdict.yaml", "approvals.rules.0"),
        ("policy = 1\n", "policy.ini", "unknown policy format"),
        ("{}\n", "empty.yaml", "the policy is empty"),
    ],
)
def test_a_bad_policy_file_is_a_usage_error(
    home: Path, demo: str, tmp_path: Path, text: str | None, name: str, message: str
) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    result = helix(home, "policy", "replay", demo, "--policy", str(path))
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unknown_run_exits_3_and_a_missing_target_2(home: Path, tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("policy: {deny_tools: [run_command]}\n")
    unknown = helix(home, "policy", "replay", "run_nope", "--policy", str(policy))
    assert unknown.returncode == 3
    assert "run_nope" in unknown.stderr
    neither = helix(home, "policy", "replay", "--policy", str(policy))
    assert neither.returncode == 2
    both = helix(home, "policy", "replay", "r", "--workspace", "w", "--policy", str(policy))
    assert both.returncode == 2
    no_policy = helix(home, "policy", "replay", "run_nope")
    assert no_policy.returncode == 2
    assert "--policy" in no_policy.stderr
