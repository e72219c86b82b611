"""The account store: one small typed interface, a SQLite and a PostgreSQL backend.

Accounts live in the same database as the events (their own tables), so one
``HELIX_DB`` names everything a server keeps. Every backend passes the one
conformance suite in ``tests/accounts``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ._model import Role, StoredBlueprint, User, Workspace, WorkspaceKind

TokenKind = str
"""``api`` (long-lived, for the CLI and scripts) or ``login`` (a one-time login link)."""


class AccountStore(ABC):
    """Users, workspaces, memberships, hashed tokens, workspace policies, server secrets."""

    @abstractmethod
    async def add_user(self, name: str, password_hash: str | None, *, created_at: str) -> User:
        """Create a user; ``AccountExistsError`` if the name is taken."""

    @abstractmethod
    async def get_user(self, name: str) -> User | None:
        """The user with that name, if any."""

    @abstractmethod
    async def set_password(self, name: str, password_hash: str | None) -> None:
        """Replace a user's password hash; ``AccountNotFoundError`` if there is no such user."""

    @abstractmethod
    async def remove_user(self, name: str) -> None:
        """Delete a user with their tokens and memberships, in one step.

        Their workspaces and runs stay. ``AccountNotFoundError`` if there is no such user.
        """

    @abstractmethod
    async def count_users(self) -> int:
        """How many users exist (zero on a fresh database)."""

    @abstractmethod
    async def add_workspace(self, name: str, kind: WorkspaceKind, *, created_at: str) -> Workspace:
        """Create a workspace; ``AccountExistsError`` if the name is taken."""

    @abstractmethod
    async def get_workspace(self, name: str) -> Workspace | None:
        """The workspace with that name, if any."""

    @abstractmethod
    async def set_role(self, workspace: str, user: str, role: Role) -> None:
        """Make ``user`` a member of ``workspace`` with ``role`` (replacing any role)."""

    @abstractmethod
    async def roles(self, user: str) -> dict[str, Role]:
        """Workspace name → the user's role there."""

    @abstractmethod
    async def members(self, workspace: str) -> dict[str, Role]:
        """User name → role, for one workspace."""

    @abstractmethod
    async def add_token(
        self, token_hash: str, user: str, kind: TokenKind, *, expires_at: float | None
    ) -> None:
        """Store a token's hash (never the token) for ``user``."""

    @abstractmethod
    async def find_token(self, token_hash: str, kind: TokenKind, *, now: float) -> str | None:
        """The user a live token of that kind belongs to, if any."""

    @abstractmethod
    async def take_token(self, token_hash: str, kind: TokenKind, *, now: float) -> str | None:
        """Like ``find_token``, deleting it in the same step: a token that works once."""

    @abstractmethod
    async def count_attempt(
        self, key: str, *, now: float, window_s: float, limit: int
    ) -> float | None:
        """Count an attempt of ``key`` unless ``limit`` were made in the last ``window_s``.

        ``None`` when counted; otherwise the time (``time.time()``) of the oldest attempt
        in the window, when one more will be allowed. Every server on the database
        shares the count, and one key's attempts are counted one at a time.
        """

    @abstractmethod
    async def forget_attempt(self, key: str, *, at: float) -> None:
        """Un-count one attempt of ``key`` counted at ``at`` (one that turned out fine)."""

    @abstractmethod
    async def drop_tokens(self, user: str, kind: TokenKind) -> int:
        """Delete every token of that kind ``user`` has; how many there were."""

    @abstractmethod
    async def set_policy(self, workspace: str, policy: dict[str, Any] | None) -> None:
        """Store the workspace's policy ceiling; ``AccountNotFoundError`` if it is missing."""

    @abstractmethod
    async def add_blueprint(
        self,
        workspace: str,
        name: str,
        body: dict[str, Any],
        *,
        expected: int | None,
        by: str,
        at: str,
        note: str,
    ) -> StoredBlueprint:
        """Store the next version of a named blueprint of the workspace, and return it.

        ``expected``: the version the save was made on (``0``: the name must be new); one
        that is not the latest is a ``StaleBlueprintVersionError``. ``None``: on top of
        whatever is latest. ``AccountNotFoundError`` if the workspace does not exist.
        """

    @abstractmethod
    async def get_blueprint(
        self, workspace: str, name: str, version: int | None = None
    ) -> StoredBlueprint | None:
        """That version of the workspace's blueprint ``name`` (``None``: the latest), if any."""

    @abstractmethod
    async def blueprint_history(self, workspace: str, name: str) -> list[StoredBlueprint]:
        """Every version of the blueprint, oldest first (empty if there is none so named)."""

    @abstractmethod
    async def latest_blueprints(self, workspace: str) -> list[StoredBlueprint]:
        """The latest version of each of the workspace's stored blueprints, by name."""

    async def blueprint_names(self, workspace: str) -> list[str]:
        """The names of the workspace's stored blueprints, sorted."""
        return [found.name for found in await self.latest_blueprints(workspace)]

    @abstractmethod
    async def secret(self, name: str, new: bytes) -> bytes:
        """The stored secret called ``name``, storing ``new`` first if there is none.

        Every server process on one database gets the same bytes, so a token signed by
        one is accepted by the others and survives restarts.
        """

    async def close(self) -> None:  # noqa: B027 (a no-op unless the backend holds resources)
        """Release the connection."""
