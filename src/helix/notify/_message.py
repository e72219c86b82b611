"""The notification an event calls for: its title, its text, its links.

Sent for an approval asked (with what to run to answer it, and, given ``Links``,
signed Allow and Deny links; a tool source's question with Answer and Decline links),
a run completed or failed, and a run paused at its budget or because its model got
too many replies wrong in a row. Every other event calls for none.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from helix.kernel.events import Event, parse_iso

LINK_MAX_S = 86400.0
"""The longest a decision link lives (it also dies at the approval's deadline)."""


class LinkSigner(Protocol):
    """Signs a link's claims (the server's ``Signer``; ``SecretSigner`` elsewhere)."""

    def sign(self, claims: dict[str, Any]) -> str:
        """A token carrying ``claims`` that the server will verify."""
        ...


class SecretSigner:
    """Signs link claims with the server's key (HS256), read from the shared database."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def sign(self, claims: dict[str, Any]) -> str:
        """A JWT carrying ``claims``, as the server signs its own links."""
        import jwt

        return jwt.encode(claims, self._secret, algorithm="HS256")


def decision_link(
    signer: LinkSigner,
    public_url: str,
    run_id: str,
    data: dict[str, Any],
    decision: Literal["allow", "deny"],
) -> str:
    """The URL that allows (or denies) the approval ``data`` describes, until it expires.

    It expires at the approval's deadline, and at most ``LINK_MAX_S`` from now.
    """
    expires = time.time() + LINK_MAX_S
    if data.get("expires_at"):
        expires = min(expires, parse_iso(str(data["expires_at"])))
    claims = {
        "typ": "link",
        "run": run_id,
        "req": str(data["request_id"]),
        "dec": decision,
        "exp": int(expires) + 1,
    }
    return f"{public_url}/api/v1/links/{signer.sign(claims)}"


@dataclass(frozen=True, slots=True)
class Links:
    """Where people reach the server (``public_url``), and what signs its decision links."""

    public_url: str
    signer: LinkSigner

    def run(self, run_id: str) -> str:
        """The run's page on the dashboard."""
        return f"{self.public_url}/#/runs/{run_id}"

    def decision(
        self, run_id: str, data: dict[str, Any], decision: Literal["allow", "deny"]
    ) -> str:
        """A signed link that records ``decision`` on the approval ``data`` describes."""
        return decision_link(self.signer, self.public_url, run_id, data, decision)


@dataclass(frozen=True, slots=True)
class Notice:
    """One notification: a title and a plain-text body."""

    title: str
    body: str


def notice(event: Event, links: Links | None = None) -> Notice | None:
    """The notification ``event`` calls for, or ``None``.

    An approval's says how to answer it from a terminal (``helix approve RUN REQUEST``,
    ``helix deny …``) and, given ``links``, carries an Allow and a Deny link; an options
    card waiting for a choice (``ui.asked``) says how to choose, and where.
    """
    data: dict[str, Any] = event.data
    run_id = event.run_id
    where = f"\n{links.run(run_id)}" if links is not None else f"\nhelix show {run_id}"
    if event.type == "approval.requested" and data.get("question"):
        return _question(run_id, data, links)
    if event.type == "approval.requested":
        request = str(data["request_id"])
        lines = [f"Run {run_id} asks to call {data['name']} with {json.dumps(data['args'])}."]
        if links is not None:
            lines.append(f"Allow: {links.decision(run_id, data, 'allow')}")
            lines.append(f"Deny: {links.decision(run_id, data, 'deny')}")
        lines.append(f"From a terminal: helix approve {run_id} {request}"
                     f" (or helix deny {run_id} {request})")  # fmt: skip
        deadline = data.get("expires_at") or "none"
        lines.append(f"Deadline: {deadline} (then it is denied)."
                     + (f" Run: {links.run(run_id)}" if links is not None else ""))  # fmt: skip
        return Notice(f"Approval needed: {data['name']}", "\n".join(lines))
    if event.type == "ui.asked":
        card = str(data["component_id"])
        lines = [f"Run {run_id} waits for your choice on an options card ({card}).",
                 f"From a terminal: helix choose {run_id} {card} NUMBER",
                 f"Deadline: {data.get('expires_at') or 'none'} (then it closes without a"
                 " choice)."]  # fmt: skip
        return Notice("Choice needed", "\n".join(lines) + where)
    if event.type == "run.completed":
        return Notice("Run completed", f"Run {run_id} completed: {data.get('summary')}{where}")
    if event.type == "run.failed":
        return Notice("Run failed", f"Run {run_id} failed: {data.get('error')}{where}")
    if event.type == "run.paused" and data.get("reason") == "budget":
        return Notice("Budget reached", f"Run {run_id} paused at its budget cap.{where}")
    if event.type == "run.paused" and data.get("reason") == "model_errors":
        text = f"Run {run_id} paused: {data.get('detail')}\nTo go on: helix resume {run_id}"
        return Notice("Model keeps getting it wrong", f"{text}{where}")
    return None


def _question(run_id: str, data: dict[str, Any], links: Links | None) -> Notice:
    """A source's question: its words quoted as JSON text, and how to answer or decline it."""
    question = data["question"]
    request = str(data["request_id"])
    fields = list((question.get("schema") or {}).get("properties") or {})
    lines = [f"Run {run_id}: {question['source']} asks (its words, not Helix's):",
             json.dumps(str(question["message"]))]  # fmt: skip
    if links is not None:
        lines.append(f"Answer: {links.decision(run_id, data, 'allow')}")
        lines.append(f"Decline: {links.decision(run_id, data, 'deny')}")
    answer = " ".join(f"--answer {name}=…" for name in fields)
    lines.append(f"From a terminal: helix approve {run_id} {request} {answer}".rstrip()
                 + f" (or helix deny {run_id} {request})")  # fmt: skip
    lines.append(f"Deadline: {data.get('expires_at') or 'none'} (then it is cancelled).")
    return Notice(f"Question from {question['source']}", "\n".join(lines))
