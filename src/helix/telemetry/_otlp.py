"""Spans out over OTLP/HTTP (protobuf), through the OpenTelemetry SDK's batching exporter.

The SDK is imported only here, when export is on (the ``otel`` extra). Its batch
processor sends from a thread of its own: a slow or absent collector never holds a
run, and what it cannot take is dropped by the SDK (which logs it), not queued forever.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from helix._version import __version__

from ._settings import OtelSettings, check_otel_installed
from ._span import OtelSpan

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

_SCOPE = "helix"


class OtlpSink:
    """Hands finished spans to an OTLP/HTTP exporter, batched, off the event loop."""

    def __init__(self, settings: OtelSettings, *, delay_ms: float = 1000) -> None:
        check_otel_installed()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self.settings = settings
        self._exporter = _closable(
            OTLPSpanExporter(
                endpoint=settings.endpoint,
                headers=dict(settings.headers),
                timeout=settings.timeout_s,
            )
        )
        self._processor = BatchSpanProcessor(self._exporter, schedule_delay_millis=delay_ms)
        self._resource = Resource.create(
            {"service.name": settings.service_name, "service.version": __version__}
        )
        self.exported = 0
        """Spans handed to the exporter (sent, or dropped by it if the collector failed)."""

    def export(self, spans: list[OtelSpan]) -> None:
        """Queue finished spans for the next batch."""
        for span in spans:
            self._processor.on_end(self._readable(span))
            self.exported += 1

    def close(self, drain_s: float | None = None) -> None:
        """Send what is queued, then stop the exporter's thread (blocking).

        ``drain_s``: give up on what has not gone out by then (a collector that is down
        is otherwise retried until the export's timeout); ``None``: wait for it.
        """
        timer = None
        if drain_s is not None:  # the SDK's flush does not time out: stop its exporter
            timer = threading.Timer(drain_s, self._exporter.shutdown)
            timer.daemon = True
            timer.start()
        try:
            self._processor.shutdown()  # type: ignore[no-untyped-call]
        finally:
            if timer is not None:
                timer.cancel()

    def _readable(self, span: OtelSpan) -> ReadableSpan:
        from opentelemetry.sdk.trace import Event, ReadableSpan
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope
        from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

        def context(span_id: int) -> SpanContext:
            return SpanContext(
                span.trace_id, span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED)
            )

        status: Any = {
            "unset": Status(StatusCode.UNSET),
            "ok": Status(StatusCode.OK),
            "error": Status(StatusCode.ERROR, span.description),
        }[span.status]
        return ReadableSpan(
            name=span.name,
            context=context(span.span_id),
            parent=context(span.parent_id) if span.parent_id is not None else None,
            resource=self._resource,
            attributes=dict(span.attributes),
            events=[Event(e.name, dict(e.attributes), e.time_ns) for e in span.events],
            kind=SpanKind.CLIENT if span.kind == "client" else SpanKind.INTERNAL,
            status=status,
            start_time=span.start_ns,
            end_time=span.end_ns,
            instrumentation_scope=InstrumentationScope(_SCOPE, __version__),
        )


def _closable(inner: Any) -> Any:
    """The exporter, closable while an export retries (the SDK's waits for its timeout)."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class Closable(SpanExporter):
        def __init__(self) -> None:
            self.closed = False

        def export(self, spans: Any) -> SpanExportResult:
            if self.closed:
                return SpanExportResult.FAILURE
            result: SpanExportResult = inner.export(spans)
            return result

        def shutdown(self) -> None:
            if not self.closed:
                self.closed = True
                inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return Closable()
