"""Where traces go: read from the environment, checked before anything is exported.

Export is off unless an endpoint is named: ``HELIX_OTEL_ENDPOINT`` (Helix's own), else
the standard ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``.
``OTEL_SDK_DISABLED=true`` turns it off whatever else is set (docs/telemetry.md).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from helix.errors import ConfigError

_TRACES_PATH = "/v1/traces"


@dataclass(frozen=True, slots=True)
class OtelSettings:
    """An OTLP/HTTP (protobuf) trace endpoint and what to send it with."""

    endpoint: str
    """The full URL spans are posted to (``…/v1/traces``)."""
    source: str
    """The variable that named it (shown by ``helix doctor``)."""
    headers: tuple[tuple[str, str], ...] = ()
    """Sent with every export (an API key of the collector's, say); never shown."""
    service_name: str = "helix"
    """The ``service.name`` resource attribute (``OTEL_SERVICE_NAME``)."""
    timeout_s: float = 10.0
    """How long one export may take (``OTEL_EXPORTER_OTLP_TIMEOUT``, in ms as the spec says)."""
    gate_reasons: bool = False
    """``HELIX_OTEL_GATE_REASONS``: put each gate's reason on its span event. Off by
    default: a reason may quote the call's arguments (``the command may change things:
    …``); when on, known secret values are masked and reasons clipped."""

    @property
    def shown(self) -> str:
        """The endpoint as a person may see it: without any user or password in it."""
        parts = urlsplit(self.endpoint)
        host = parts.hostname or ""
        host = f"[{host}]" if ":" in host else host
        netloc = f"{host}:{parts.port}" if parts.port is not None else host
        return parts._replace(netloc=netloc).geturl()


def _endpoint(name: str, value: str, *, base: bool) -> str:
    """Check an http(s) URL; a base URL gets the traces path appended (as OTLP says)."""
    url = value.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{name}: {value!r} is not an http(s) URL (e.g. http://127.0.0.1:4318)")
    try:
        parts.port  # noqa: B018 (a bad port raises)
    except ValueError:
        raise ConfigError(f"{name}: {value!r} has a bad port") from None
    if parts.query or parts.fragment:
        raise ConfigError(f"{name}: {value!r} may not have a query or a fragment")
    if base:
        return url.rstrip("/") + _TRACES_PATH
    return url


def _headers(name: str, value: str) -> tuple[tuple[str, str], ...]:
    """``key=value,key2=value2`` (values URL-encoded), as the OTLP exporter spec writes them."""
    found: list[tuple[str, str]] = []
    for item in value.split(","):
        if not item.strip():
            continue
        key, sep, val = item.partition("=")
        key = key.strip()
        if not sep or not key or any(c.isspace() for c in key):
            raise ConfigError(f"{name}: expected key=value pairs separated by commas")
        found.append((key.lower(), unquote(val.strip())))
    return tuple(found)


def check_otel_installed() -> None:
    """``ConfigError`` when export is asked for and the ``otel`` extra is missing."""
    for module in ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http"):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ModuleNotFoundError, ValueError):  # a parent missing, or blocked
            found = False
        if not found:
            raise ConfigError("trace export needs OpenTelemetry: pip install 'helix-harness[otel]'")


def read_otel_settings(env: Mapping[str, str] | None = None) -> OtelSettings | None:
    """The trace export the environment asks for, or ``None`` (off, the default).

    ``ConfigError`` names the variable at fault: a URL that is not http(s), headers
    that are not ``key=value`` pairs, a timeout that is not a number; or, when export
    is on, says the ``otel`` extra is missing.
    """
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    helix = env.get("HELIX_OTEL_ENDPOINT", "").strip()
    traces = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    general = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if helix:
        source, endpoint = "HELIX_OTEL_ENDPOINT", _endpoint("HELIX_OTEL_ENDPOINT", helix, base=True)
    elif traces:
        source = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
        endpoint = _endpoint(source, traces, base=False)
    elif general:
        source = "OTEL_EXPORTER_OTLP_ENDPOINT"
        endpoint = _endpoint(source, general, base=True)
    else:
        return None
    header_var = next(
        (
            name
            for name in (
                "HELIX_OTEL_HEADERS",
                "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
                "OTEL_EXPORTER_OTLP_HEADERS",
            )
            if env.get(name, "").strip()
        ),
        None,
    )
    headers = _headers(header_var, env[header_var]) if header_var else ()
    timeout_ms = env.get("OTEL_EXPORTER_OTLP_TIMEOUT", "").strip() or "10000"
    try:
        timeout_s = float(timeout_ms) / 1000
    except ValueError:
        raise ConfigError(
            f"OTEL_EXPORTER_OTLP_TIMEOUT: {timeout_ms!r} is not milliseconds"
        ) from None
    if not 0 < timeout_s <= 600:
        raise ConfigError("OTEL_EXPORTER_OTLP_TIMEOUT: must be between 1 and 600000 ms")
    service = env.get("OTEL_SERVICE_NAME", "").strip() or "helix"
    reasons = env.get("HELIX_OTEL_GATE_REASONS", "").strip().lower()
    if reasons not in _SWITCH:
        raise ConfigError(f"HELIX_OTEL_GATE_REASONS: {reasons!r} is not one of on, off")
    check_otel_installed()
    return OtelSettings(endpoint, source, headers, service, timeout_s, _SWITCH[reasons])


_SWITCH = {"": False, "0": False, "off": False, "false": False, "1": True, "on": True, "true": True}
