"""Client mode: with ``HELIX_SERVER`` set (or after ``helix login URL``) the CLI talks HTTP.

The server's error body maps back to Helix's exception tree, so every command exits
with the same codes as in embedded mode; a server that cannot be reached exits 4.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from helix.config import Settings
from helix.errors import (
    ConfigError,
    ConflictError,
    HelixError,
    NotFoundError,
    StoreUnavailableError,
)
from helix.kernel.events import TERMINAL_EVENTS, Event

T = TypeVar("T")

LOGIN_FILE = "server.json"
"""Under ``HELIX_HOME``: the URL and token ``helix login`` saved (mode 0600)."""


@dataclass(frozen=True, slots=True)
class ServerLogin:
    """Where the server is and the token to show it."""

    url: str
    token: str | None


def login_path() -> Path:
    """Where ``helix login`` keeps the server's URL and token."""
    return Settings.from_env().home / LOGIN_FILE


def current_login(env: dict[str, str] | None = None) -> ServerLogin | None:
    """The server this CLI talks to, if any: ``HELIX_SERVER`` (+ ``HELIX_TOKEN``) or a login."""
    env = dict(os.environ) if env is None else env
    saved: dict[str, Any] = {}
    path = login_path()
    if path.exists():
        try:
            saved = json.loads(path.read_text())
        except (OSError, ValueError):
            raise ConfigError(f"{path} is unreadable: run helix login URL again") from None
    url = env.get("HELIX_SERVER") or saved.get("url")
    if not url:
        return None
    token = env.get("HELIX_TOKEN") or (saved.get("token") if saved.get("url") == url else None)
    return ServerLogin(url.rstrip("/"), token)


def save_login(login: ServerLogin) -> Path:
    """Keep the URL and token for the next commands, readable by this user only."""
    path = login_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"url": login.url, "token": login.token}, handle)
    return path


class ServerClient:
    """The API over HTTP, raising Helix errors for the server's error bodies."""

    def __init__(self, login: ServerLogin, *, timeout: float = 30.0) -> None:
        import httpx

        self.login = login
        headers = {"Authorization": f"Bearer {login.token}"} if login.token else {}
        self._http = httpx.Client(base_url=f"{login.url}/api/v1", headers=headers, timeout=timeout)

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One request; its JSON (or text) answer, or a Helix error."""
        import httpx

        try:
            answer = self._http.request(method, path, **kwargs)
        except httpx.TransportError as error:
            raise StoreUnavailableError(
                f"cannot reach the server at {self.login.url}: {error}"
            ) from None
        if answer.status_code >= 400:
            raise _error_of(answer.status_code, answer.text)
        if answer.headers.get("content-type", "").startswith("application/json"):
            return answer.json()
        return answer.text

    def events(self, run_id: str, *, after: int = -1) -> Iterator[Event]:
        """The run's logged events with seq > ``after``, page by page."""
        while True:
            page = self.call(
                "GET", f"/runs/{run_id}/events", params={"after": after, "limit": 1000}
            )
            for raw in page["events"]:
                yield _event(raw)
            if not page["events"]:
                return
            after = page["next_after"]

    def follow(self, run_id: str, *, after: int, stop: Callable[[Event], bool]) -> None:
        """Stream the run's events from ``after`` over WebSocket until ``stop`` says so.

        A drop for being slow (4008) reconnects from the last seq seen.
        """
        from websockets.exceptions import ConnectionClosed
        from websockets.sync.client import connect

        base = "ws" + self.login.url.removeprefix("http")
        while True:
            token = self.call("POST", "/auth/ws-token")["token"]
            url = f"{base}/api/v1/runs/{run_id}/stream?token={token}&after={after}"
            try:
                with connect(url) as socket:
                    for message in socket:
                        raw = json.loads(message)
                        if "seq" not in raw:
                            continue
                        event = _event(raw)
                        after = event.seq
                        if stop(event):
                            return
            except ConnectionClosed as closed:
                if closed.rcvd is None or closed.rcvd.code != 4008:
                    raise StoreUnavailableError(f"the server closed the stream: {closed}") from None
            except OSError as error:
                raise StoreUnavailableError(f"cannot reach the server: {error}") from None


def remotely(action: Callable[[], T]) -> T:
    """Run a client-mode command, turning Helix errors into a message and exit code."""
    from ._common import exit_code_for, fail

    try:
        return action()
    except HelixError as error:
        fail(str(error), exit_code_for(error))
    except KeyboardInterrupt:
        import typer

        typer.echo("interrupted", err=True)
        raise typer.Exit(130) from None


def until_finished(event: Event) -> bool:
    """Stop following at the run's end."""
    return event.type in TERMINAL_EVENTS


def _event(raw: dict[str, Any]) -> Event:
    return Event(
        raw["run_id"], raw["seq"], raw["type"], raw["v"], raw["ts"], raw["turn"], raw["actor"],
        raw["data"],
    )  # fmt: skip


def _error_of(status: int, text: str) -> HelixError:
    try:
        message = str(json.loads(text)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        message = text[:200] or f"HTTP {status}"
    if status == 404:
        return NotFoundError(message)
    if status == 409:
        return ConflictError(message)
    if status in (400, 413, 422):
        return ConfigError(message)
    if status == 401:
        return HelixError(f"{message} (helix login URL, or set HELIX_TOKEN)")
    return HelixError(message)
