"""A stored blueprint's strategy is checked like the rest of it: a bad one is a 422."""

from __future__ import annotations

import httpx
import pytest

from .conftest import MODEL, LiveServer


@pytest.mark.parametrize(
    ("strategy", "message"),
    [
        ({"kind": "tree_of_thoughts", "branches": 1, "judge": {"command": "true"}}, "branches"),
        ({"kind": "tree_of_thoughts", "judge": {"oracle": "x"}}, "unknown judge"),
        ({"kind": "tree_of_thoughts", "judge": {"kind": "command"}}, "judge.command.command"),
        ({"kind": "ponder"}, "Input tag 'ponder'"),
    ],
)
def test_a_bad_strategy_is_refused_with_a_422(
    live: LiveServer, owner: httpx.Client, strategy: dict[str, object], message: str
) -> None:
    answer = owner.put(
        "/workspaces/default/blueprints/tree", json={"model": MODEL, "strategy": strategy}
    )
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["code"] == "invalid_blueprint"
    assert message in error["message"]
    assert owner.get("/workspaces/default/blueprints").json() == {"blueprints": []}


def test_a_good_strategy_is_stored_as_given(live: LiveServer, owner: httpx.Client) -> None:
    strategy = {"kind": "tree_of_thoughts", "branches": 2, "judge": {"command": "pytest -q"}}
    stored = owner.put(
        "/workspaces/default/blueprints/tree", json={"model": MODEL, "strategy": strategy}
    )
    assert stored.status_code == 200, stored.text
    got = owner.get("/workspaces/default/blueprints/tree").json()["strategy"]
    assert got["kind"] == "tree_of_thoughts"
    assert got["judge"] == {
        "kind": "command",
        "command": "pytest -q",
        "score": "exit",
        "timeout_s": None,
    }
