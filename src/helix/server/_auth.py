"""Who is calling: bearer tokens (JWT or API token) checked, and what each role may do."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from helix.accounts import API_TOKEN_PREFIX, Accounts, Role, can_act
from helix.api import resolve_run
from helix.errors import RunNotFoundError
from helix.kernel.log import EventStore, RunRecord

from ._errors import ApiError

TokenType = Literal["access", "ws"]


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated user and their roles, per workspace."""

    user: str
    roles: dict[str, Role]
    stamp: str = ""
    """The user's credential stamp (``User.stamp``), for the tokens issued to them."""

    @property
    def actor(self) -> str:
        """The ``actor`` of what this caller appends."""
        return f"user:{self.user}"

    def default_workspace(self) -> str:
        """Where a run goes when the caller names none: their personal workspace, or the first."""
        if self.roles.get(self.user) == "owner":
            return self.user
        acting = sorted(w for w, r in self.roles.items() if can_act(r))
        if not acting:
            raise ApiError(403, "forbidden", "you may not start runs in any workspace")
        return acting[0]

    def require_act(self, workspace: str, what: str) -> None:
        """403 unless the caller may act in ``workspace`` (viewers may only look)."""
        if not can_act(self.roles.get(workspace)):
            raise ApiError(403, "forbidden", f"viewers cannot {what} (workspace {workspace!r})")

    async def run(self, store: EventStore, run_id: str, *, act: str | None = None) -> RunRecord:
        """The run, if the caller may see it (404 otherwise); with ``act``, may change it.

        ``run_id`` may be a unique prefix or ``last`` (``helix.api``'s rules, among the
        caller's workspaces only): routes act on the returned record's full id.
        """
        record = await resolve_run(store, run_id, workspaces=self.roles)
        if record.workspace not in self.roles:  # resolve_run saw to it; kept as a guard
            raise RunNotFoundError(run_id)
        if act is not None:
            self.require_act(record.workspace, act)
        return record


class Signer:
    """Signs and checks JWTs (HS256) with a secret every server on the database shares."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def issue(self, user: str, kind: TokenType, ttl_s: float, *, stamp: str) -> tuple[str, str]:
        """A token for ``user`` and its expiry (ISO 8601).

        ``stamp`` (``User.stamp``) binds it to the user's password: changing the
        password signs out every session it opened.
        """
        import jwt

        expires = time.time() + ttl_s
        claims = {"sub": user, "typ": kind, "exp": int(expires), "iat": int(time.time()),
                  "pwd": stamp}  # fmt: skip
        token = jwt.encode(claims, self._secret, algorithm="HS256")
        stamp = datetime.fromtimestamp(int(expires), UTC).isoformat().replace("+00:00", "Z")
        return token, stamp

    def sign(self, claims: dict[str, Any]) -> str:
        """A signed token carrying ``claims`` (which must hold ``typ`` and ``exp``)."""
        import jwt

        return jwt.encode(claims, self._secret, algorithm="HS256")

    def verify(self, token: str, kind: str) -> dict[str, Any] | None:
        """The claims of a valid, unexpired token of type ``kind``; ``None`` otherwise."""
        import jwt

        try:
            claims: dict[str, Any] = jwt.decode(
                token, self._secret, algorithms=["HS256"], options={"require": ["exp"]}
            )
        except jwt.PyJWTError:
            return None
        return claims if claims.get("typ") == kind else None

    def check(self, token: str, kinds: tuple[TokenType, ...]) -> tuple[str, str] | None:
        """The user and stamp a valid, unexpired token of one of ``kinds`` holds; or ``None``."""
        import jwt

        try:
            claims = jwt.decode(
                token, self._secret, algorithms=["HS256"], options={"require": ["exp", "sub"]}
            )
        except jwt.PyJWTError:
            return None
        if claims.get("typ") not in kinds or not isinstance(claims.get("sub"), str):
            return None
        return str(claims["sub"]), str(claims.get("pwd", ""))


async def identify(
    token: str | None,
    signer: Signer,
    accounts: Accounts,
    kinds: tuple[TokenType, ...],
    *,
    api_tokens: bool = True,
) -> Caller:
    """The caller a bearer token names; ``ApiError`` 401 for a missing, bad or expired one.

    ``api_tokens=False`` refuses long-lived API tokens (where a token travels in a URL).
    """
    if not token:
        raise _unauthorized("no token: send Authorization: Bearer TOKEN")
    stamp: str | None = None  # API tokens are revoked one by one instead
    if token.startswith(API_TOKEN_PREFIX):
        if not api_tokens:
            raise _unauthorized("use a short-lived token from POST /auth/ws-token here")
        owner = await accounts.user_for_api_token(token)
        name = None if owner is None else owner.name
    else:
        checked = signer.check(token, kinds)
        name, stamp = (None, None) if checked is None else checked
    if name is None:
        raise _unauthorized("the token is invalid or has expired: log in again")
    user = await accounts.store.get_user(name)
    if user is None:
        raise _unauthorized("the token's user no longer exists")
    if stamp is not None and stamp != user.stamp:
        raise _unauthorized("the password changed since this token was issued: log in again")
    return Caller(name, await accounts.roles(name), user.stamp)


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, {"WWW-Authenticate": "Bearer"})
