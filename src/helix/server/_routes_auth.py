"""Health, signing in, WebSocket tokens, the caller's workspaces and their policies."""

from __future__ import annotations

from fastapi import APIRouter, Request

from helix._version import __version__
from helix.accounts import AccountNotFoundError, User, can_administer
from helix.gates import Policy

from ._deps import CallerDep, State
from ._errors import ApiError
from ._schemas import ApiTokenOut, Health, LinkBody, LoginBody, Me, TokenOut
from ._state import ServerState

router = APIRouter()


@router.get("/health", response_model=Health, tags=["server"])
async def health() -> Health:
    """The server answers; no token needed."""
    return Health(version=__version__)


@router.post("/auth/login", response_model=TokenOut, tags=["auth"])
async def login(body: LoginBody, request: Request, state: State) -> TokenOut:
    """A 24-hour access token for a username and password (5 tries a minute per address)."""
    await _count_attempt(request, state)
    user = await state.accounts.authenticate(body.username, body.password)
    if user is None:
        raise ApiError(401, "unauthorized", "wrong username or password")
    return _access_token(state, user)


@router.post("/auth/link", response_model=TokenOut, tags=["auth"])
async def redeem_link(body: LinkBody, request: Request, state: State) -> TokenOut:
    """Trade a one-time login token (the first start's link) for an access token."""
    await _count_attempt(request, state)
    user = await state.accounts.redeem_login_token(body.token)
    if user is None:
        raise ApiError(401, "unauthorized", "this login link was used already or has expired")
    return _access_token(state, user)


async def _count_attempt(request: Request, state: ServerState) -> None:
    """Count a sign-in attempt from the client's address; 429 past the limit."""
    await state.logins.check(request.client.host if request.client is not None else "unknown")


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
async def me(caller: CallerDep) -> Me:
    """Who the token belongs to, and their role in each workspace."""
    return Me(user=caller.user, workspaces=dict(caller.roles))


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
