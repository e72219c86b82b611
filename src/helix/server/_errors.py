"""One error body for every failure: ``{"error": {"code", "message"}}``, never a trace.

Helix's exception tree is mapped to statuses here, in one place; anything a client
sent that Helix refuses lands on a 4xx. A 500 means a bug in the server.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request, WebSocket
from fastapi.exceptions import RequestValidationError, WebSocketRequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from helix.automations import SignatureError
from helix.errors import (
    AmbiguousRunError,
    ConfigError,
    ConflictError,
    ForkError,
    HelixError,
    InvalidChoiceError,
    InvalidComponentError,
    InvalidEventError,
    InvalidObjectError,
    InvalidToolArgumentsError,
    MemoryDeniedError,
    NotFoundError,
    StoreUnavailableError,
    UnknownToolError,
)

from ._headers import SECURITY_HEADERS

log = logging.getLogger("helix.server")

CLOSE_BAD_REQUEST = 4400
"""The close code of a stream whose request needs changing (a bad query, an ambiguous id)."""
_REASON_BYTES = 120
"""A close frame's reason is at most 123 bytes."""

_STATUS: list[tuple[type[HelixError], int]] = [
    (SignatureError, 401),
    (MemoryDeniedError, 403),
    (NotFoundError, 404),
    (AmbiguousRunError, 400),
    (ConflictError, 409),
    (StoreUnavailableError, 503),
    (ConfigError, 422),
    (InvalidEventError, 422),
    (InvalidObjectError, 422),
    (ForkError, 422),
    (UnknownToolError, 422),
    (InvalidToolArgumentsError, 422),
    (InvalidChoiceError, 422),
    (InvalidComponentError, 422),
]

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
}


class ApiError(Exception):
    """An answer other than success, with the contract's error body."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    """The contract's error body."""
    body: dict[str, Any] = {"code": code, "message": message, **extra}
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def status_of(error: HelixError) -> int:
    """The HTTP status a Helix error answers with."""
    for kind, status in _STATUS:
        if isinstance(error, kind):
            return status
    return 400


def install_error_handlers(app: FastAPI) -> None:
    """Map every error the app can meet to the error body."""

    async def api_error(_request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, ApiError)
        return error_response(error.status, error.code, error.message, error.headers)

    async def helix_error(_request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HelixError)
        if isinstance(error, AmbiguousRunError):  # the full ids, for a client to offer
            return error_response(
                400, error.code, str(error), prefix=error.prefix, candidates=error.candidates
            )
        return error_response(status_of(error), error.code, str(error))

    async def invalid(_request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        unreadable = [e for e in error.errors() if e.get("type") == "json_invalid"]
        if unreadable:  # not JSON at all: the body cannot be read, let alone checked
            reason = (unreadable[0].get("ctx") or {}).get("error")
            where = unreadable[0].get("loc", ())
            at = f" at character {where[-1]}" if len(where) > 1 else ""
            because = f": {reason}" if reason else ""
            return error_response(
                400, "bad_json", f"the request body is not valid JSON{because}{at}"
            )
        details = [
            {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))}
            for e in error.errors()
        ]
        first = details[0] if details else {"loc": [], "msg": "invalid request"}
        where = ".".join(first["loc"]) if isinstance(first["loc"], list) else ""
        message = f"{where}: {first['msg']}" if where else str(first["msg"])
        return error_response(422, "invalid_request", message, details=details)

    async def invalid_socket(websocket: WebSocket, error: Exception) -> None:
        assert isinstance(error, WebSocketRequestValidationError)
        await websocket.accept()  # closed before it, a client sees only an HTTP 403
        await websocket.close(CLOSE_BAD_REQUEST, close_reason(_first_problem(error.errors())))

    async def http_error(_request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HTTPException)
        cause = error.__cause__  # FastAPI wraps what fails while it reads the body
        if isinstance(cause, ApiError):
            return error_response(cause.status, cause.code, cause.message, cause.headers)
        code = _CODES.get(error.status_code, "error")
        headers = dict(error.headers) if error.headers else None
        return error_response(error.status_code, code, str(error.detail), headers)

    async def crashed(request: Request, error: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        # Starlette answers this one outside every middleware: it carries its headers itself.
        return error_response(
            500, "internal_error", "the server failed; see its log", SECURITY_HEADERS
        )

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(HelixError, helix_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(WebSocketRequestValidationError, invalid_socket)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, crashed)


def close_reason(text: str) -> str:
    """``text`` cut to fit a close frame's reason (whole characters, at most 120 bytes)."""
    return text.encode()[:_REASON_BYTES].decode(errors="ignore")


def _first_problem(errors: Any) -> str:
    """``'after: Input should be a valid integer…'``: the first of a validation's errors."""
    for problem in errors:
        where = ".".join(str(p) for p in problem.get("loc", ()) if p != "query")
        message = str(problem.get("msg", "invalid"))
        return f"{where}: {message}" if where else message
    return "invalid request"
