"""The fold of runs' events into OpenTelemetry spans, each handed out when it closes.

Pure: no store, no clock, no network. Times are the events' own (``ts``), so a span
lasts what the log says it lasted. What goes on a span follows the GenAI semantic
conventions (``gen_ai.*``) plus a few ``helix.*`` attributes; nothing a model or a tool
said (prompts, replies, arguments, outputs) is put on any span (docs/telemetry.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from helix._util import redact
from helix.kernel.events import TERMINAL_EVENTS, Event

from ._span import OtelSpan, clip, span_id_of, trace_id_of, ts_ns

RUN_STARTS = frozenset({"run.created", "run.forked"})
"""A run's first own event (a fork's own log starts at its ``run.forked``)."""


def _split_model(spec: str) -> tuple[str, str]:
    """``provider:model`` → its two parts (a bare name has no provider)."""
    provider, sep, model = spec.partition(":")
    return (provider, model) if sep else ("", spec)


@dataclass
class _Run:
    """One followed run: its span and the spans open inside it."""

    span: OtelSpan
    turn: OtelSpan | None = None
    model: OtelSpan | None = None
    calls: dict[str, OtelSpan] = field(default_factory=dict[str, OtelSpan])
    started: set[str] = field(default_factory=set[str])
    requests: dict[str, str] = field(default_factory=dict[str, str])
    """An approval request's id → the call it is about."""

    def parent(self) -> OtelSpan:
        return self.turn if self.turn is not None else self.span

    def open_spans(self) -> list[OtelSpan]:
        spans = [*self.calls.values(), self.model, self.turn]
        return [s for s in spans if s is not None]


def _count(span: OtelSpan, data: dict[str, Any]) -> None:
    """Add a model call's tokens and cost to a span's totals."""
    attrs: dict[str, Any] = span.attributes
    for key in ("input_tokens", "output_tokens"):
        attr = f"gen_ai.usage.{key}"
        attrs[attr] = attrs.get(attr, 0) + int(data["usage"][key])
    if data["cost_usd"] is None:
        attrs["helix.unpriced_calls"] = attrs.get("helix.unpriced_calls", 0) + 1
    else:
        attrs["helix.cost_usd"] = attrs.get("helix.cost_usd", 0.0) + float(data["cost_usd"])


