"""Accounts as the server and the admin commands use them: people, places, proof.

Passwords are hashed with argon2id; tokens are random and only their SHA-256 is
stored (they carry 256 bits, so a slow hash would add nothing but latency).
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Any

from helix.errors import ConfigError
from helix.gates import Policy
from helix.kernel.events import utc_now_iso

from ._model import (
    AccountExistsError,
    AccountNotFoundError,
    Role,
    StoredBlueprint,
    User,
    check_name,
    check_role,
)
from ._store import AccountStore

API_TOKEN_PREFIX = "hx_"
"""API tokens start with this, so a bearer token's kind is seen without a lookup."""
BOOTSTRAP_USER = "admin"
BOOTSTRAP_WORKSPACE = "default"
"""Where runs started by the embedded CLI live, so the first owner sees them."""


@dataclass(frozen=True, slots=True)
class Hashing:
    """argon2id cost; the defaults are argon2-cffi's (about 0.3 s a hash on these cores)."""

    time_cost: int = 3
    memory_kib: int = 65536
    parallelism: int = 4

    @classmethod
    def cheap(cls) -> Hashing:
        """For tests: still argon2id, a thousand times faster."""
        return cls(time_cost=1, memory_kib=64, parallelism=1)


def token_hash(token: str) -> str:
    """How a token is stored and looked up."""
    return hashlib.sha256(token.encode()).hexdigest()


