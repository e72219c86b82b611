"""Signed Allow and Deny links: decide an approval from a phone without signing in.

A link carries a signed, expiring claim (run, request, decision). Opening it shows a
confirmation page and changes nothing (link previewers open links too); its button
posts the decision. The log makes it single-use: once the request is decided, by this
link, its twin or anyone, every link to it explains that it was decided already.
The links are made by ``helix.notify.decision_link`` (here, or in a process driving a
run with the server's key).
"""

from __future__ import annotations

import html
import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

import helix.runtime as runtime
from helix.errors import ApprovalClosedError, NotFoundError, RunStateError
from helix.kernel.session import replay_run

from ._headers import CSP, content_policy, source_hash
from ._state import ServerState

router = APIRouter(tags=["links"])

LINK_ACTOR = "user:approval-link"

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}"
    "button{font:inherit;padding:.8rem 1.4rem;border-radius:8px;border:0;color:#fff;"
    "min-width:10rem}.allow{background:#1d7a3a}.deny{background:#b3261e}"
    "pre{white-space:pre-wrap;background:#f3f3f5;padding:.6rem;border-radius:6px}"
)
_POLICY = {CSP: content_policy(style=source_hash(_STYLE))}
"""The page's one inline style is allowed by its hash; nothing else inline runs."""


def _page(status: int, title: str, body: str, form: str = "") -> HTMLResponse:
    page = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>{body}{form}
</body></html>"""
    return HTMLResponse(page, status_code=status, headers=_POLICY)


async def _claims(request: Request, token: str) -> tuple[ServerState, dict[str, Any] | None]:
    state: ServerState = request.app.state.helix
    return state, state.signer.verify(token, "link")


_DECIDED = (
    "<p>This request is no longer pending: it was decided already (perhaps with this"
    " link) or its deadline passed.</p>"
)
_INVALID = "This link is not valid, or it has expired. Open the run in Helix to decide."


@router.get("/links/{token}", response_class=HTMLResponse)
async def confirm(token: str, request: Request) -> HTMLResponse:
    """The confirmation page of an Allow or Deny link (opening it decides nothing)."""
    state, claims = await _claims(request, token)
    if claims is None:
        return _page(404, "Link expired", f"<p>{_INVALID}</p>")
    run_id, request_id, decision = claims["run"], claims["req"], claims["dec"]
    try:
        folded = await replay_run(state.store, run_id)
    except NotFoundError:
        return _page(404, "Link expired", f"<p>{_INVALID}</p>")
    pending = folded.pending_approvals.get(request_id)
    if pending is None:
        return _page(409, "Already decided", _DECIDED)
    verb = "Allow" if decision == "allow" else "Deny"
    body = (
        f"<p>Run <code>{html.escape(run_id)}</code> asks to call"
        f" <b>{html.escape(pending.name)}</b> with:</p>"
        f"<pre>{html.escape(json.dumps(pending.args, indent=2))}</pre>"
        f"<p>Deadline: {html.escape(pending.expires_at or 'none')}</p>"
    )
    form = f'<form method="post"><button class="{decision}" type="submit">{verb}</button></form>'
    return _page(200, f"{verb} {pending.name}?", body, form)


@router.post("/links/{token}", response_class=HTMLResponse)
async def act(token: str, request: Request) -> HTMLResponse:
    """Record the link's decision; a second use explains that it was decided already."""
    state, claims = await _claims(request, token)
    if claims is None:
        return _page(404, "Link expired", f"<p>{_INVALID}</p>")
    decision = str(claims["dec"])
    try:
        folded = await replay_run(state.store, str(claims["run"]))
    except NotFoundError:
        return _page(404, "Link expired", f"<p>{_INVALID}</p>")
    if str(claims["req"]) not in folded.pending_approvals:
        return _page(409, "Already decided", _DECIDED)
    try:
        await runtime.decide(
            state.store,
            str(claims["run"]),
            str(claims["req"]),
            decision,
            by=LINK_ACTOR,
            reason="decided with a signed link",
        )
    except ApprovalClosedError:
        return _page(409, "Already decided", _DECIDED)
    except (NotFoundError, RunStateError) as error:
        return _page(409, "Not recorded", f"<p>{html.escape(str(error))}</p>")
    done = "Allowed" if decision == "allow" else "Denied"
    return _page(200, done, "<p>Recorded. The agent goes on.</p>")
