"""The dependencies every route takes: the server's state and the authenticated caller."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ._auth import Caller, identify
from ._state import ServerState

_bearer = HTTPBearer(auto_error=False, description="A JWT from /auth/login, or an API token.")


async def state_of(request: Request) -> ServerState:
    """The app's state (built when it started)."""
    state: ServerState = request.app.state.helix
    return state


async def _caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    state: ServerState = request.app.state.helix
    token = credentials.credentials if credentials is not None else None
    return await identify(token, state.signer, state.accounts, ("access",))


State = Annotated[ServerState, Depends(state_of)]
CallerDep = Annotated[Caller, Depends(_caller)]
