"""``POST /hooks/{automation_id}``: a webhook automation's door, signed instead of signed in.

No token: the request proves itself with the automation's secret (HMAC-SHA256 over the
timestamp and the raw body, ``helix.automations.check_signature``), fresh within
``REPLAY_WINDOW_S``, and used once (a signature is a firing claim's key, so a replay
finds it taken: 409). A wrong or missing signature or a stale timestamp answers 401
without saying more. The body is authenticated and hashed, never stored or logged,
and not given to the run (docs/automations.md).
"""

from __future__ import annotations

import hashlib
from typing import Annotated

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel

from helix.automations import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    AutomationNotFoundError,
    SignatureError,
    WebhookTrigger,
    check_signature,
)
from helix.errors import ConflictError
from helix.kernel.events import AutomationFired

from ._deps import State

router = APIRouter(tags=["automations"])


class HookFired(BaseModel):
    """What a webhook started."""

    automation_id: str
    run_id: str


@router.post("/hooks/{automation_id}", status_code=202, response_model=HookFired)
async def hook(
    automation_id: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")],
    request: Request,
    state: State,
) -> HookFired:
    """Fire a webhook automation: 202 with the run, 401 for a bad signature, 409 replayed."""
    body = await request.body()
    automation = await state.automations.get(automation_id)
    secret = await state.automations.secret(automation_id)
    if automation is None or not isinstance(automation.trigger, WebhookTrigger) or not secret:
        raise AutomationNotFoundError(f"no webhook automation {automation_id!r}")
    signature = request.headers.get(SIGNATURE_HEADER)
    check_signature(
        secret, request.headers.get(TIMESTAMP_HEADER), signature, body, now=state.clock.now()
    )
    if automation.paused:
        raise ConflictError(f"automation {automation.name!r} is paused")
    assert signature is not None
    assert state.scheduler is not None
    slot = "webhook:" + hashlib.sha256(signature.encode()).hexdigest()[:32]
    fired = AutomationFired(
        automation_id=automation.id, name=automation.name, trigger="webhook", slot=slot
    )
    run_id = await state.scheduler.fire(automation, slot, fired)
    if run_id is None:
        raise ConflictError("this signed request was already received (a replay)")
    return HookFired(automation_id=automation.id, run_id=run_id)


__all__ = ["SignatureError", "router"]
