"""Turning a provider's failure into Helix's error tree, with secrets masked."""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Mapping
from types import ModuleType, TracebackType

from helix._util import redact
from helix.errors import (
    ModelAuthError,
    ModelCallError,
    ModelRateLimitedError,
    ModelRequestError,
    ModelUnavailableError,
)

from ._provider import Connection

NO_DETAIL = "no detail from the server"
"""What an error says when the server's answer said nothing."""


def status_error(
    connection: Connection,
    status: int,
    message: str,
    headers: Mapping[str, str],
    *,
    said: bool = True,
) -> ModelCallError:
    """Build the error for an HTTP status answer (the caller raises it).

    ``said``: ``message`` is the provider's own, from its error body (kept as the
    error's ``complaint``), not words the SDK made up for a body without one.
    """
    provider = connection.provider
    words = message.strip() or NO_DETAIL
    text = redact(f"{provider} answered {status}: {words}", [connection.api_key])
    complaint = (redact(message, [connection.api_key]).strip() or None) if said else None
    if status == 429:
        return ModelRateLimitedError(
            text, provider=provider, status=status, retry_after=retry_after(headers)
        )
    if status in (401, 403):
        variable = connection.key_env or "the provider's API key variable"
        hint = (
            f"check the key in {variable}"
            if status == 401
            else f"the key in {variable} may not use this model"
        )
        return ModelAuthError(f"{text} ({hint})", provider=provider, status=status)
    if status >= 500 or status == 408:
        return ModelUnavailableError(
            text,
            provider=provider,
            status=status,
            retry_after=retry_after(headers),
            complaint=complaint,
        )
    return ModelRequestError(text, provider=provider, status=status, complaint=complaint)


def connection_error(connection: Connection, error: BaseException) -> ModelUnavailableError:
    """Build the error for a timeout or a connection that could not be made."""
    where = connection.base_url or "its default address"
    said = str(error).strip() or type(error).__name__
    cause = _root_cause(error)  # the SDK's "Connection error." hides why
    if cause and cause not in said:
        said = f"{said} ({cause})"
    detail = redact(said, [connection.api_key])
    return ModelUnavailableError(
        f"{connection.provider} at {where} could not be reached: {detail}",
        provider=connection.provider,
    )


def _root_cause(error: BaseException) -> str:
    """What the deepest error behind ``error`` says (``connection refused``), or ""."""
    root: BaseException | None = None
    seen: set[int] = set()
    cause = error.__cause__ or error.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        root = cause
        cause = cause.__cause__ or cause.__context__
    if isinstance(root, OSError) and root.errno:
        return os.strerror(root.errno).lower()
    return "" if root is None else str(root).strip()


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Return the seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# The error types in the bodies of OpenAI- and Anthropic-style APIs, as statuses: an
# error that arrives inside a stream comes with a 200, and only its type says what it is.
_STATUS_OF_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "server_error": 500,
    "overloaded_error": 529,
}


class SdkFailures:
    """Maps an OpenAI or Anthropic SDK's exceptions to Helix's, inside an ``async with``.

    Both SDKs share one exception shape (``APIStatusError`` with the response,
    ``APIConnectionError`` for timeouts and refusals, plain ``APIError`` for an error
    event inside a stream), so one mapping serves both.
    """

    def __init__(self, sdk: ModuleType, connection: Connection) -> None:
        self._sdk = sdk
        self._connection = connection

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if error is None:
            return
        if isinstance(error, self._sdk.APIConnectionError):  # timeouts included
            raise connection_error(self._connection, error) from None
        if not isinstance(error, self._sdk.APIError):
            return
        body = getattr(error, "body", None)
        detail = _detail(body)
        text = _said(body) if body is not None else str(getattr(error, "message", "") or error)
        response = getattr(error, "response", None)
        status = response.status_code if response is not None else 0
        if status < 400:
            status = _STATUS_OF_TYPE.get(str(detail.get("type")), 500)
        headers = dict(response.headers) if response is not None else {}
        said = body is not None and bool(text)  # the server's words, not the SDK's stand-in
        raise status_error(self._connection, status, text, headers, said=said) from None


def _detail(body: object) -> dict[str, object]:
    """Pick the error object out of ``{"error": {...}}`` (or take the body itself)."""
    inner = body.get("error", body) if isinstance(body, dict) else None
    return inner if isinstance(inner, dict) else {}


def _said(body: object) -> str:
    """The server's own words in its error body ("" if it said none).

    ``{"error": {"message": …}}`` (OpenAI's, Anthropic's), ``{"error": "…"}``, FastAPI's
    ``{"detail": …}`` (a text, or a validation error's list of ``{loc, msg}``, as
    llama-cpp-python's server sends), or a body that is not JSON, as it came.
    """
    if isinstance(body, str):
        return body.strip()
    if not isinstance(body, dict):
        return ""
    inner = body.get("error", body)
    if isinstance(inner, str):
        return inner
    message = inner.get("message") if isinstance(inner, dict) else None
    if isinstance(message, str) and message.strip():
        return message
    said = body.get("detail")
    if isinstance(said, str):
        return said
    if isinstance(said, list):
        problems = [p for p in said if isinstance(p, dict) and p.get("msg")]
        return "; ".join(
            ".".join(str(part) for part in p.get("loc") or ()) + f": {p['msg']}" for p in problems
        )
    return ""
