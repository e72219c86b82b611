"""Accounts as plain values: users, workspaces, roles, and the errors about them."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Literal

from helix.errors import ConfigError, ConflictError, NotFoundError

Role = Literal["owner", "admin", "member", "viewer"]
ROLES: tuple[Role, ...] = ("owner", "admin", "member", "viewer")
"""Most to least powerful."""
WorkspaceKind = Literal["personal", "team"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_name(kind: str, name: str) -> str:
    """Return ``name`` if it is a valid user or workspace name; ``ConfigError`` if not."""
    if not _NAME.fullmatch(name):
        raise ConfigError(
            f"invalid {kind} name {name!r}: 1-64 letters, digits, '_', '.' or '-',"
            " starting with a letter or digit"
        )
    return name


def check_role(role: str) -> Role:
    """Return ``role`` as a ``Role``; ``ConfigError`` names the valid ones."""
    for known in ROLES:
        if role == known:
            return known
    raise ConfigError(f"unknown role {role!r}: choose from {', '.join(ROLES)}")


def can_act(role: Role | None) -> bool:
    """Whether the role may start, steer, approve or control runs (viewers may not)."""
    return role in ("owner", "admin", "member")


def can_administer(role: Role | None) -> bool:
    """Whether the role may change the workspace's settings (its policy ceiling)."""
    return role in ("owner", "admin")


@dataclass(frozen=True, slots=True)
class User:
    """A person (or a script) who signs in; the name is the identity (``user:NAME``)."""

    name: str
    password_hash: str | None
    """``None`` for an account that signs in only with tokens or a login link."""
    created_at: str

    @property
    def stamp(self) -> str:
        """What a signed-in session is bound to: it changes when the password does."""
        return hashlib.sha256((self.password_hash or "").encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Workspace:
    """A tenant scope: its runs are visible to its members only."""

    name: str
    kind: WorkspaceKind
    created_at: str
    policy: dict[str, Any] | None
    """The stored policy ceiling (a ``helix.gates.Policy`` as JSON); ``None``: no ceiling."""


class AccountExistsError(ConflictError):
    """A user or workspace with that name exists already."""

    code = "already_exists"


class AccountNotFoundError(NotFoundError):
    """No user or workspace with that name."""

    code = "account_not_found"
