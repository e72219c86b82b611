"""Which server the environment names: ``HELIX_SERVER`` (+ ``HELIX_TOKEN``), or ``helix login``.

``helix login URL`` keeps the URL and a long-lived API token in ``HELIX_HOME/server.json``
(mode 0600); the variables win over it. ``Client.from_env()`` and the CLI read it alike.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helix.config import Settings
from helix.errors import ConfigError

LOGIN_FILE = "server.json"
"""Under ``HELIX_HOME``: the URL and token ``helix login`` saved (mode 0600)."""


@dataclass(frozen=True, slots=True)
class ServerLogin:
    """Where the server is and the token to show it."""

    url: str
    token: str | None


def login_path(env: Mapping[str, str] | None = None) -> Path:
    """Where ``helix login`` keeps the server's URL and token."""
    return Settings.from_env(env).home / LOGIN_FILE


def current_login(env: Mapping[str, str] | None = None) -> ServerLogin | None:
    """The server named by ``HELIX_SERVER`` (+ ``HELIX_TOKEN``) or a saved login; else None.

    ``ConfigError`` if the saved login cannot be read.
    """
    env = os.environ if env is None else env
    saved: dict[str, Any] = {}
    path = login_path(env)
    if path.exists():
        try:
            saved = json.loads(path.read_text())
        except (OSError, ValueError):
            raise ConfigError(f"{path} is unreadable: run helix login URL again") from None
    url = env.get("HELIX_SERVER") or saved.get("url")
    if not url:
        return None
    token = env.get("HELIX_TOKEN") or (saved.get("token") if saved.get("url") == url else None)
    return ServerLogin(str(url).rstrip("/"), token)


def save_login(login: ServerLogin, env: Mapping[str, str] | None = None) -> Path:
    """Keep the URL and token for the next commands, readable by this user only."""
    path = login_path(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"url": login.url, "token": login.token}, handle)
    return path
