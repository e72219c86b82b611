"""Health, signing in, WebSocket tokens, the caller's workspaces and their policies."""

from __future__ import annotations

from fastapi import APIRouter, Request

from helix._version import __version__
from helix.accounts import AccountNotFoundError, User, can_administer
from helix.gates import Policy

from ._deps import CallerDep, State
from ._errors import ApiError
from ._schemas import ApiTokenOut, Health, LinkBody, LoginBody, Me, PasswordBody, TokenOut
from ._state import ServerState

router = APIRouter()


@router.get("/health", response_model=Health, tags=["server"])
async def health() -> Health:
    """The server answers; no token needed."""
    return Health(version=__version__)


@router.post("/auth/login", response_model=TokenOut, tags=["auth"])
async def login(body: LoginBody, request: Request, state: State) -> TokenOut:
    """A 24-hour access token (5 failed tries a minute per client address and per username)."""
    keys = (_address(request), ("user", body.username))
    at = await state.logins.check(*keys)
    user = await state.accounts.authenticate(body.username, body.password)
    if user is None:
        raise ApiError(401, "unauthorized", "wrong username or password")
    await state.logins.succeeded(keys, at)
    return _access_token(state, user)


@router.post("/auth/link", response_model=TokenOut, tags=["auth"])
async def redeem_link(body: LinkBody, request: Request, state: State) -> TokenOut:
    """Trade a one-time login token (the first start's link) for an access token."""
    keys = (_address(request),)
    at = await state.logins.check(*keys)
    user = await state.accounts.redeem_login_token(body.token)
    if user is None:
        raise ApiError(401, "unauthorized", "this login link was used already or has expired")
    await state.logins.succeeded(keys, at)
    return _access_token(state, user)


def _address(request: Request) -> tuple[str, str]:
    """The client's address: the socket's peer, or what a trusted proxy forwarded.

    ``X-Forwarded-For`` is believed only from ``ServerConfig.forwarded_allow_ips``
    (the app's proxy-headers middleware rewrites the client then), never otherwise.
    """
    return ("address", request.client.host if request.client is not None else "unknown")


def _access_token(state: ServerState, user: User) -> TokenOut:
    token, expires = state.signer.issue(
        user.name, "access", state.config.access_ttl_s, stamp=user.stamp
    )
    return TokenOut(token=token, expires_at=expires)


@router.post("/auth/ws-token", response_model=TokenOut, tags=["auth"])
async def ws_token(caller: CallerDep, state: State) -> TokenOut:
    """A short-lived token for the ``?token=`` of a WebSocket (URLs get logged)."""
    token, expires = state.signer.issue(
        caller.user, "ws", state.config.ws_token_ttl_s, stamp=caller.stamp
    )
    return TokenOut(token=token, expires_at=expires)


@router.post("/auth/tokens", response_model=ApiTokenOut, status_code=201, tags=["auth"])
async def api_token(caller: CallerDep, state: State) -> ApiTokenOut:
    """A new long-lived API token for the caller (``helix login`` keeps one)."""
    return ApiTokenOut(token=await state.accounts.create_api_token(caller.user))


@router.get("/me", response_model=Me, tags=["auth"])
async def me(caller: CallerDep, state: State) -> Me:
    """Who the token belongs to, their role in each workspace, whether they have a password."""
    user = await state.accounts.store.get_user(caller.user)
    has_password = user is not None and user.password_hash is not None
    return Me(user=caller.user, workspaces=dict(caller.roles), password=has_password)


@router.post("/me/password", response_model=TokenOut, tags=["auth"])
async def set_password(body: PasswordBody, caller: CallerDep, state: State) -> TokenOut:
    """Set the caller's password; every other session ends, a new access token is returned.

    A user who has a password gives it as ``current`` (tried as a sign-in is: 5 wrong a
    minute); one signed in by a link who has none sets one without.
    """
    user = await state.accounts.store.get_user(caller.user)
    if user is None:
        raise ApiError(401, "unauthorized", "the signed-in user no longer exists")
    if user.password_hash is not None:
        keys = (("user", caller.user),)
        at = await state.logins.check(*keys)
        if not body.current:
            raise ApiError(403, "forbidden", "give your current password to change it")
        if await state.accounts.authenticate(caller.user, body.current) is None:
            raise ApiError(403, "forbidden", "the current password is wrong")
        await state.logins.succeeded(keys, at)
    await state.accounts.set_password(caller.user, body.password)
    changed = await state.accounts.store.get_user(caller.user)
    if changed is None:
        raise ApiError(401, "unauthorized", "the signed-in user no longer exists")
    return _access_token(state, changed)


@router.get("/workspaces/{workspace}/policy", response_model=Policy, tags=["workspaces"])
async def get_policy(workspace: str, caller: CallerDep, state: State) -> Policy:
    """The workspace's policy ceiling: every run in it is held under it."""
    if workspace not in caller.roles:
        raise AccountNotFoundError(f"no workspace {workspace!r}")
    return await state.accounts.policy(workspace)


@router.put("/workspaces/{workspace}/policy", response_model=Policy, tags=["workspaces"])
async def put_policy(workspace: str, policy: Policy, caller: CallerDep, state: State) -> Policy:
    """Replace the ceiling (owners and admins); runs pick it up when next driven."""
    role = caller.roles.get(workspace)
    if role is None:
        raise AccountNotFoundError(f"no workspace {workspace!r}")
    if not can_administer(role):
        raise ApiError(403, "forbidden", "only owners and admins may change the policy")
    await state.accounts.set_policy(workspace, policy)
    return policy
