"""The fold alone, on hand-written logs: what a cancel leaves open, and the drain's bound."""

from __future__ import annotations

from typing import Any

from helix.kernel.events import Event
from helix.telemetry import OtelSettings, OtelSpan, OtlpSink, SpanFold, span_id_of, trace_id_of
from tests.server.conftest import free_port

TS = "2026-01-02T03:04:05.{:06d}Z"


def _log(*steps: tuple[str, dict[str, Any]]) -> list[Event]:
    return [
        Event("run_a", seq, kind, 1, TS.format(seq * 1000), 1, "system", data)
        for seq, (kind, data) in enumerate(steps)
    ]


def test_a_cancel_ends_what_is_open_marked_unfinished() -> None:
    log = _log(
        ("run.created", {"objective": "secret plan", "model": "openai:gpt-4.1", "world": "/w"}),
        ("turn.started", {"turn": 1}),
        ("model.requested", {"provider": "openai", "model": "gpt-4.1"}),
        ("run.cancelled", {"by": "user:ann"}),
    )
    fold = SpanFold()
    closed = [s for e in log for s in fold.apply(e)]
    assert [s.name for s in closed] == ["chat gpt-4.1", "turn 1", "invoke_agent helix"]
    chat, turn, run = closed
    assert chat.attributes["helix.unfinished"] is True
    assert turn.attributes["helix.unfinished"] is True
    assert all(s.end_ns == run.end_ns for s in closed)
    assert run.attributes["helix.run.status"] == "cancelled"
    assert [(e.name, e.attributes) for e in run.events] == [
        ("run.cancelled", {"helix.by": "user:ann"})
    ]
    assert (run.trace_id, run.span_id) == (trace_id_of("run_a"), span_id_of("run_a"))
    assert run.start_ns == 1_767_323_045_000_000_000
    assert "secret plan" not in repr(closed)  # the objective is never put on a span
    assert not fold.follows("run_a")


def test_a_failed_run_and_a_model_that_gave_up_are_errors() -> None:
    log = _log(
        ("run.created", {"objective": "x", "model": "openai:gpt-4.1", "world": "/w"}),
        ("turn.started", {"turn": 1}),
        ("model.requested", {"provider": "openai", "model": "gpt-4.1"}),
        ("model.failed", {"error": "rate limited", "attempt": 1, "retry_in_s": 2.0}),
        ("model.failed", {"error": "rate limited", "attempt": 2, "retry_in_s": None}),
        ("run.failed", {"error": "the model kept failing"}),
    )
    fold = SpanFold()
    closed = {s.name: s for e in log for s in fold.apply(e)}
    chat, run = closed["chat gpt-4.1"], closed["invoke_agent helix"]
    assert [e.attributes["helix.attempt"] for e in chat.events] == [1, 2]
    assert (chat.status, chat.attributes["error.type"]) == ("error", "model_call_failed")
    assert "helix.unfinished" not in chat.attributes  # it ended at its last attempt
    assert (run.status, run.description) == ("error", "the model kept failing")


def test_closing_with_a_drain_bound_does_not_wait_for_a_dead_collector() -> None:
    """With an export timeout of an hour, ``close`` returning at all is the proof.

    Without the drain bound it would retry the dead collector for that hour (the
    test's own timeout would fail it first); no wall-clock limit is asserted here.
    """
    port = free_port()  # nobody listens on it
    settings = OtelSettings(f"http://127.0.0.1:{port}/v1/traces", "test", timeout_s=3600.0)
    sink = OtlpSink(settings, delay_ms=10)
    sink.export([OtelSpan(1, 2, None, "s", 1_000, end_ns=2_000)])
    sink.close(drain_s=0.5)


def test_a_models_mistake_is_an_event_on_its_turn_and_a_pause_says_why() -> None:
    rejected = {"reason": "empty_reply", "detail": "no text and no tool call", "call_id": None,
                "message": "say something", "mistakes": 2, "limit": 2}  # fmt: skip
    log = _log(
        ("run.created", {"objective": "x", "model": "openai:gpt-4.1", "world": "/w"}),
        ("turn.started", {"turn": 1}),
        ("model.requested", {"provider": "openai", "model": "gpt-4.1"}),
        (
            "model.responded",
            {
                "text": "",
                "tool_calls": [],
                "latency_ms": 1.0,
                "cost_usd": 0.0,
                "usage": {"input_tokens": 3, "output_tokens": 0},
            },
        ),
        ("model.rejected", rejected),
        ("turn.ended", {"turn": 1}),
        ("run.paused", {"reason": "model_errors", "detail": "the model's last 2 replies"}),
        ("run.cancelled", {"by": "user:ann"}),
    )
    fold = SpanFold()
    closed = {s.name: s for e in log for s in fold.apply(e)}
    turn, run = closed["turn 1"], closed["invoke_agent helix"]
    assert [(e.name, e.attributes) for e in turn.events] == [
        ("model.rejected", {"helix.reason": "empty_reply", "helix.mistakes": 2})
    ]  # its detail may quote arguments: only with gate reasons on
    paused = next(e for e in run.events if e.name == "run.paused")
    assert paused.attributes == {"helix.reason": "model_errors"}
    told = SpanFold(gate_reasons=True)
    (event,) = next(s for e in log for s in told.apply(e) if s.name == "turn 1").events
    assert event.attributes["helix.detail"] == "no text and no tool call"
