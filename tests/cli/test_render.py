"""One-line summaries of events, as ``helix logs`` and ``helix run`` print them."""

from __future__ import annotations

from typing import Any

from helix.cli._render import summarize
from helix.kernel.events import Event


def _event(kind: str, data: dict[str, Any]) -> Event:
    return Event("run_x", 5, kind, 1, "2026-11-29T00:00:00.000000Z", 2, "system", data)


def test_world_snapshots_say_what_changed() -> None:
    delta = {"a.txt": {"hash": "h", "mode": 33188, "size": 3, "mtime_ns": 1}, "b.txt": None}
    line = summarize(_event("world.snapshotted", {"changes": delta, "files": 12, "bytes_added": 3}))
    assert line == "1 changed, 1 removed (12 paths, 3 bytes new)"
    base = {"base": "abc", "changes": {}, "files": 4000, "bytes_added": 123456}
    assert summarize(_event("world.snapshotted", base)) == (
        "the whole world: 4000 paths (123,456 bytes new)"
    )


def test_world_markers_and_effects_have_summaries() -> None:
    rolled = _event("world.rolled_back", {"to_turn": 2, "by": "user:ann"})
    recorded = {"tool": "outbox_send", "kind": "withheld", "summary": "mail"}
    effect = _event("effect.recorded", recorded)
    assert summarize(rolled) == "to turn 2 by user:ann"
    assert summarize(effect) == "outbox_send withheld: mail"


def test_egress_tallies_and_rollback_conflicts_read_at_a_glance() -> None:
    hosts = [
        {"host": "evil.example", "verdict": "deny", "attempts": 3000},
        {"host": "pypi.org", "verdict": "allow", "attempts": 20},
    ]
    counted = _event("egress.counted", {"call_id": "c1", "hosts": hosts, "other_attempts": 8})
    assert summarize(counted) == (
        "evil.example deny (3000 tries), pypi.org allow (20 tries); 8 more to other hosts"
    )
    conflict = {"path": "d", "detail": "a symbolic link stands where a folder was recorded"}
    rolled = _event("world.rolled_back", {"to_turn": 1, "by": "user:ann", "conflicts": [conflict]})
    assert summarize(rolled) == "to turn 1 by user:ann; 1 left as they were (conflicts)"


def test_a_placed_command_says_which_node_it_ran_on() -> None:
    node = "dc8bd3d28f874e7d6cba1b14e164c16c54342c0e9db69c80beadf7b0"
    placed = {"call_id": "t1c0", "ok": True, "output": "hi", "duration_ms": 3, "node": node}
    assert summarize(_event("tool.completed", placed)) == "t1c0 ok on node dc8bd3d28f87: 'hi'"
    here = {"call_id": "t1c0", "ok": True, "output": "hi", "duration_ms": 3, "node": None}
    assert summarize(_event("tool.completed", here)) == "t1c0 ok: 'hi'"


def test_a_failed_model_call_says_why_and_what_follows() -> None:
    error = "llamacpp answered 500: Input should be a valid string"
    retried = _event("model.failed", {"error": error, "attempt": 1, "retry_in_s": 0.52})
    assert summarize(retried) == f"{error} (attempt 1, retry in 0.5s)"
    last = _event("model.failed", {"error": "", "attempt": 4, "retry_in_s": None})
    assert summarize(last) == "no detail given (attempt 4, no retry)"


def test_every_failure_line_carries_a_reason_even_an_empty_one() -> None:
    assert summarize(_event("run.failed", {"error": ""})) == "no detail given"
    long = "openai answered 400: " + "x" * 80 + " THE END"
    assert summarize(_event("run.failed", {"error": long})).startswith(long[:100])
    mcp = _event("mcp.server.failed", {"server": "files", "reason": "", "restarts": 1})
    assert summarize(mcp) == "files: no detail given"
    plugin = _event("plugin.failed", {"name": "p", "error": ""})
    assert summarize(plugin) == "p: no detail given"
    task = {"task": "t1", "run_id": "run_c", "attempt": 2, "error": "", "retrying": False}
    assert summarize(_event("task.failed", task)) == "t1 attempt 2: no detail given"


