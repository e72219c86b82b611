"""Run control from a second ``helix`` process: steer, pause, resume, cancel, budgets."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import pytest

from .conftest import WAIT_S, Helix, of_type, processes_mentioning, types

_UNTIL_GO = "while [ ! -e go ]; do sleep 0.05; done; "
"""A command's start that waits for the test to create ``go`` in the world."""


def _user_texts(request: Any) -> list[str]:
    return [str(m["content"]) for m in request.body["messages"] if m["role"] == "user"]


def test_steering_reaches_the_next_model_call(helix: Helix) -> None:
    helix.play(
        {
            "text": "Looking first.",
            "tool_calls": [{"name": "list_files", "args": {}}],
        },
        {"text": "Indented with tabs."},
    )
    helix.server.hold()  # the first reply waits until the steer is in
    running = helix.start_run("format the code")
    running.wait_for("model.requested")
    steered = helix("steer", running.run_id, "use tabs")
    helix.server.release()
    assert steered.returncode == 0, steered.stderr
    assert running.finish() == 0, running.stderr

    log = helix.logs(running.run_id)
    (received,) = of_type(log, "steer.received")
    assert received["data"]["message"] == "use tabs"
    assert received["actor"] == "user:tester"
    first_reply = of_type(log, "model.responded")[0]
    assert received["seq"] < first_reply["seq"]  # it arrived while the model was busy
    first, second = helix.model_requests
    assert "use tabs" not in _user_texts(first)
    assert _user_texts(second)[-1] == "use tabs"
    # It comes after the tool result, right before the call it was delivered to.
    assert second.body["messages"][-1] == {"role": "user", "content": "use tabs"}
    assert second.body["messages"][-2]["role"] == "tool"


def test_pause_holds_the_run_until_it_is_resumed(helix: Helix) -> None:
    helix.play(
        {
            "text": "Looking first.",
            "tool_calls": [{"name": "list_files", "args": {}}],
        },
        {"text": "All done."},
    )
    helix.server.hold()  # the first reply waits until the run is paused
    running = helix.start_run("look around", "--wait")  # waits at the pause for a resume
    running.wait_for("model.requested")
    paused = helix("pause", running.run_id)
    assert paused.returncode == 0, paused.stderr
    running.wait_for("run.paused")
    helix.server.release()
    running.wait_for("model.responded")  # the call in flight finishes; nothing follows
    time.sleep(0.5)
    assert len(helix.model_requests) == 1
    log = helix.logs(running.run_id)
    assert types(log)[-2:] == ["run.paused", "model.responded"]  # paused while it worked
    assert not of_type(log, "tool.requested")  # the reply's call waits too

    again = helix("pause", running.run_id)
    assert again.returncode == 1
    assert "already paused" in again.stderr

    resumed = helix("resume", running.run_id)
    assert resumed.returncode == 0, resumed.stderr
    assert "another process is driving it" in resumed.stdout
    assert running.finish() == 0, running.stderr
    log = helix.logs(running.run_id)
    assert types(log)[-1] == "run.completed"
    assert len(of_type(log, "run.resumed")) == 1
    assert len(helix.model_requests) == 2


