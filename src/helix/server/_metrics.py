"""Prometheus metrics, counted from the log's live feed so every process's runs count."""

from __future__ import annotations

import asyncio
from typing import Any

from helix.errors import SubscriptionOverflowError
from helix.kernel.events import RUN_STATUSES, Event, parse_iso
from helix.kernel.log import EventStore

_WAIT_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600)
_MAX_RUN_PAGES = 100
"""Runs by status are counted at scrape time, at most this many pages of 1,000 runs."""


class Metrics:
    """Counters and gauges in a registry of the server's own (no global state)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        self.runs = Gauge("helix_runs", "Runs by status.", ["status"], registry=self.registry)
        self.events = Counter(
            "helix_events_appended", "Events appended, by type.", ["type"], registry=self.registry
        )
        self.verdicts = Counter(
            "helix_gate_verdicts", "Gate decisions.", ["gate", "verdict"], registry=self.registry
        )
        self.tokens = Counter(
            "helix_model_tokens", "Model tokens.", ["direction"], registry=self.registry
        )
        self.cost = Counter("helix_model_cost_usd", "Model spend in USD.", registry=self.registry)
        self.approval_wait = Histogram(
            "helix_approval_wait_seconds",
            "Time from an approval request to its decision.",
            buckets=_WAIT_BUCKETS,
            registry=self.registry,
        )
        self.ws_clients = Gauge(
            "helix_websocket_clients", "Connected WebSocket clients.", registry=self.registry
        )
        self._asked: dict[str, float] = {}

    def observe(self, event: Event) -> None:
        """Count one appended event."""
        self.events.labels(event.type).inc()
        data: dict[str, Any] = event.data
        if event.type == "gate.decided":
            self.verdicts.labels(str(data.get("gate")), str(data.get("verdict"))).inc()
        elif event.type == "model.responded":
            usage = data.get("usage") or {}
            self.tokens.labels("input").inc(usage.get("input_tokens") or 0)
            self.tokens.labels("output").inc(usage.get("output_tokens") or 0)
            self.cost.inc(data.get("cost_usd") or 0.0)
        elif event.type == "approval.requested":
            if len(self._asked) < 100_000:
                self._asked[str(data.get("request_id"))] = parse_iso(event.ts)
        elif event.type == "approval.decided":
            asked = self._asked.pop(str(data.get("request_id")), None)
            if asked is not None:
                self.approval_wait.observe(max(0.0, parse_iso(event.ts) - asked))

    async def follow(self, store: EventStore) -> None:
        """Count every event appended from now on (any process), until cancelled."""
        while True:
            try:
                async with store.subscribe_all(max_queue=100_000) as events:
                    async for event in events:
                        self.observe(event)
            except SubscriptionOverflowError:
                await asyncio.sleep(0)  # counts of the overflowed burst are lost; go on

    async def render(self, store: EventStore) -> bytes:
        """The exposition text, with runs by status counted now."""
        from prometheus_client import generate_latest

        counts = dict.fromkeys(RUN_STATUSES, 0)
        cursor = None
        for _ in range(_MAX_RUN_PAGES):
            page = await store.list_runs(limit=1000, cursor=cursor)
            for record in page.runs:
                counts[record.status] = counts.get(record.status, 0) + 1
            cursor = page.next_cursor
            if cursor is None:
                break
        for status, count in counts.items():
            self.runs.labels(status).set(count)
        return bytes(generate_latest(self.registry))