def test_a_failed_tool_call_shows_its_reason() -> None:
    said = "command exited 2: ls: cannot access 'nope': No such file or directory"
    failed = _event("tool.completed", {"call_id": "c1", "ok": False, "output": said})
    assert summarize(failed) == f"c1 error: {said!r}"
    silent = _event("tool.completed", {"call_id": "c2", "ok": False, "output": ""})
    assert summarize(silent) == "c2 error: 'no output'"
    fine = _event("tool.completed", {"call_id": "c3", "ok": True, "output": ""})
    assert summarize(fine) == "c3 ok: ''"


def test_a_models_mistake_a_malformed_call_and_a_pause_with_its_detail_read_in_one_line() -> None:
    rejected = {
        "reason": "unknown_tool", "detail": "unknown tool 'wrtie'", "call_id": "c1",
        "message": None, "mistakes": 2, "limit": 5,
    }  # fmt: skip
    assert summarize(_event("model.rejected", rejected)) == (
        "the model called a tool the run does not have: unknown tool 'wrtie'"
        " (told the model; 2 of 5)"
    )
    unlimited = {**rejected, "reason": "empty_reply", "detail": "nothing", "limit": None}
    assert summarize(_event("model.rejected", unlimited)) == (
        "the model's reply was empty: nothing (told the model; 2 in a row)"
    )
    forced = {**rejected, "reason": "no_tool_call", "detail": "text and no tool call"}
    assert summarize(_event("model.rejected", forced)) == (
        "the model did not make the tool call it was asked for: text and no tool call"
        " (told the model; 2 of 5)"
    )
    malformed = {
        "call_id": "c1", "name": "write_file", "args": {}, "raw_args": '{"path": ',
        "malformed": "not JSON",
    }  # fmt: skip
    assert summarize(_event("tool.requested", malformed)) == (
        'write_file {"path": (malformed: not JSON)'
    )
    fine = {"call_id": "c1", "name": "read_file", "args": {"path": "a"}}
    assert summarize(_event("tool.requested", fine)) == "read_file {'path': 'a'}"
    paused = {"reason": "model_errors", "detail": "the model's last reply went wrong"}
    assert summarize(_event("run.paused", paused)) == (
        "model_errors: the model's last reply went wrong"
    )
    assert summarize(_event("run.paused", {"reason": "user"})) == "user"


def test_live_world_events_read_at_a_glance() -> None:
    from helix.api import BackgroundProcessView, ProcessList
    from helix.cli._render import process_lines

    started = _event("world.process_started", {"process": "p1", "command": "npm run dev"})
    assert summarize(started) == "p1: npm run dev"
    ended = _event("world.process_ended", {"process": "p1", "reason": "stopped", "exit_code": 143})
    assert summarize(ended) == "p1 stopped (exit code 143)"
    frozen = {"tier": "gvisor", "processes": ["p1"], "size_bytes": 3 << 20, "seconds": 0.4,
              "reason": "paused", "image": "a" * 64}  # fmt: skip
    assert summarize(_event("world.checkpointed", frozen)) == (
        "gvisor: p1 frozen in 3.0 MiB (0.4s, paused)"
    )
    stopped = {"tier": "process", "reason": "paused", "detail": "cannot checkpoint"}
    assert summarize(_event("world.stopped", stopped)) == (
        "process paused: cannot checkpoint; killed no process"
    )
    view = BackgroundProcessView(
        process="p1", command="npm run dev", call_id="t1c0", turn=1, running=True,
        exit_code=None, ended=None,
    )  # fmt: skip
    lines = process_lines(ProcessList(run_id="r", processes=[view], image="b" * 64, tier="gvisor"))
    assert lines == [
        "processes  p1   frozen   npm run dev  (turn 1)",
        "world      checkpointed (gvisor, image bbbbbbbbbbbb…)",
    ]
