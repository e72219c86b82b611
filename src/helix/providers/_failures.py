"""Turning a provider's failure into Helix's error tree, with secrets masked."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping

from helix._util import redact
from helix.errors import (
    ModelAuthError,
    ModelCallError,
    ModelRateLimitedError,
    ModelRequestError,
    ModelUnavailableError,
)

from ._provider import Connection


def status_error(
    connection: Connection, status: int, message: str, headers: Mapping[str, str]
) -> ModelCallError:
    """The error for an HTTP status answer (never raised here: the caller raises it)."""
    provider = connection.provider
    text = redact(f"{provider} answered {status}: {message}", [connection.api_key])
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
            text, provider=provider, status=status, retry_after=retry_after(headers)
        )
    return ModelRequestError(text, provider=provider, status=status)


def connection_error(connection: Connection, error: BaseException) -> ModelUnavailableError:
    """The error for a timeout or a connection that could not be made."""
    where = connection.base_url or "its default address"
    detail = redact(str(error) or type(error).__name__, [connection.api_key])
    return ModelUnavailableError(
        f"{connection.provider} at {where} could not be reached: {detail}",
        provider=connection.provider,
    )


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or a date)."""
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
