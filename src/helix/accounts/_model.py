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
    """No user or workspace with that name (or no stored blueprint, or version, so named)."""

    code = "account_not_found"


class StaleBlueprintVersionError(ConflictError):
    """A blueprint saved on top of a version that is no longer its latest."""

    code = "stale_blueprint_version"


@dataclass(frozen=True, slots=True)
class StoredBlueprint:
    """One version of a workspace's stored blueprint; a save adds one, none is changed."""

    workspace: str
    name: str
    version: int
    """1, 2, 3… per (workspace, name)."""
    body: dict[str, Any]
    """The blueprint's fields as saved (checked by whoever saved it)."""
    by: str
    """Who saved it (``user:ann``); ``unknown`` for one stored before versions."""
    at: str
    """When (ISO 8601, UTC)."""
    note: str
    """A one-line note (``rollback to v2``…); empty if none was given."""


def stale_blueprint(name: str, expected: int, latest: int) -> str:
    """Why a save expecting ``expected`` is refused when ``latest`` is the latest version."""
    if latest == 0:
        return f"blueprint {name!r} has no version {expected}: it does not exist yet"
    if expected == 0:
        return f"blueprint {name!r} exists already (version {latest}): save on top of that"
    return (
        f"blueprint {name!r} was saved on top of version {expected}, but version {latest}"
        " is the latest: reload it and make the edit again"
    )
