"""Spans out over OTLP/HTTP (protobuf), through the OpenTelemetry SDK's batching exporter.

The SDK is imported only here, when export is on (the ``otel`` extra). Its batch
processor sends from a thread of its own: a slow or absent collector never holds a
run, and what it cannot take is dropped by the SDK (which logs it), not queued forever.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from helix._version import __version__
from helix.errors import ConfigError

from ._settings import OtelSettings
from ._span import OtelSpan

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

_SCOPE = "helix"


def check_otel_installed() -> None:
    """``ConfigError`` when export is asked for and the ``otel`` extra is missing."""
    for module in ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http"):
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            raise ConfigError("trace export needs OpenTelemetry: pip install 'helix-harness[otel]'")


class OtlpSink:
    """Hands finished spans to an OTLP/HTTP exporter, batched, off the event loop."""

    def __init__(self, settings: OtelSettings, *, delay_ms: float = 1000) -> None:
        check_otel_installed()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self.settings = settings
        exporter = OTLPSpanExporter(
            endpoint=settings.endpoint,
            headers=dict(settings.headers),
            timeout=settings.timeout_s,
        )
        self._processor = BatchSpanProcessor(exporter, schedule_delay_millis=delay_ms)
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

    def flush(self, timeout_s: float = 5.0) -> bool:
        """Send what is queued now; False if it did not go out in time."""
        return bool(self._processor.force_flush(round(timeout_s * 1000)))

    def close(self) -> None:
        """Send what is queued, then stop the exporter's thread."""
        self._processor.shutdown()  # type: ignore[no-untyped-call]

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
