"""Signed webhooks: HMAC-SHA256 over ``TIMESTAMP.BODY`` with the automation's secret.

The sender puts the POSIX time in ``X-Helix-Timestamp`` and ``sha256=HEX`` in
``X-Helix-Signature``, where HEX is the HMAC-SHA256, keyed by the secret, of the
timestamp, a ``.``, and the raw request body. A request whose timestamp is more than
``REPLAY_WINDOW_S`` away from the server's time is refused, and a signature already
used is refused (its firing claim exists), so a captured request cannot be replayed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from helix.errors import HelixError

TIMESTAMP_HEADER = "X-Helix-Timestamp"
SIGNATURE_HEADER = "X-Helix-Signature"
REPLAY_WINDOW_S = 300.0
"""How far (seconds) a request's timestamp may be from the server's time, either way."""


class SignatureError(HelixError):
    """A webhook request's signature or timestamp is missing, wrong, or stale (401)."""

    code = "invalid_signature"


def new_secret() -> str:
    """A fresh signing secret (``whsec_`` and 43 URL-safe characters)."""
    return "whsec_" + secrets.token_urlsafe(32)


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The ``X-Helix-Signature`` value for ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def check_signature(
    secret: str, timestamp: str | None, signature: str | None, body: bytes, *, now: float
) -> None:
    """Return if the request is signed with ``secret`` and fresh; ``SignatureError`` if not."""
    if not timestamp or not signature:
        raise SignatureError(f"a signed webhook needs {TIMESTAMP_HEADER} and {SIGNATURE_HEADER}")
    try:
        sent = float(timestamp)
    except ValueError:
        raise SignatureError(f"{TIMESTAMP_HEADER} must be POSIX seconds") from None
    if not abs(now - sent) <= REPLAY_WINDOW_S:
        raise SignatureError(
            f"{TIMESTAMP_HEADER} is more than {REPLAY_WINDOW_S:.0f} s from the server's time"
        )
    if not hmac.compare_digest(sign(secret, timestamp, body), signature):
        raise SignatureError("the signature does not match the body")
