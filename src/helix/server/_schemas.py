"""The server's own request and response bodies: accounts and health.

The wire models of runs live in ``helix.api`` (one definition for the server, the SDK
and the CLI), and the routes use them by their names there. The OpenAPI document is
generated from both.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PASSWORD_MIN = 8
"""The shortest password ``POST /me/password`` sets."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoginBody(_Body):
    """``POST /auth/login``."""

    username: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=1, max_length=1000)


class LinkBody(_Body):
    """``POST /auth/link``: a one-time login token, as in the first start's link."""

    token: str = Field(min_length=1, max_length=200)


class TokenOut(BaseModel):
    """A signed token and when it expires."""

    token: str
    expires_at: str


class Health(BaseModel):
    """``GET /health``."""

    status: Literal["ok"] = "ok"
    version: str


class ApiTokenOut(BaseModel):
    """A new API token: shown once, stored hashed."""

    token: str


class Me(BaseModel):
    """The caller and their roles."""

    user: str
    workspaces: dict[str, str]
    password: bool = False
    """Whether the user has a password (one signed in by a link may have none yet)."""


class PasswordBody(_Body):
    """``POST /me/password``: the caller's new password (and the current one, if any)."""

    password: str = Field(min_length=PASSWORD_MIN, max_length=1000)
    current: str | None = Field(default=None, max_length=1000)
    """The current password; required when the user has one."""
