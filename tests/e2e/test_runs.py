"""Runs from start to end through the real ``helix`` command: tools, approvals, deadlines."""

from __future__ import annotations

import json
from typing import Any

from .conftest import MODEL, Helix, of_type, types


def _messages(request: Any) -> list[dict[str, Any]]:
    messages = request.body["messages"]
    assert isinstance(messages, list)
    return messages


def _tool_results(request: Any) -> list[str]:
    return [str(m["content"]) for m in _messages(request) if m["role"] == "tool"]


def test_a_plain_run_writes_a_file_and_completes(helix: Helix) -> None:
    helix.play(
        {
            "text": "Writing it.",
            "tool_calls": [
                {"name": "write_file", "args": {"path": "notes/hello.txt", "content": "hi\n"}}
            ],
        },
        {"text": "Wrote notes/hello.txt."},
    )
    result = helix("run", "write hello", "--model", MODEL, "--dir", str(helix.world), "--json")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    run_id = printed[0]["run_id"]
    assert (helix.world / "notes" / "hello.txt").read_text() == "hi\n"

    log = helix.logs(run_id)
    assert log == printed  # the foreground run printed its whole log
    assert [e["seq"] for e in log] == list(range(len(log)))
    (changed,) = of_type(log, "file.changed")
    assert changed["data"]["path"] == "notes/hello.txt"
    assert changed["data"]["op"] == "create"
    (done,) = of_type(log, "run.completed")
    assert done["data"]["summary"] == "Wrote notes/hello.txt."
    assert types(log)[-1] == "run.completed"
    shown = helix.show(run_id)
    assert shown["status"] == "completed"

    first, second = helix.model_requests
    assert first.api_key == "test-key"
    assert _messages(first)[-1] == {"role": "user", "content": "write hello"}
    assert _tool_results(second) == ["created notes/hello.txt (3 bytes)"]


def _asks_to_touch(helix: Helix) -> None:
    helix.play(
        {
            "text": "Making it.",
            "tool_calls": [{"name": "run_command", "args": {"command": "touch made.txt"}}],
        },
        {"text": "Finished."},
    )


def test_an_approval_from_another_process_lets_the_command_run(helix: Helix) -> None:
    _asks_to_touch(helix)
    running = helix.start_run("make a file")
    asked = running.wait_for("approval.requested")
    assert asked["data"]["args"] == {"command": "touch made.txt"}
    assert not (helix.world / "made.txt").exists()

    approved = helix("approve", running.run_id)
    assert approved.returncode == 0, approved.stderr
    assert asked["data"]["request_id"] in approved.stdout
    assert running.finish() == 0, running.stderr
    assert (helix.world / "made.txt").exists()

    log = helix.logs(running.run_id)
    (decided,) = of_type(log, "approval.decided")
    assert decided["data"]["decision"] == "allow"
    assert decided["data"]["by"] == "user:tester"
    assert decided["data"]["auto"] is False
    (completed,) = of_type(log, "tool.completed")
    assert completed["data"]["ok"] is True
    assert types(log)[-1] == "run.completed"


def test_a_denial_goes_back_to_the_model_as_the_tool_result(helix: Helix) -> None:
    _asks_to_touch(helix)
    running = helix.start_run("make a file")
    running.wait_for("approval.requested")

    denied = helix("deny", running.run_id, "--reason", "no")
    assert denied.returncode == 0, denied.stderr
    assert running.finish() == 0, running.stderr
    assert not (helix.world / "made.txt").exists()

    log = helix.logs(running.run_id)
    (decided,) = of_type(log, "approval.decided")
    assert decided["data"]["decision"] == "deny"
    assert not of_type(log, "tool.started")
    (completed,) = of_type(log, "tool.completed")
    assert completed["data"]["ok"] is False
    assert len(helix.model_requests) == 2
    last = _messages(helix.server.requests[-1])
    tool_result = last[-1]
    assert tool_result["role"] == "tool"
    assert tool_result["content"] == "denied by user:tester: no"
    assert types(log)[-1] == "run.completed"


def test_an_unanswered_approval_is_denied_at_its_deadline(helix: Helix) -> None:
    blueprint = helix.tmp / "quick.yaml"
    blueprint.write_text("approvals:\n  timeout_s: 1\n")
    _asks_to_touch(helix)
    running = helix.start_run("make a file", "--blueprint", str(blueprint))
    assert running.finish() == 0, running.stderr
    assert not (helix.world / "made.txt").exists()

    log = helix.logs(running.run_id)
    (asked,) = of_type(log, "approval.requested")
    (decided,) = of_type(log, "approval.decided")
    assert decided["data"]["request_id"] == asked["data"]["request_id"]
    assert decided["data"]["decision"] == "deny"
    assert decided["data"]["auto"] is True
    assert decided["data"]["by"] == "system"
    assert types(log)[-1] == "run.completed"
    tool_result = _messages(helix.server.requests[-1])[-1]
    assert tool_result["role"] == "tool"
    assert "denied automatically" in tool_result["content"]
    assert "deadline" in tool_result["content"]


def test_a_delegated_sub_task_runs_as_a_child_and_reports_back(helix: Helix) -> None:
    # One mock model serves both: the parent waits in its delegate call meanwhile.
    helix.play(
        {
            "text": "Handing it over.",
            "tool_calls": [{"name": "delegate", "args": {"objective": "write hello.txt"}}],
        },
        {
            "text": "Writing it.",
            "tool_calls": [{"name": "write_file", "args": {"path": "hello.txt", "content": "hi"}}],
        },
        {"text": "Wrote hello.txt."},
        {"text": "The worker wrote it."},
    )
    result = helix(
        "run", "get hello written", "--model", MODEL, "--dir", str(helix.world), "--json"
    )
    assert result.returncode == 0, result.stderr
    run_id = json.loads(result.stdout.splitlines()[0])["run_id"]
    log = helix.logs(run_id)
    (spawned,) = of_type(log, "agent.spawned")
    (reported,) = of_type(log, "agent.reported")
    child = spawned["data"]["child_run_id"]
    assert reported["data"]["report"] == "Wrote hello.txt."
    assert (helix.world / "hello.txt").read_text() == "hi"
    assert helix.show(child)["status"] == "completed"
    assert helix.show(run_id)["status"] == "completed"
    child_first = _messages(helix.model_requests[1])
    assert child_first[-1] == {"role": "user", "content": "write hello.txt"}  # a fresh start
    assert "Wrote hello.txt." in _tool_results(helix.model_requests[3])[0]
