"""A model the server cannot use is a 422 naming the fix; no run is left behind."""

from __future__ import annotations

import httpx

from .conftest import LiveServer


def test_a_model_without_its_key_is_refused_with_the_variable(
    live: LiveServer, owner: httpx.Client
) -> None:
    answer = owner.post(
        "/runs", json={"objective": "hello", "model": "anthropic:claude-sonnet-4-5"}
    )
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["code"] == "missing_api_key"
    assert error["message"] == "anthropic needs an API key: set ANTHROPIC_API_KEY"
    assert owner.get("/runs").json()["runs"] == []
