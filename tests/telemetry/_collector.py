"""An OTLP/HTTP trace collector in the test's process: a real HTTP server on a free port.

It decodes each ``POST /v1/traces`` body as OpenTelemetry's ``ExportTraceServiceRequest``
(protobuf) and keeps the spans, with their resource and the request's headers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def value_of(value: AnyValue) -> Any:
    """An attribute's value as Python (strings, numbers, booleans, arrays of them)."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(value_of(v) for v in value.array_value.values)
    return getattr(value, kind) if kind else None


@dataclass
class Span:
    """One received span, its ids as integers and its attributes as a dict."""

    trace_id: int
    span_id: int
    parent_id: int | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[tuple[str, int, dict[str, Any]]]
    status: int
    description: str
    resource: dict[str, Any]


@dataclass
class Collector:
    """What the server received, and a way to wait for it."""

    url: str
    spans: list[Span] = field(default_factory=list[Span])
    headers: list[dict[str, str]] = field(default_factory=list[dict[str, str]])
    paths: list[str] = field(default_factory=list[str])
    changed: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Span]:
        """Block until at least ``count`` spans came (``AssertionError`` after ``timeout``)."""
        with self.changed:
            ok = self.changed.wait_for(lambda: len(self.spans) >= count, timeout)
        assert ok, f"{len(self.spans)} span(s) received, {count} expected"
        return list(self.spans)

    def receive(self, path: str, headers: dict[str, str], body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        received = []
        for resource_spans in request.resource_spans:
            resource = {a.key: value_of(a.value) for a in resource_spans.resource.attributes}
            for scope in resource_spans.scope_spans:
                for s in scope.spans:
                    received.append(
                        Span(
                            trace_id=int.from_bytes(s.trace_id, "big"),
                            span_id=int.from_bytes(s.span_id, "big"),
                            parent_id=int.from_bytes(s.parent_span_id, "big") or None,
                            name=s.name,
                            kind=s.kind,
                            start_ns=s.start_time_unix_nano,
                            end_ns=s.end_time_unix_nano,
                            attributes={a.key: value_of(a.value) for a in s.attributes},
                            events=[
                                (
                                    e.name,
                                    e.time_unix_nano,
                                    {a.key: value_of(a.value) for a in e.attributes},
                                )
                                for e in s.events
                            ],
                            status=s.status.code,
                            description=s.status.message,
                            resource=resource,
                        )
                    )
        with self.changed:
            self.paths.append(path)
            self.headers.append(headers)
            self.spans.extend(received)
            self.changed.notify_all()


@contextmanager
def collector() -> Iterator[Collector]:
    """A collector listening on 127.0.0.1 at a free port, for the ``with`` block."""
    box: list[Collector] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            box[0].receive(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    box.append(Collector(f"http://127.0.0.1:{server.server_address[1]}"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield box[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
