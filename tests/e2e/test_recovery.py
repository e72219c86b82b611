"""Crashes and kills: the supervisor restarts the loop; a new process resumes the run.

Nothing completed is done again: no model call that was answered, no tool call that
finished.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from typing import Any

from .conftest import Helix, of_type, processes_mentioning, types


def _bodies(helix: Helix) -> list[str]:
    return [json.dumps(r.body["messages"], sort_keys=True) for r in helix.model_requests]


def test_the_supervisor_restarts_a_crashed_loop_without_repeating_the_model_call(
    helix: Helix,
) -> None:
    helix.play(
        {
            "text": "Writing.",
            "tool_calls": [{"name": "write_file", "args": {"path": "a.txt", "content": "a\n"}}],
        },
        {"text": "Wrote a.txt."},
    )
    running = helix.start_run("write a", env={"HELIX_FAULTS": "crash-after:model.responded"})
    assert running.finish() == 0, running.stderr
    assert (helix.world / "a.txt").read_text() == "a\n"

    log = helix.logs(running.run_id)
    (restarted,) = of_type(log, "supervisor.restarted")
    assert "InjectedFault" in restarted["data"]["reason"]
    assert restarted["data"]["attempt"] == 1
    first_reply = of_type(log, "model.responded")[0]
    assert first_reply["seq"] < restarted["seq"]
    assert len(of_type(log, "model.requested")) == 2
    assert len(of_type(log, "model.responded")) == 2
    assert len(of_type(log, "tool.completed")) == 1
    assert types(log)[-1] == "run.completed"
    assert len(helix.model_requests) == 2  # one per step: the answered call was not repeated
    assert len(set(_bodies(helix))) == 2


def _two_calls_then_done() -> list[dict[str, Any]]:
    return [
        {
            "text": "Counting, then writing.",
            "tool_calls": [
                {"name": "run_command", "args": {"command": "echo x >> counter.txt"}},
                {"name": "write_file", "args": {"path": "b.txt", "content": "b\n"}},
            ],
        },
        {"text": "Counted once."},
    ]


def test_a_process_killed_after_a_tool_result_resumes_without_rerunning_it(
    helix: Helix,
) -> None:
    helix.play(*_two_calls_then_done())
    # A lease that outlives the slowest machine: only the holder's death can free it.
    lasting = {"HELIX_LEASE_TTL_S": "600"}
    running = helix.start_run(
        "count", "--auto-approve", env={"HELIX_FAULTS": "exit-after:tool.completed", **lasting}
    )
    assert running.finish() == 137
    run_id = running.run_id
    assert (helix.world / "counter.txt").read_text() == "x\n"
    assert not (helix.world / "b.txt").exists()
    assert types(helix.logs(run_id))[-1] == "tool.completed"
    assert helix.show(run_id)["status"] == "running"

    resumed = helix("resume", run_id, "--json", env=lasting)
    assert resumed.returncode == 0, resumed.stderr
    assert (helix.world / "counter.txt").read_text() == "x\n"  # the command ran once
    assert (helix.world / "b.txt").read_text() == "b\n"

    log = helix.logs(run_id)
    assert types(log)[-1] == "run.completed"
    completed = of_type(log, "tool.completed")
    assert [e["data"]["call_id"] for e in completed] == ["call_0_0", "call_0_1"]
    assert all(e["data"]["ok"] for e in completed)
    assert len(of_type(log, "tool.started")) == 2
    assert len(of_type(log, "run.resumed")) == 1
    assert not of_type(log, "tool.interrupted")
    # The killed process never released its lease: resume took it over at once (a dead
    # process of this host), and said so first.
    (taken,) = of_type(log, "lease.taken_over")
    assert taken["data"]["reason"] == "holder_gone"
    assert taken["seq"] == completed[0]["seq"] + 1
    assert (taken["data"]["previous_epoch"], taken["data"]["epoch"]) == (1, 2)
    assert len(helix.model_requests) == 2
    assert len(set(_bodies(helix))) == 2
    printed = [json.loads(line) for line in resumed.stdout.splitlines()]
    assert printed[0]["seq"] == completed[0]["seq"] + 1  # resume shows what is new


def test_a_kill_during_a_model_call_resumes_with_only_that_call_asked_again(
    helix: Helix,
) -> None:
    first, done = _two_calls_then_done()
    middle = {
        "text": "Checking.",
        "tool_calls": [{"name": "read_file", "args": {"path": "counter.txt"}}],
    }
    # The process dies while the second step is being answered; the server plays that
    # step again (undelayed) when the resumed run asks again.
    helix.play(first, {**middle, "delay_s": 5.0}, middle, done)
    running = helix.start_run("count", "--auto-approve")
    running.wait_for("model.requested", lambda e: e["turn"] == 2)
    # Kill it once the server holds the whole request (model.requested is logged
    # before the request is sent; a kill before then would cut the request short).
    helix.wait_for_requests(2)
    running.kill()
    run_id = running.run_id
    assert (helix.world / "counter.txt").read_text() == "x\n"

    resumed = helix("resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    assert (helix.world / "counter.txt").read_text() == "x\n"

    log = helix.logs(run_id)
    assert types(log)[-1] == "run.completed"
    assert len(of_type(log, "model.responded")) == 3
    assert len(of_type(log, "tool.completed")) == 3
    bodies = _bodies(helix)
    assert len(bodies) == 4
    assert bodies[1] == bodies[2]  # the call that never got its answer, asked again
    assert len(set(bodies)) == 3  # and no answered call asked twice


def test_a_command_cut_short_by_a_kill_is_recorded_as_interrupted_not_rerun(
    helix: Helix,
) -> None:
    marker = "30.9191"
    helix.play(
        {
            "text": "Counting slowly.",
            "tool_calls": [
                {
                    "name": "run_command",
                    "args": {"command": f"echo x >> counter.txt; sleep {marker}"},
                }
            ],
        },
        {"text": "It was interrupted; stopping."},
    )
    running = helix.start_run("count slowly", "--auto-approve")
    try:
        running.wait_for("tool.started")
        counter = helix.world / "counter.txt"
        deadline = time.monotonic() + 10
        # The shell's command line names the marker before its echo has run: wait for
        # the side effect itself, so that the kill cuts short a command that had one.
        while not (counter.exists() and counter.read_text() == "x\n"):
            assert time.monotonic() < deadline, "the command never counted"
            time.sleep(0.05)
        assert processes_mentioning(marker), "the command is not running"
        running.kill()
        run_id = running.run_id

        resumed = helix("resume", run_id)
        assert resumed.returncode == 0, resumed.stderr
    finally:
        for pid in processes_mentioning(marker):  # in case it outlived its driver's kill -9
            with contextlib.suppress(ProcessLookupError):  # bwrap's die as they are listed
                os.kill(pid, signal.SIGKILL)
    assert (helix.world / "counter.txt").read_text() == "x\n"  # not run a second time

    log = helix.logs(run_id)
    (interrupted,) = of_type(log, "tool.interrupted")
    (completed,) = of_type(log, "tool.completed")
    assert interrupted["data"]["call_id"] == completed["data"]["call_id"] == "call_0_0"
    assert interrupted["seq"] < completed["seq"]
    assert completed["data"]["ok"] is False
    assert "not run again" in completed["data"]["output"]
    assert len(of_type(log, "tool.started")) == 1
    assert types(log)[-1] == "run.completed"
    tool_result = helix.server.requests[-1].body["messages"][-1]
    assert tool_result["role"] == "tool"
    assert tool_result["content"].startswith("interrupted:")
    assert len(helix.model_requests) == 2


def test_a_kill_inside_a_delegated_child_resumes_both_without_repeating_anything(
    helix: Helix,
) -> None:
    helix.play(
        {
            "text": "Over to a worker.",
            "tool_calls": [{"name": "delegate", "args": {"objective": "count once"}}],
        },
        {
            "text": "Counting.",
            "tool_calls": [{"name": "run_command", "args": {"command": "echo x >> counter.txt"}}],
        },
        {"text": "Counted."},
        {"text": "The worker counted."},
    )
    running = helix.start_run(
        "get it counted", "--auto-approve", env={"HELIX_FAULTS": "exit-after:tool.completed"}
    )
    assert running.finish() == 137  # killed right after the child's command completed
    parent = running.run_id
    (spawned,) = of_type(helix.logs(parent), "agent.spawned")
    child = spawned["data"]["child_run_id"]
    assert types(helix.logs(child))[-1] == "tool.completed"

    resumed = helix("resume", parent, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert (helix.world / "counter.txt").read_text() == "x\n"  # the command ran once
    log = helix.logs(parent)
    assert types(log)[-1] == "run.completed"
    (interrupted,) = of_type(log, "tool.interrupted")
    assert interrupted["data"]["call_id"] == spawned["data"]["call_id"]  # re-run: idempotent
    assert len(of_type(log, "agent.spawned")) == 1  # it found its child again
    (reported,) = of_type(log, "agent.reported")
    assert reported["data"]["report"] == "Counted."
    assert helix.show(child)["status"] == "completed"
    assert len(helix("runs", "--json").stdout.splitlines()) == 2  # parent and one child
    assert len(helix.model_requests) == 4  # no answered call was asked again
    assert len(set(_bodies(helix))) == 4
