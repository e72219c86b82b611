"""``helix budgets``, run as a real process on the embedded database: a budget set here
pauses a run driven here, ``helix show`` and ``helix logs`` say why, a raise resumes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .test_cli import helix


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_a_token_budget_pauses_a_run_here_until_raised(home: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("steps: [{text: done}]\n")
    set_ = helix(home, "budgets", "set", "--period", "day", "--tokens", "50")
    assert set_.returncode == 0, set_.stderr
    assert set_.stdout.splitlines()[0].startswith("workspace:default  day (from ")
    assert "0 of 50, 50 left" in set_.stdout

    world = tmp_path / "world"
    world.mkdir()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("HELIX_")}
    running = subprocess.Popen(
        [sys.executable, "-m", "helix", "run", "say done", "--model", f"scripted:{script}",
         "--dir", str(world), "--wait"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**environment, "HELIX_HOME": str(home)},
    )  # fmt: skip
    try:
        assert running.stdout is not None
        said: list[str] = []
        while not said or said[-1] not in ("", "! paused (budget)\n"):  # until it waits
            said.append(running.stdout.readline())
        assert "! budget reached: workspace:default's day budget: 0 of 50 tokens\n" in said
        resumed = _paused_then_raised(home)
        out, err = running.communicate(timeout=120)
        assert running.returncode == 0, (out, err)
        assert "resumed: another process is driving it" in resumed.stdout
    finally:
        if running.poll() is None:
            running.kill()
            running.communicate()
    assert json.loads(helix(home, "show", "last", "--json").stdout)["status"] == "completed"
    listed = helix(home, "budgets", "list", "--json")
    (usage,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert usage["scope"] == "workspace:default"
    assert usage["spent_tokens"] > 0
    assert usage["reserved_tokens"] == 0
    assert "tokens  [" in helix(home, "budgets", "list").stdout


def _paused_then_raised(home: Path) -> subprocess.CompletedProcess[str]:
    """While ``helix run`` waits at the budget: show and logs say why; raise it; resume."""
    shown = helix(home, "show", "last")
    assert shown.returncode == 0, shown.stderr
    assert (
        "paused     budget: workspace:default's day budget: 0 of 50 tokens (raise it with"
        " helix budgets set, then helix resume run_"
    ) in shown.stdout
    logs = helix(home, "logs", "last")
    assert "workspace:default's day budget: 0 of 50 tokens" in logs.stdout

    raised = helix(home, "budgets", "set", "--period", "day", "--tokens", "100000", "--json")
    assert json.loads(raised.stdout)["budget"]["tokens"] == 100000
    resumed = helix(home, "resume", "last")
    assert resumed.returncode == 0, resumed.stderr
    return resumed


def test_bad_budget_commands_say_why(home: Path) -> None:
    week = helix(home, "budgets", "set", "--period", "week", "--usd", "1")
    assert (week.returncode, "choose day or month" in week.stderr) == (2, True)
    negative = helix(home, "budgets", "set", "--usd", "-1")
    assert negative.returncode == 2
    assert "a cap is 0 or more" in negative.stderr
    nothing = helix(home, "budgets", "set", "--person", "ann")
    assert nothing.returncode == 2
    assert "give a cap" in nothing.stderr
    both = helix(home, "budgets", "set", "--person", "ann", "--blueprint", "b", "--usd", "1")
    assert both.returncode == 2
    assert "not both" in both.stderr
    missing = helix(home, "budgets", "remove", "--blueprint", "coder")
    assert missing.returncode == 3
    assert "no month budget for blueprint:coder" in missing.stderr
    for result in (week, negative, nothing, both, missing):
        assert "Traceback" not in result.stderr
    assert helix(home, "budgets", "list").stdout.strip() == "no budgets in default"