class SpanFold:
    """Runs' events in, finished spans out (``apply``); one fold may follow many runs.

    A run is followed from its first own event (``run.created``, or a fork's
    ``run.forked``); events of a run whose start it has not seen are ignored. A child
    run (``delegate``) is a span under the call that started it, in its parent's trace.
    ``gate_reasons``: put each gate's reason on its ``gate.decided`` span event.
    """

    def __init__(self, *, gate_reasons: bool = False) -> None:
        self.gate_reasons = gate_reasons
        """Put gates' reasons on their events (they may quote a call's arguments)."""
        self.runs: dict[str, _Run] = {}
        self.placed: dict[str, tuple[int, int, str]] = {}
        """A child run's id → (trace id, parent span id, parent run id), from ``agent.spawned``."""

    def follows(self, run_id: str) -> bool:
        """Whether the run's span is open here."""
        return run_id in self.runs

    def apply(self, event: Event) -> list[OtelSpan]:
        """Fold one event; the spans it closed, in the order they closed."""
        kind = event.type
        if kind in RUN_STARTS and event.run_id not in self.runs:
            self._start(event)
            return []
        run = self.runs.get(event.run_id)
        if run is None:
            return []
        if kind in TERMINAL_EVENTS:
            return self._end(run, event)
        if kind.startswith(("turn.", "model.")):
            return self._model_or_turn(run, event)
        if kind == "mcp.sampled":
            return [self._sampled(run, event)]
        return self._call_event(run, event)

    # -- runs ------------------------------------------------------------------------

    def _start(self, event: Event) -> None:
        data, run_id = event.data, event.run_id
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.conversation.id": run_id,
            "helix.run.id": run_id,
        }
        trace_id, parent = trace_id_of(run_id), None
        if event.type == "run.created":
            agent = data.get("blueprint") or "helix"
            provider, model = _split_model(data["model"])
            attrs |= {"gen_ai.agent.name": agent, "gen_ai.request.model": model}
            if provider:
                attrs["gen_ai.provider.name"] = provider
            if data.get("blueprint"):
                attrs["helix.blueprint"] = data["blueprint"]
            attrs["helix.run.depth"] = (data.get("settings") or {}).get("depth", 0)
            if data.get("parent") is not None:
                attrs["helix.run.parent_id"] = data["parent"]["run_id"]
            if (placed := self.placed.pop(run_id, None)) is not None:
                trace_id, parent, attrs["helix.run.parent_id"] = placed
        else:  # a fork: a trace of its own, saying where it branched off
            agent = "helix"
            attrs |= {
                "gen_ai.agent.name": agent,
                "helix.fork.parent_id": data["parent"]["run_id"],
                "helix.fork.seq": data["parent"]["seq"],
                "helix.fork.turn": data["turn"],
            }
            if data.get("model"):
                provider, model = _split_model(data["model"])
                attrs["gen_ai.request.model"] = model
                if provider:
                    attrs["gen_ai.provider.name"] = provider
        span = OtelSpan(
            trace_id, span_id_of(run_id), parent, f"invoke_agent {agent}", ts_ns(event.ts)
        )
        span.attributes.update(attrs)
        self.runs[run_id] = _Run(span)

    def _end(self, run: _Run, event: Event) -> list[OtelSpan]:
        """The run ended: what is still open ends with it (marked unfinished)."""
        closed = []
        for span in run.open_spans():
            span.attributes["helix.unfinished"] = True
            closed.append(span.end(event.ts))
        status = event.type.removeprefix("run.")
        run.span.attributes["helix.run.status"] = status
        if status == "failed":
            run.span.fail("run_failed", str(event.data.get("error", "")))
        elif status == "completed":
            run.span.status = "ok"
        else:
            run.span.event("run.cancelled", event.ts, {"helix.by": event.data.get("by")})
        del self.runs[event.run_id]
        closed.append(run.span.end(event.ts))
        return closed

    # -- turns and model calls -------------------------------------------------------

    def _model_or_turn(self, run: _Run, event: Event) -> list[OtelSpan]:
        data, kind = event.data, event.type
        if kind == "turn.started":
            closed = [run.turn.end(event.ts)] if run.turn is not None else []
            run.turn = OtelSpan(
                run.span.trace_id,
                span_id_of(event.run_id, event.seq),
                run.span.span_id,
                f"turn {data['turn']}",
                ts_ns(event.ts),
            )
            run.turn.attributes["helix.turn"] = data["turn"]
            return closed
        if kind == "turn.ended" and run.turn is not None:
            turn, run.turn = run.turn, None
            return [turn.end(event.ts)]
        if kind == "model.rejected":  # the model's mistake, told to it: on its turn
            # Its detail may quote the call's arguments: kept off unless reasons are on.
            detail = clip(redact(data["detail"])) if self.gate_reasons else None
            attrs = {"helix.reason": data["reason"], "helix.mistakes": data["mistakes"]}
            (run.turn or run.span).event(kind, event.ts, {**attrs, "helix.detail": detail})
            return []
        if kind == "model.requested":
            run.model = self._chat(run, event, data["provider"], data["model"])
            return []
        model = run.model
        if model is None:
            return []
        if kind == "model.responded":
            model.attributes["gen_ai.response.model"] = model.attributes["gen_ai.request.model"]
            reason = "tool_calls" if data["tool_calls"] else "stop"
            model.attributes["gen_ai.response.finish_reasons"] = (reason,)
            model.attributes["helix.model.latency_ms"] = data["latency_ms"]
            for span in {id(s): s for s in (model, run.parent(), run.span)}.values():
                _count(span, data)
            run.model = None
            return [model.end(event.ts)]
        if kind == "model.failed":
            model.event(
                "model.failed",
                event.ts,
                {
                    "helix.attempt": data["attempt"],
                    "helix.retry_in_s": data["retry_in_s"],
                    "helix.error": clip(data["error"]),
                },
            )
            if data["retry_in_s"] is None:  # no attempt follows
                model.fail("model_call_failed", data["error"])
                run.model = None
                return [model.end(event.ts)]
        return []

    def _chat(self, run: _Run, event: Event, provider: str, model: str) -> OtelSpan:
        span = OtelSpan(
            run.span.trace_id,
            span_id_of(event.run_id, event.seq),
            run.parent().span_id,
            f"chat {model}",
            ts_ns(event.ts),
            kind="client",
        )
        span.attributes |= {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
        if provider:
            span.attributes["gen_ai.provider.name"] = provider
        if event.turn is not None:
            span.attributes["helix.turn"] = event.turn
        return span

    def _sampled(self, run: _Run, event: Event) -> OtelSpan:
        """A tool source's sampling (MCP): a finished model call under the tool call."""
        data = event.data
        provider, model = _split_model(data["model"])
        span = self._chat(run, event, provider, model)
        call = run.calls.get(data["call_id"] or "")
        if call is not None:
            span.parent_id = call.span_id
        span.start_ns = max(0, span.start_ns - round(data["latency_ms"] * 1_000_000))
        span.attributes |= {
            "gen_ai.response.model": model,
            "helix.mcp.source": data["source"],
            "helix.model.latency_ms": data["latency_ms"],
        }
        for into in {id(s): s for s in (span, run.parent(), run.span)}.values():
            _count(into, data)
        return span.end(event.ts)

    # -- tool calls ------------------------------------------------------------------

    def _call_event(self, run: _Run, event: Event) -> list[OtelSpan]:
        data, kind = event.data, event.type
        if kind == "tool.requested":
            span = OtelSpan(
                run.span.trace_id,
                span_id_of(event.run_id, event.seq),
                run.parent().span_id,
                f"execute_tool {data['name']}",
                ts_ns(event.ts),
            )
            span.attributes |= {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": data["name"],
                "gen_ai.tool.call.id": data["call_id"],
                "gen_ai.tool.type": "function",
            }
            run.calls[data["call_id"]] = span
            return []
        if kind == "approval.decided":
            about = run.requests.pop(data["request_id"], "")
            (run.calls.get(about) or run.span).event(
                "approval.decided",
                event.ts,
                {
                    "helix.approval.request_id": data["request_id"],
                    "helix.approval.decision": data["decision"],
                    "helix.approval.by": data["by"],
                    "helix.approval.auto": data["auto"],
                },
            )
            return []
        if kind in _RUN_MARKS:
            run.span.event(kind, event.ts, _RUN_MARKS[kind](data))
            return []
        found = data.get("call_id")
        call = run.calls.get(found) if isinstance(found, str) else None
        if call is None or not isinstance(found, str):
            return []
        call_id = found
        if kind == "gate.decided":
            reason = clip(redact(data["reason"])) if self.gate_reasons else None
            call.event(
                "gate.decided",
                event.ts,
                {
                    "helix.gate.name": data["gate"],
                    "helix.gate.verdict": data["verdict"],
                    "helix.gate.reason": reason,
                },
            )
        elif kind == "approval.requested":
            run.requests[data["request_id"]] = call_id
            call.event(
                "approval.requested",
                event.ts,
                {
                    "helix.approval.request_id": data["request_id"],
                    "helix.approval.expires_at": data["expires_at"],
                    "helix.approval.question": data.get("question") is not None,
                },
            )
        elif kind == "tool.started":
            run.started.add(call_id)
            call.attributes["helix.tool.sandbox"] = data["sandbox"]
            if data.get("origin"):
                call.attributes["helix.tool.origin"] = data["origin"]
            call.event("tool.started", event.ts, {"helix.tool.sandbox": data["sandbox"]})
        elif kind == "agent.spawned":
            self.placed[data["child_run_id"]] = (call.trace_id, call.span_id, event.run_id)
            call.attributes["helix.child_run_id"] = data["child_run_id"]
        elif kind == "egress.counted":
            attempts = sum(h["attempts"] for h in data["hosts"]) + data["other_attempts"]
            call.event("egress.counted", event.ts, {"helix.egress.attempts": attempts})
        elif kind in ("tool.completed", "tool.interrupted"):
            return [self._call_ended(run, event, call_id, call)]
        return []

    def _call_ended(self, run: _Run, event: Event, call_id: str, call: OtelSpan) -> OtelSpan:
        data = event.data
        del run.calls[call_id]
        started = call_id in run.started
        run.started.discard(call_id)
        if event.type == "tool.interrupted":
            outcome = "interrupted"
            call.fail("interrupted", data["reason"])
        elif data["ok"]:
            outcome = "ok"
        elif not started:
            outcome = "denied"  # refused by a gate or a person: the system worked
        else:
            outcome = "failed"
            call.fail("tool_failed", "the tool reported a failure")
        call.attributes["helix.tool.outcome"] = outcome
        if started and "duration_ms" in data:
            call.attributes["helix.tool.duration_ms"] = data["duration_ms"]
        return call.end(event.ts)


_RUN_MARKS: dict[str, Any] = {
    "run.started": lambda d: {},
    "run.paused": lambda d: {"helix.reason": d["reason"]},
    "run.resumed": lambda d: {"helix.by": d.get("by")},
    "budget.exceeded": lambda d: {
        k: v
        for k, v in (
            ("helix.cap_usd", d.get("cap_usd")),
            ("helix.spent_usd", d["spent_usd"]),
            ("helix.budget.scope", d.get("scope")),
            ("helix.budget.period", d.get("period")),
            ("helix.cap_tokens", d.get("cap_tokens")),
            ("helix.spent_tokens", d.get("spent_tokens")),
        )
        if v is not None
    },
    "supervisor.restarted": lambda d: {},
    "lease.taken_over": lambda d: {},
}
"""Events of the run as a whole, put on its span as span events (with these attributes)."""
