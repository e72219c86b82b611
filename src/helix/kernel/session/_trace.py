"""A run's trace: its turns, model calls, gate checks and tool calls as timed spans.

Built from the log alone. Model latency and tool duration are the ones the events
record (``model.responded.latency_ms``, ``tool.completed.duration_ms``); gate time is
not recorded, so it is derived from event times: from ``tool.requested`` to
``tool.started`` (or to the refusal's ``tool.completed``), an approval's wait included.
Child runs (``agent.spawned``) are traced too and nested under the call that made them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from helix.kernel.events import Event, parse_iso
from helix.kernel.log import EventStore

_MAX_DEPTH = 4
"""Children of children… are traced this deep (deeper ones are listed, not opened)."""


@dataclass
class TraceSpan:
    """One timed piece of a run: ``run``, ``turn``, ``model``, ``call``, ``gates`` or ``tool``.

    ``start_ms``/``end_ms`` are milliseconds from the traced run's first event (a
    child's too, so every bar shares one axis). ``duration_ms`` is the recorded
    figure where the log has one (model latency, tool duration), else end - start.
    """

    kind: str
    name: str
    run_id: str
    start: str
    start_ms: float
    end: str | None = None
    end_ms: float | None = None
    duration_ms: float | None = None
    turn: int | None = None
    call_id: str | None = None
    status: str | None = None
    """``ok``/``failed`` (model, tool), ``allow``/``deny`` (gates), a run's status."""
    detail: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    children: list[TraceSpan] = field(default_factory=list["TraceSpan"])

    def close(self, event: Event, origin: float, duration_ms: float | None = None) -> None:
        """End the span at ``event``'s time."""
        self.end = event.ts
        self.end_ms = _ms(event.ts, origin)
        self.duration_ms = duration_ms if duration_ms is not None else self.end_ms - self.start_ms


def _ms(ts: str, origin: float) -> float:
    return round((parse_iso(ts) - origin) * 1000, 3)


def _count(into: TraceSpan, data: dict[str, Any]) -> None:
    into.input_tokens += data["usage"]["input_tokens"]
    into.output_tokens += data["usage"]["output_tokens"]
    if data["cost_usd"] is None:
        into.unpriced_calls += 1
    else:
        into.cost_usd += data["cost_usd"]


