"""The server's error body, ``{"error": {"code", "message"}}``, back into Helix's tree.

The server answers a Helix error with its class's ``code``; the same class is raised
here, with the server's message. Codes the tree does not know (``unauthorized``,
``forbidden``, ``bad_json``, …) are mapped by status, and keep their code.
"""

from __future__ import annotations

import json
from functools import cache

from helix.errors import (
    AmbiguousRunError,
    ConfigError,
    ConflictError,
    HelixError,
    NotFoundError,
    StoreUnavailableError,
)

_BY_STATUS: dict[int, type[HelixError]] = {
    400: ConfigError,
    404: NotFoundError,
    409: ConflictError,
    413: ConfigError,
    422: ConfigError,
    503: StoreUnavailableError,
}


@cache
def _codes() -> dict[str, type[HelixError]]:
    """Every class of the tree by its ``code`` (the most general class wins a shared code)."""
    found: dict[str, type[HelixError]] = {}
    pending: list[type[HelixError]] = [HelixError]
    while pending:
        kind = pending.pop(0)
        found.setdefault(kind.code, kind)
        pending += kind.__subclasses__()
    return found


def error_of(status: int, body: str | bytes) -> HelixError:
    """The Helix error an HTTP error answer stands for."""
    code, message, extra = _read(status, body)
    kind = _codes().get(code) if code is not None else None
    if kind is None:
        kind = _BY_STATUS.get(status, HelixError)
        if status == 401:
            message += " (log in again, or pass a valid token)"
    # Built without the class's own __init__: some take fields (a run id) the body
    # carries only inside the message. The message is the server's, unchanged.
    error = kind.__new__(kind)
    HelixError.__init__(error, message)
    if code is not None and code != kind.code:
        error.code = code  # e.g. unauthorized, forbidden: kept for the caller to read
    if isinstance(error, AmbiguousRunError):  # the full ids the server listed
        candidates = extra.get("candidates")
        error.candidates = [str(c) for c in candidates] if isinstance(candidates, list) else []
        error.prefix = str(extra.get("prefix", ""))
    return error


def _read(status: int, body: str | bytes) -> tuple[str | None, str, dict[str, object]]:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        error = json.loads(text)["error"]
        return str(error["code"]), str(error["message"]), dict(error)
    except (ValueError, KeyError, TypeError):
        return None, text[:200] or f"HTTP {status}", {}
