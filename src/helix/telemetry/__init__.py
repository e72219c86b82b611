"""OpenTelemetry export: runs, turns, model calls and tool calls as traces (docs/telemetry.md).

Off unless an OTLP endpoint is configured. Imports the kernel only; the OpenTelemetry
SDK is imported when export starts (the ``otel`` extra).
"""

from ._fold import SpanFold as SpanFold
from ._follow import SpanSink as SpanSink
from ._follow import TraceExport as TraceExport
from ._follow import export_while as export_while
from ._otlp import OtlpSink as OtlpSink
from ._settings import OtelSettings as OtelSettings
from ._settings import check_otel_installed as check_otel_installed
from ._settings import read_otel_settings as read_otel_settings
from ._span import OtelSpan as OtelSpan
from ._span import SpanEvent as SpanEvent
from ._span import span_id_of as span_id_of
from ._span import trace_id_of as trace_id_of

__all__ = [
    "OtelSettings",
    "OtelSpan",
    "OtlpSink",
    "SpanEvent",
    "SpanFold",
    "SpanSink",
    "TraceExport",
    "check_otel_installed",
    "export_while",
    "read_otel_settings",
    "span_id_of",
    "trace_id_of",
]
