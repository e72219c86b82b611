"""Signed Allow and Deny links: decide an approval from a phone without signing in.

A link carries a signed, expiring claim (run, request, decision). Opening it shows a
confirmation page and changes nothing (link previewers open links too); its button
posts the decision. The log makes it single-use: once the request is decided, by this
link, its twin or anyone, every link to it explains that it was decided already.
The links are made by ``helix.notify.decision_link`` (here, or in a process driving a
run with the server's key).

A source's question (an MCP elicitation) shows its message as text and, on the Allow
link's page, a form of its fields: the posted answer is checked against the question's
schema like any other (a bad one is shown again with what is wrong, nothing written).
The Deny link declines it.
"""

from __future__ import annotations

import html
import json
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

import helix.runtime as runtime
from helix.errors import ApprovalClosedError, InvalidAnswerError, NotFoundError, RunStateError
from helix.kernel.events import parse_field
from helix.kernel.session import PendingApproval, replay_run

from ._headers import CSP, content_policy, source_hash
from ._state import ServerState

router = APIRouter(tags=["links"])

LINK_ACTOR = "user:approval-link"

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}"
    "button{font:inherit;padding:.8rem 1.4rem;border-radius:8px;border:0;color:#fff;"
    "min-width:10rem}.allow{background:#1d7a3a}.deny{background:#b3261e}"
    "pre{white-space:pre-wrap;background:#f3f3f5;padding:.6rem;border-radius:6px}"
    "label{display:block;margin:.8rem 0 .2rem}input,select{font:inherit;width:100%;"
    "padding:.5rem;box-sizing:border-box}.error{color:#b3261e}"
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
    if pending.question is not None:
        return _question_page(200, run_id, pending, decision)
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
    pending = folded.pending_approvals.get(str(claims["req"]))
    if pending is None:
        return _page(409, "Already decided", _DECIDED)
    answer: dict[str, Any] | None = None
    try:
        if pending.question is not None and decision == "allow":
            answer = _answer(pending, (await request.body()).decode("utf-8", "replace"))
        await runtime.decide(
            state.store,
            str(claims["run"]),
            str(claims["req"]),
            decision,
            by=LINK_ACTOR,
            reason="decided with a signed link",
            answer=answer,
        )
    except InvalidAnswerError as error:
        return _question_page(422, str(claims["run"]), pending, decision, str(error))
    except ApprovalClosedError:
        return _page(409, "Already decided", _DECIDED)
    except (NotFoundError, RunStateError) as error:
        return _page(409, "Not recorded", f"<p>{html.escape(str(error))}</p>")
    done = "Allowed" if decision == "allow" else "Denied"
    return _page(200, done, "<p>Recorded. The agent goes on.</p>")


def _question_page(
    status: int, run_id: str, pending: PendingApproval, decision: str, problem: str = ""
) -> HTMLResponse:
    """A question's page: its message as text; the Allow link's has the answer's fields."""
    question = pending.question or {}
    fields: dict[str, Any] = (question.get("schema") or {}).get("properties") or {}
    asks = "asks (its words, not Helix's):"
    if pending.name == "sampling":
        tokens = html.escape(str(pending.args.get("max_tokens")))
        asks = f"asks the run's model to answer this prompt (up to {tokens} tokens):"
    body = (
        f"<p>Run <code>{html.escape(run_id)}</code>: <b>{html.escape(str(question.get('source')))}"
        f"</b> {asks}</p><pre>{html.escape(str(question.get('message')))}"
        f"</pre><p>Deadline: {html.escape(pending.expires_at or 'none')}</p>"
    )
    if problem:
        body += f'<p class="error">{html.escape(problem)}</p>'
    if decision != "allow":
        form = '<form method="post"><button class="deny" type="submit">Decline</button></form>'
        return _page(status, "Decline the question?", body, form)
    required = set((question.get("schema") or {}).get("required") or [])
    inputs = "".join(_input(name, spec, name in required) for name, spec in fields.items())
    verb = "Answer" if fields else "Accept"
    button = f'<p><button class="allow" type="submit">{verb}</button></p>'
    form = f'<form method="post">{inputs}{button}</form>'
    return _page(status, "Answer the question?", body, form)


def _input(name: str, spec: dict[str, Any], required: bool) -> str:
    """One field of the answer's form, labelled with its title (escaped, as all of it)."""
    key = html.escape(f"f.{name}", quote=True)
    label = html.escape(str(spec.get("title") or name)) + (" *" if required else "")
    if spec.get("description"):
        label += f"<br><small>{html.escape(str(spec['description']))}</small>"
    need = " required" if required else ""
    if spec.get("enum") is not None or spec["type"] == "boolean":
        choices = spec.get("enum") or ["true", "false"]
        names = spec.get("enumNames") or choices
        options = "" if required else '<option value=""></option>'
        options += "".join(
            f'<option value="{html.escape(str(c), quote=True)}">{html.escape(str(n))}</option>'
            for c, n in zip(choices, names, strict=False)
        )
        field = f'<select name="{key}" id="{key}"{need}>{options}</select>'
    else:
        kind = "number" if spec["type"] in ("number", "integer") else "text"
        step = (
            ' step="1"' if spec["type"] == "integer" else ' step="any"' if kind == "number" else ""
        )
        field = f'<input type="{kind}" name="{key}" id="{key}"{step}{need}>'
    return f'<label for="{key}">{label}</label>{field}'


def _answer(pending: PendingApproval, body: str) -> dict[str, Any]:
    """The answer a question's form posted, typed by its schema (empty fields left out)."""
    schema = (pending.question or {}).get("schema") or {}
    answer: dict[str, Any] = {}
    for key, values in parse_qs(body, keep_blank_values=True).items():
        if not key.startswith("f.") or not values or values[-1] == "":
            continue
        try:
            answer[key[2:]] = parse_field(schema, key[2:], values[-1])
        except ValueError as error:
            raise InvalidAnswerError(str(error)) from None
    return answer