def test_cancel_kills_a_running_command(helix: Helix) -> None:
    # The command would sleep five minutes, then leave a file: if the file never
    # appears and the process is gone, the cancel killed it (however busy the machine).
    marker = "300.4321"
    command = f"sleep {marker}; touch late.txt"
    helix.play(
        {
            "text": "Waiting.",
            "tool_calls": [{"name": "run_command", "args": {"command": command}}],
        },
        {"text": "never asked for"},
    )
    running = helix.start_run("wait a while", "--auto-approve")
    running.wait_for("tool.started")
    _wait_until(lambda: bool(processes_mentioning(marker)), "the command never started")

    cancelled = helix("cancel", running.run_id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert running.finish() == 1
    try:
        _wait_until(lambda: not processes_mentioning(marker), "the command outlived the cancel")
    finally:
        for pid in processes_mentioning(marker):
            os.kill(pid, 9)
    assert not (helix.world / "late.txt").exists()

    log = helix.logs(running.run_id)
    assert helix.show(running.run_id)["status"] == "cancelled"
    (completed,) = of_type(log, "tool.completed")
    assert completed["data"]["ok"] is False
    assert "cancelled" in completed["data"]["output"]
    assert of_type(log, "run.cancelled")
    assert not of_type(log, "run.completed")
    assert len(helix.model_requests) == 1

    again = helix("cancel", running.run_id)
    assert again.returncode == 1
    assert "cancelled" in again.stderr


def test_a_budget_pauses_before_the_call_that_would_pass_it(helix: Helix) -> None:
    # gpt-4.1: $2 per million input tokens, $8 per million output. The first call is
    # projected at about $0.033 (4,096 output tokens at most); it reports 5,000 input
    # tokens ($0.01), so the second, projected the same, would pass a $0.04 cap.
    helix.play(
        {
            "text": "Looking.",
            "tool_calls": [{"name": "list_files", "args": {}}],
            "usage": {"input_tokens": 5000, "output_tokens": 10},
        },
        {"text": "Done within budget.", "usage": {"input_tokens": 5100, "output_tokens": 5}},
    )
    running = helix.start_run("look around", "--budget", "0.04", "--wait")
    exceeded = running.wait_for("budget.exceeded")
    running.wait_for("run.paused", lambda e: e["data"]["reason"] == "budget")
    assert exceeded["data"]["cap_usd"] == 0.04
    assert 0.0100 <= exceeded["data"]["spent_usd"] <= 0.0101
    time.sleep(0.5)
    assert len(helix.model_requests) == 1  # the call was never made
    log = helix.logs(running.run_id)
    assert len(of_type(log, "model.requested")) == 1
    assert types(log)[-2:] == ["budget.exceeded", "run.paused"]
    assert helix.show(running.run_id)["status"] == "paused"

    refused = helix("resume", running.run_id)  # resuming without raising the cap
    assert refused.returncode == 1
    assert "budget cap" in refused.stderr
    assert "--budget" in refused.stderr

    resumed = helix("resume", running.run_id, "--budget", "5")
    assert resumed.returncode == 0, resumed.stderr
    assert running.finish() == 0, running.stderr
    log = helix.logs(running.run_id)
    (raised,) = of_type(log, "run.resumed")
    assert raised["data"]["budget"]["usd"] == 5
    assert types(log)[-1] == "run.completed"
    assert len(helix.model_requests) == 2


def test_a_pause_lets_the_running_call_finish_and_starts_no_other(helix: Helix) -> None:
    helix.play(
        {
            "text": "Two things.",
            "tool_calls": [
                {"name": "run_command", "args": {"command": _UNTIL_GO + "echo x >> first.txt"}},
                {"name": "write_file", "args": {"path": "second.txt", "content": "2\n"}},
            ],
        },
        {"text": "Both done."},
    )
    running = helix.start_run("two things", "--auto-approve", "--wait")
    running.wait_for("tool.started")
    assert helix("pause", running.run_id).returncode == 0
    running.wait_for("run.paused")
    (helix.world / "go").touch()  # only now may the running command finish
    running.wait_for("tool.completed")
    time.sleep(0.5)
    assert (helix.world / "first.txt").read_text() == "x\n"  # the running call finished
    assert not (helix.world / "second.txt").exists()  # the next one waits for the resume
    log = helix.logs(running.run_id)
    assert types(log)[-2:] == ["run.paused", "tool.completed"]
    assert len(of_type(log, "tool.started")) == 1

    assert helix("resume", running.run_id).returncode == 0
    assert running.finish() == 0, running.stderr
    assert (helix.world / "second.txt").read_text() == "2\n"
    assert (helix.world / "first.txt").read_text() == "x\n"
    assert len(helix.model_requests) == 2


@pytest.mark.parametrize("decider", ["person", "deadline"])
def test_a_decision_on_a_paused_run_leaves_it_paused(helix: Helix, decider: str) -> None:
    helix.play(
        {
            "text": "Making it.",
            "tool_calls": [{"name": "run_command", "args": {"command": "touch made.txt"}}],
        },
        {"text": "Finished."},
    )
    blueprint = helix.tmp / "bp.yaml"
    # The deadline must fall after the pause lands; a `helix pause` on a busy machine
    # can take seconds, so it gets a margin (the test waits for events, not for time).
    timeout_s = 12 if decider == "deadline" else 600
    blueprint.write_text(f"approvals: {{timeout_s: {timeout_s}}}\n")
    running = helix.start_run("make a file", "--blueprint", str(blueprint), "--wait")
    running.wait_for("approval.requested")
    assert helix("pause", running.run_id).returncode == 0
    if decider == "person":
        approved = helix("approve", running.run_id)
        assert approved.returncode == 0, approved.stderr
    running.wait_for("run.paused")
    decided = running.wait_for("approval.decided")
    assert decided["data"]["auto"] is (decider == "deadline")
    time.sleep(0.5)
    assert not (helix.world / "made.txt").exists()
    assert helix.show(running.run_id)["status"] == "paused"
    log = helix.logs(running.run_id)
    assert types(log)[-3:] == ["run.paused", "approval.decided", "run.paused"]
    assert not of_type(log, "tool.started")
    assert not of_type(log, "tool.completed")

    assert helix("resume", running.run_id).returncode == 0
    assert running.finish() == 0, running.stderr
    # Approved, the command runs once the run is resumed; denied, it never does.
    assert (helix.world / "made.txt").exists() is (decider == "person")


def test_cancel_does_not_wait_for_the_model(helix: Helix) -> None:
    # The reply would take minutes: a run that ends at all has not waited for it.
    helix.play({"text": "Too late.", "delay_s": 600.0})
    running = helix.start_run("think hard")
    running.wait_for("model.requested")
    helix.wait_for_requests(1)
    assert helix("cancel", running.run_id).returncode == 0
    assert running.finish() == 1
    log = helix.logs(running.run_id)
    assert types(log)[-1] == "run.cancelled"  # no reply recorded after the end
    assert not of_type(log, "model.responded")


def _wait_until(condition: Callable[[], bool], failure: str) -> None:
    """Poll ``condition`` until it holds; fail with ``failure`` past the safety net."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(failure)
        time.sleep(0.05)
