"""``POST /me/password``: a user who came in by a link sets a password; changing one."""

from __future__ import annotations

import httpx

from .conftest import Admin, LiveServer


def _me(client: httpx.Client) -> dict[str, object]:
    answer = client.get("/me")
    assert answer.status_code == 200, answer.text
    body: dict[str, object] = answer.json()
    return body


def test_an_admin_from_the_link_sets_a_password_and_signs_in_with_it(
    live: LiveServer, owner: httpx.Client
) -> None:
    assert _me(owner)["password"] is False
    short = owner.post("/me/password", json={"password": "short"})
    assert short.status_code == 422, short.text
    assert short.json()["error"]["code"]
    answer = owner.post("/me/password", json={"password": "a-long-password"})
    assert answer.status_code == 200, answer.text
    assert owner.get("/me").status_code == 401  # the old session ended with the change
    with live.client(answer.json()["token"]) as again:
        assert _me(again)["password"] is True
    assert live.login("admin", "a-long-password")


def test_changing_a_password_needs_the_current_one(live: LiveServer, admin: Admin) -> None:
    admin.user("cy", password="first-password")
    with live.client(live.login("cy", "first-password")) as cy:
        assert _me(cy)["password"] is True
        missing = cy.post("/me/password", json={"password": "second-password"})
        assert missing.status_code == 403, missing.text
        assert missing.json()["error"]["message"] == "give your current password to change it"
        wrong = cy.post("/me/password", json={"password": "second-password", "current": "nope"})
        assert wrong.status_code == 403
        assert wrong.json()["error"]["message"] == "the current password is wrong"
        extra = cy.post("/me/password", json={"password": "second-password", "admin": True})
        assert extra.status_code == 422
        body = {"password": "second-password", "current": "first-password"}
        assert cy.post("/me/password", json=body).status_code == 200
    assert live.login("cy", "second-password")


def test_no_session_no_password(live: LiveServer) -> None:
    with live.client() as anonymous:
        answer = anonymous.post("/me/password", json={"password": "a-long-password"})
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "unauthorized"