class Accounts:
    """Creating users and workspaces, checking passwords, issuing and checking tokens."""

    def __init__(self, store: AccountStore, hashing: Hashing | None = None) -> None:
        from argon2 import PasswordHasher

        self.store = store
        hashing = hashing or Hashing()
        self._hasher = PasswordHasher(
            time_cost=hashing.time_cost,
            memory_cost=hashing.memory_kib,
            parallelism=hashing.parallelism,
        )
        self._dummy_hash = self._hasher.hash(secrets.token_hex(8))

    async def add_user(
        self,
        name: str,
        *,
        password: str | None = None,
        workspace: str | None = None,
        role: str = "member",
        personal: bool = True,
    ) -> User:
        """Create a user (with a personal workspace), and a role in ``workspace`` if named."""
        check_name("user", name)
        checked_role = check_role(role)
        if workspace is not None and await self.store.get_workspace(workspace) is None:
            raise AccountNotFoundError(f"no workspace {workspace!r}: create it first")
        if password is not None and not password:
            raise ConfigError("the password is empty")
        hashed = None if password is None else self._hasher.hash(password)
        user = await self.store.add_user(name, hashed, created_at=utc_now_iso())
        if personal and await self.store.get_workspace(name) is None:
            await self.store.add_workspace(name, "personal", created_at=user.created_at)
            await self.store.set_role(name, name, "owner")
        if workspace is not None:
            await self.store.set_role(workspace, name, checked_role)
        return user

    async def add_workspace(self, name: str, *, owner: str | None = None) -> None:
        """Create a team workspace (with ``owner`` as its owner, if given)."""
        check_name("workspace", name)
        if owner is not None and await self.store.get_user(owner) is None:
            raise AccountNotFoundError(f"no user {owner!r}")
        await self.store.add_workspace(name, "team", created_at=utc_now_iso())
        if owner is not None:
            await self.store.set_role(name, owner, "owner")

    async def set_role(self, workspace: str, user: str, role: str) -> None:
        """Give ``user`` a role in ``workspace`` (both must exist)."""
        await self.store.set_role(workspace, user, check_role(role))

    async def authenticate(self, name: str, password: str) -> User | None:
        """The user if the password is theirs; ``None`` otherwise (in similar time)."""
        from argon2.exceptions import Argon2Error, InvalidHashError

        user = await self.store.get_user(name)
        stored = user.password_hash if user is not None else None
        try:
            self._hasher.verify(stored or self._dummy_hash, password)
        except (Argon2Error, InvalidHashError):
            return None
        return user if stored is not None else None

    async def create_api_token(self, user: str) -> str:
        """A new long-lived API token for ``user``; only its hash is kept."""
        if await self.store.get_user(user) is None:
            raise AccountNotFoundError(f"no user {user!r}")
        token = API_TOKEN_PREFIX + secrets.token_urlsafe(32)
        await self.store.add_token(token_hash(token), user, "api", expires_at=None)
        return token

    async def user_for_api_token(self, token: str) -> User | None:
        """The owner of a live API token."""
        name = await self.store.find_token(token_hash(token), "api", now=time.time())
        return None if name is None else await self.store.get_user(name)

    async def revoke_api_token(self, token: str) -> str | None:
        """Revoke one API token, at once; whose it was, or ``None`` if none matches."""
        return await self.store.take_token(token_hash(token), "api", now=time.time())

    async def revoke_api_tokens(self, user: str) -> int:
        """Revoke every API token ``user`` has; how many there were."""
        if await self.store.get_user(user) is None:
            raise AccountNotFoundError(f"no user {user!r}")
        return await self.store.drop_tokens(user, "api")

    async def set_password(self, user: str, password: str | None) -> None:
        """Replace ``user``'s password (``None``: none, so only tokens work)."""
        if password == "":
            raise ConfigError("the password is empty")
        hashed = None if password is None else self._hasher.hash(password)
        await self.store.set_password(user, hashed)

    async def create_login_token(self, user: str, *, ttl_s: float = 86400.0) -> str:
        """A one-time login token (for the link printed on first start)."""
        token = secrets.token_urlsafe(32)
        await self.store.add_token(token_hash(token), user, "login", expires_at=time.time() + ttl_s)
        return token

    async def redeem_login_token(self, token: str) -> User | None:
        """The user a one-time login token was for; it works once."""
        name = await self.store.take_token(token_hash(token), "login", now=time.time())
        return None if name is None else await self.store.get_user(name)

    async def bootstrap(self) -> str | None:
        """On an empty database: an owner of ``default`` and a one-time login token for it."""
        if await self.store.count_users() > 0:
            return None
        with contextlib.suppress(AccountExistsError):  # a store that lost only its users
            await self.add_workspace(BOOTSTRAP_WORKSPACE)
        await self.add_user(
            BOOTSTRAP_USER, workspace=BOOTSTRAP_WORKSPACE, role="owner", personal=False
        )
        return await self.create_login_token(BOOTSTRAP_USER)

    async def roles(self, user: str) -> dict[str, Role]:
        """Workspace → role of ``user``."""
        return await self.store.roles(user)

    async def policy(self, workspace: str) -> Policy:
        """The workspace's policy ceiling (``Policy()`` allows everything)."""
        found = await self.store.get_workspace(workspace)
        if found is None or found.policy is None:
            return Policy()
        return Policy.model_validate(found.policy)

    async def set_policy(self, workspace: str, policy: Policy) -> None:
        """Store the workspace's policy ceiling."""
        stored: dict[str, Any] = policy.model_dump(mode="json")
        await self.store.set_policy(workspace, stored)

    async def save_blueprint(
        self,
        workspace: str,
        name: str,
        body: dict[str, Any],
        *,
        by: str = "system",
        expected_version: int | None = None,
        note: str = "",
    ) -> StoredBlueprint:
        """Store ``body`` as the next version of ``name`` (checked by the caller).

        ``StaleBlueprintVersionError`` if ``expected_version`` is not the latest.
        """
        return await self.store.add_blueprint(
            workspace, name, body, expected=expected_version, by=by, at=utc_now_iso(), note=note
        )

    async def blueprint(
        self, workspace: str, name: str, version: int | None = None
    ) -> StoredBlueprint:
        """A stored blueprint's version (``None``: the latest); ``AccountNotFoundError`` if none."""
        found = await self.store.get_blueprint(workspace, name, version)
        if found is None:
            which = "" if version is None else f" version {version}"
            raise AccountNotFoundError(f"no blueprint {name!r}{which} in workspace {workspace!r}")
        return found

    async def blueprint_names(self, workspace: str) -> list[str]:
        """The workspace's stored blueprints."""
        return await self.store.blueprint_names(workspace)
