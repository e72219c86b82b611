"""A driver that stops answering loses its run to another process, which finishes it.

The first ``helix run`` is frozen (``SIGSTOP``: alive, so no one may take its lease
early) in the middle of a model call; once its lease has expired (``HELIX_LEASE_TTL_S``
is 1 s here: the test waits for the run to show no driver, not for a time), ``helix
resume`` in a second process takes the run over and finishes it. Thawed, the first
process finds its lease taken: its late append is refused by epoch, it writes nothing
and stops with a one-line message, not a crash loop.
"""

from __future__ import annotations

import os
import signal
import time

from .conftest import WAIT_S, Helix, of_type, types

FAST_LEASE = {"HELIX_LEASE_TTL_S": "1"}


def _wait_until_undriven(helix: Helix, run_id: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while helix.show(run_id)["driven"]:
        assert time.monotonic() < deadline, "the frozen driver's lease never expired"
        time.sleep(0.1)


def test_a_frozen_driver_loses_the_run_and_its_late_append_is_refused(helix: Helix) -> None:
    helix.play(
        {"text": "The frozen driver's answer.", "delay_s": 2},  # reaches it only once thawed
        {
            "text": "Writing.",
            "tool_calls": [{"name": "write_file", "args": {"path": "a.txt", "content": "a\n"}}],
        },
        {"text": "Wrote a.txt."},
    )
    first = helix.start_run("write a", "--auto-approve", env=FAST_LEASE)
    run_id = first.run_id
    helix.wait_for_requests(1)
    os.killpg(first.process.pid, signal.SIGSTOP)  # hung mid-call: renews no more
    try:
        assert helix.show(run_id)["status"] == "running"
        _wait_until_undriven(helix, run_id)
        second = helix("resume", run_id, "--json", env=FAST_LEASE)
        assert second.returncode == 0, second.stderr
        assert helix.show(run_id)["status"] == "completed"
        head = len(helix.logs(run_id))
    finally:
        os.killpg(first.process.pid, signal.SIGCONT)
    code = first.finish()
    assert code == 1  # a one-line error: the run is another driver's
    assert "Traceback" not in first.stderr
    assert "another process drives the run now" in first.stderr

    log = helix.logs(run_id)
    assert len(log) == head  # the thawed driver wrote nothing
    assert [e["seq"] for e in log] == list(range(len(log)))  # 0 lost, no gap
    assert types(log)[-1] == "run.completed"
    assert "supervisor.restarted" not in types(log)
    (taken,) = of_type(log, "lease.taken_over")  # the new driver said why it drives
    assert taken["data"]["reason"] == "expired"
    assert (taken["data"]["previous_epoch"], taken["data"]["epoch"]) == (1, 2)
    assert "run.failed" not in types(log)
    replies = [e["data"]["text"] for e in of_type(log, "model.responded")]
    assert replies == ["Writing.", "Wrote a.txt."]  # the frozen driver's answer never landed
    assert len(of_type(log, "tool.completed")) == 1
    assert (helix.world / "a.txt").read_text() == "a\n"
    assert len(helix.model_requests) == 3  # the frozen call, then the new driver's two
