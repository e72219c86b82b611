"""The SDK's budgets, through both doors (embedded on HELIX_DB, and a server)."""

from __future__ import annotations

import pytest

from helix import Client
from helix.budgets import BudgetNotFoundError
from helix.errors import ConfigError
from helix.testing import MockModelServer

from .conftest import MODEL, Door, play


def test_budgets_through_the_sync_client(door: Door, model_server: MockModelServer) -> None:
    client = (
        Client(door.url, token=door.token)
        if door.url is not None
        else Client(env=door.env, user="tester")
    )
    with client:
        usage = client.set_budget("workspace", period="day", tokens=10)  # the door's own
        assert (usage.budget.tokens, usage.left_tokens, usage.spent_tokens) == (10, 10, 0)
        play(model_server, {"text": "Done."})
        run = client.create("over", model=MODEL)  # 10 tokens cannot hold a call
        for event in client.events(run.id, follow=True):
            if event.type == "run.paused":
                break
        assert client.get(run.id).status == "paused"
        (listed,) = client.budgets().budgets
        assert listed.scope == usage.scope
        with pytest.raises(ConfigError, match="a cap is 0 or more"):
            client.set_budget("person", name="ann", usd=-2.0)
        client.remove_budget("workspace", period="day")
        with pytest.raises(BudgetNotFoundError):
            client.remove_budget("workspace", period="day")
        assert client.budgets().budgets == []
        client.cancel(run.id)
