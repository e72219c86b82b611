"""What a notification says, and the links it carries (``helix.notify``)."""

from __future__ import annotations

import time
from typing import Any

import jwt
import pytest

from helix.errors import ConfigError
from helix.kernel.events import Event, parse_iso
from helix.notify import Links, SecretSigner, Services, check_services, notice

SECRET = b"k" * 32
ASKED = {
    "request_id": "apr_1",
    "call_id": "call_1",
    "name": "run_command",
    "args": {"command": "make deploy"},
    "expires_at": "2099-01-01T00:00:00.000000Z",
}


def _event(type_: str, data: dict[str, Any], run_id: str = "run_a") -> Event:
    return Event(run_id, 3, type_, 1, "2026-01-01T00:00:00Z", 1, "system", data)


def test_an_approval_says_what_to_run_to_answer_it() -> None:
    message = notice(_event("approval.requested", ASKED))
    assert message is not None
    assert message.title == "Approval needed: run_command"
    assert message.body.splitlines() == [
        'Run run_a asks to call run_command with {"command": "make deploy"}.',
        "From a terminal: helix approve run_a apr_1 (or helix deny run_a apr_1)",
        "Deadline: 2099-01-01T00:00:00.000000Z (then it is denied).",
    ]


def test_with_a_server_an_approval_carries_signed_links_that_die_with_it() -> None:
    links = Links("https://helix.example", SecretSigner(SECRET))
    soon = {**ASKED, "expires_at": "2026-01-01T00:10:00.000000Z"}
    message = notice(_event("approval.requested", soon), links)
    assert message is not None
    lines = dict(line.split(": ", 1) for line in message.body.splitlines()[1:3])
    for decision, label in (("allow", "Allow"), ("deny", "Deny")):
        url = lines[label]
        assert url.startswith("https://helix.example/api/v1/links/")
        claims = jwt.decode(
            url.rsplit("/", 1)[1], SECRET, algorithms=["HS256"], options={"verify_exp": False}
        )
        assert claims == {"typ": "link", "run": "run_a", "req": "apr_1", "dec": decision,
                          "exp": int(parse_iso(str(soon["expires_at"]))) + 1}  # fmt: skip
    assert message.body.endswith("Run: https://helix.example/#/runs/run_a")


def test_a_link_lives_a_day_at_most() -> None:
    links = Links("https://helix.example", SecretSigner(SECRET))
    message = notice(_event("approval.requested", ASKED), links)
    assert message is not None
    token = message.body.splitlines()[1].rsplit("/", 1)[1]
    expires = jwt.decode(token, SECRET, algorithms=["HS256"])["exp"]
    assert expires <= time.time() + 86400 + 2


def test_a_waiting_card_says_how_to_choose() -> None:
    asked = {"component_id": "cmp_1", "call_id": "c0", "expires_at": "2099-01-01T00:00:00Z"}
    message = notice(_event("ui.asked", asked))
    assert message is not None
    assert message.title == "Choice needed"
    assert message.body.splitlines() == [
        "Run run_a waits for your choice on an options card (cmp_1).",
        "From a terminal: helix choose run_a cmp_1 NUMBER",
        "Deadline: 2099-01-01T00:00:00Z (then it closes without a choice).",
        "helix show run_a",
    ]


@pytest.mark.parametrize(
    ("type_", "data", "title", "says"),
    [
        ("run.completed", {"summary": "Built."}, "Run completed", "Run run_a completed: Built."),
        ("run.failed", {"error": "boom"}, "Run failed", "Run run_a failed: boom"),
        ("run.paused", {"reason": "budget"}, "Budget reached", "paused at its budget cap"),
        (
            "run.paused",
            {"reason": "model_errors", "detail": "the model's last 5 replies went wrong"},
            "Model keeps getting it wrong",
            "paused: the model's last 5 replies went wrong\nTo go on: helix resume run_a",
        ),
    ],
)
def test_the_ends_worth_telling(type_: str, data: dict[str, Any], title: str, says: str) -> None:
    message = notice(_event(type_, data))
    assert message is not None
    assert message.title == title
    assert says in message.body
    assert message.body.endswith("helix show run_a")


@pytest.mark.parametrize(
    ("type_", "data"),
    [("run.paused", {"reason": "user"}), ("turn.started", {}), ("tool.completed", {"ok": True})],
)
def test_everything_else_is_not_worth_a_notification(type_: str, data: dict[str, Any]) -> None:
    assert notice(_event(type_, data)) is None


def test_a_url_apprise_does_not_understand_is_named_by_number_only() -> None:
    check_services(("json://127.0.0.1:9/hook",))
    with pytest.raises(ConfigError, match="URL number 2") as refused:
        check_services(("json://127.0.0.1:9/hook", "nonsense-scheme://secret-token"))
    assert "secret-token" not in str(refused.value)
    Services(("nonsense-scheme://secret-token",))  # not strict: left out, with a warning
