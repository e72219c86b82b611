"""Ids as people type them, and what ``helix runs`` says about who drives a run.

A run driven by another ``helix`` process reads ``(driven)``; once that process is
killed (its driver lock goes with it), the same run reads ``(no driver: helix resume
ID)``, and that command, with the short id as printed, drives it to its end.
"""

from __future__ import annotations

import json
import re

from .conftest import Helix

ASK = {"name": "run_command", "args": {"command": "echo hi > out.txt"}}


def _row(listing: str, run_id: str) -> str:
    (row,) = [line for line in listing.splitlines() if line.startswith(run_id[:12])]
    return row


def test_runs_tells_a_driven_run_from_one_whose_driver_died(helix: Helix) -> None:
    helix.play({"text": "Writing.", "tool_calls": [ASK]}, {"text": "Wrote it."})
    running = helix.start_run("write out.txt")
    running.wait_for("approval.requested")
    run_id = running.run_id

    listing = helix.ok("runs")
    assert listing.splitlines()[0].split()[:2] == ["ID", "STATUS"]
    row = _row(listing, run_id)
    assert "waiting (driven)" in row
    assert run_id not in listing  # short ids for people …
    (listed,) = [json.loads(line) for line in helix.ok("runs", "--json").splitlines()]
    assert (listed["id"], listed["driven"]) == (run_id, True)  # … full ones for scripts
    assert "waiting (driven)" in helix.ok("show", run_id[4:12])

    running.kill()  # SIGKILL: the driver lock is released by the operating system
    row = _row(helix.ok("runs"), run_id)
    hint = re.search(r"waiting \(no driver: helix resume (run_[0-9a-f]+)\)", row)
    assert hint is not None, row
    short = hint.group(1)
    assert run_id.startswith(short)
    assert len(short) < len(run_id)
    assert helix.show(run_id)["driven"] is False
    assert "no driver: helix resume" in helix.ok("show", "last")
    assert "no driver" in helix.ok("status")

    # The hint works as printed: approve by prefix, resume by the short id.
    assert helix.ok("approve", short[4:]).startswith("allowed ")
    resumed = helix("resume", short, "--json")
    assert resumed.returncode == 0, resumed.stderr
    done = helix.show("last")
    assert (done["id"], done["status"], done["driven"]) == (run_id, "completed", None)
    assert (helix.world / "out.txt").read_text() == "hi\n"
    assert "completed" in _row(helix.ok("runs"), run_id)