class _Builder:
    """The fold: open spans by kind and call id, closed as their events arrive."""

    def __init__(self, root: TraceSpan, origin: float) -> None:
        self.root = root
        self.origin = origin
        self.turn: TraceSpan | None = None
        self.model: TraceSpan | None = None
        self.calls: dict[str, TraceSpan] = {}
        self.gates: dict[str, TraceSpan] = {}
        self.tools: dict[str, TraceSpan] = {}
        self.spawned: list[tuple[TraceSpan, str]] = []

    def span(self, kind: str, name: str, event: Event, **more: Any) -> TraceSpan:
        return TraceSpan(
            kind,
            name,
            event.run_id,
            event.ts,
            _ms(event.ts, self.origin),
            turn=self.turn.turn if self.turn else None,
            **more,
        )

    def parent(self) -> TraceSpan:
        return self.turn if self.turn is not None else self.root

    def apply(self, event: Event) -> None:
        data, kind = event.data, event.type
        if kind == "turn.started":
            self.turn = TraceSpan(
                "turn",
                f"turn {data['turn']}",
                event.run_id,
                event.ts,
                _ms(event.ts, self.origin),
                turn=data["turn"],
            )
            self.root.children.append(self.turn)
        elif kind == "turn.ended" and self.turn is not None:
            self.turn.close(event, self.origin)
            self.turn = None
        elif kind == "model.requested":
            self.model = self.span("model", f"{data['provider']}:{data['model']}", event)
            self.parent().children.append(self.model)
        elif kind in ("model.responded", "model.failed") and self.model is not None:
            self.model_ended(event)
        elif kind == "context.compacted":  # a summary call, logged once it returned
            summary = self.span("model", f"{data['provider']}:{data['model']}", event)
            summary.close(event, self.origin, data["latency_ms"])
            summary.status = "ok"
            summary.detail = f"{data['role']}: turns 1-{data['upto_turn']} summarised"
            self.parent().children.append(summary)
            for into in {id(s): s for s in (summary, self.parent(), self.root)}.values():
                _count(into, data)
        elif kind == "tool.requested":
            call = self.span("call", data["name"], event, call_id=data["call_id"])
            self.calls[data["call_id"]] = call
            self.parent().children.append(call)
            gates = self.span("gates", "gates", event, call_id=data["call_id"], status="allow")
            self.gates[data["call_id"]] = gates
            call.children.append(gates)
        else:
            self.call_event(event)

    def model_ended(self, event: Event) -> None:
        assert self.model is not None
        data = event.data
        if event.type == "model.failed":
            self.model.close(event, self.origin)
            self.model.status, self.model.detail = "failed", data["error"]
        else:
            self.model.close(event, self.origin, data["latency_ms"])
            self.model.status = "ok"
            role = data.get("role") or "main"  # the role the call served (docs/models.md)
            self.model.detail = f"{role}: {len(data['tool_calls'])} tool call(s)"
            for into in {id(s): s for s in (self.model, self.parent(), self.root)}.values():
                _count(into, data)
        self.model = None

    def call_event(self, event: Event) -> None:
        data, kind = event.data, event.type
        call_id = data.get("call_id")
        if not isinstance(call_id, str):
            return
        gates = self.gates.get(call_id)
        if kind == "gate.decided" and gates is not None:
            if data["verdict"] != "allow":
                gates.status = data["verdict"] if gates.status != "deny" else "deny"
                gates.detail = f"{data['gate']}: {data['reason']}"
        elif kind == "approval.decided":
            return  # its call_id is the request's; the outcome shows in tool.started
        elif kind == "tool.started" and gates is not None:
            gates.close(event, self.origin)
            gates.status = "allow"
            del self.gates[call_id]
            tool = self.span(
                "tool", self.calls[call_id].name, event, call_id=call_id, detail=data["sandbox"]
            )
            self.tools[call_id] = tool
            self.calls[call_id].children.append(tool)
        elif kind in ("tool.completed", "tool.interrupted"):
            self.call_ended(event, call_id)
        elif kind == "mcp.sampled" and call_id in self.calls:
            self.sampled(event, self.calls[call_id])
        elif kind == "agent.spawned" and call_id in self.calls:
            self.spawned.append((self.calls[call_id], data["child_run_id"]))

    def sampled(self, event: Event, call: TraceSpan) -> None:
        """A source's sampling during the call: a model span under it, counted as spend."""
        data = event.data
        latency = data["latency_ms"]
        span = self.span("model", data["model"], event, call_id=data["call_id"], status="ok")
        span.start_ms = max(0.0, round(span.start_ms - latency, 3))
        span.close(event, self.origin, latency)
        span.detail = f"sampling for {data['source']}"
        call.children.append(span)
        for into in {id(s): s for s in (span, self.parent(), self.root)}.values():
            _count(into, data)

    def call_ended(self, event: Event, call_id: str) -> None:
        data = event.data
        if (gates := self.gates.pop(call_id, None)) is not None:  # refused: never started
            gates.close(event, self.origin)
            gates.status = "deny"
        ok = data.get("ok", False)
        if (tool := self.tools.pop(call_id, None)) is not None:
            tool.close(event, self.origin, data.get("duration_ms"))
            tool.status = "ok" if ok else "failed"
        if (call := self.calls.get(call_id)) is not None:
            call.close(event, self.origin)
            call.status = "ok" if ok else ("interrupted" if "reason" in data else "failed")


async def trace(
    store: EventStore, run_id: str, *, origin: float | None = None, depth: int = 0
) -> TraceSpan:
    """The run's own events (a fork's from its fork point) as a tree of spans.

    Spans still open when the log ends (a live run) have no end. ``origin``: the POSIX
    time offsets count from (the root run's first event, by default).
    """
    record = await store.get_run(run_id)
    after = record.parent.seq if record.parent is not None else -1
    builder: _Builder | None = None
    last: Event | None = None
    async for event in store.iter_events(run_id, after=after):
        if builder is None:
            origin = parse_iso(event.ts) if origin is None else origin
            root = TraceSpan("run", record.objective, run_id, event.ts, _ms(event.ts, origin))
            builder = _Builder(root, origin)
        builder.apply(event)
        last = event
    if builder is None or last is None or origin is None:
        return TraceSpan(
            "run", record.objective, run_id, record.created_at, 0.0, status=record.status
        )
    root = builder.root
    root.close(last, origin)
    root.status = record.status
    for call, child_id in builder.spawned:
        if depth + 1 >= _MAX_DEPTH:
            call.children.append(
                TraceSpan("run", "(not opened: too deep)", child_id, call.start, call.start_ms)
            )
            continue
        child = await trace(store, child_id, origin=origin, depth=depth + 1)
        call.children.append(child)
    return root
