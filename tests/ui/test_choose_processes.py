"""An options card answered from another process: ``helix choose`` and the embedded SDK.

Real processes: ``helix run --detach`` leaves the run to a background ``helix resume``;
the card is answered by a ``helix choose`` process of its own (or by ``Client.choose``),
and the run's own process hands the choice to the waiting ``ask_choice`` call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helix import Client
from helix.api import ChoiceCard, Run, RunEvent
from helix.providers import Scenario
from helix.testing import MockModelServer

MODEL = "openai:gpt-4.1"
WAIT_S = 90.0
"""A safety net for a busy machine, never a performance limit."""

ASK = {
    "text": "Asking.",
    "tool_calls": [
        {
            "name": "ask_choice",
            "args": {
                "question": "Which database?",
                "choices": [
                    {"id": "sqlite", "label": "SQLite"},
                    {"id": "postgres", "label": "PostgreSQL", "description": "a server"},
                ],
            },
        }
    ],
}


class Here:
    """``helix`` on a store of its own, its model the mock model server."""

    def __init__(self, tmp_path: Path, model_server: MockModelServer) -> None:
        self.home = tmp_path / "home"
        self.world = tmp_path / "world"
        self.world.mkdir()
        inherited = {k: v for k, v in os.environ.items() if not k.startswith(("HELIX_", "OPENAI_"))}
        self.env = {
            **inherited,
            "HELIX_HOME": str(self.home),
            "HELIX_USER": "ann",
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": model_server.openai_base_url,
        }
        self.model = model_server
        self.client = Client(home=self.home, env=self.env)

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "helix", *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=WAIT_S,
        )

    def detach(self, *options: str) -> str:
        started = self("run", "pick one", "--model", MODEL, "--dir", str(self.world),
                       "--detach", *options)  # fmt: skip
        assert started.returncode == 0, started.stderr
        return started.stdout.strip()

    def wait(self, what: str, check: Any) -> Any:
        deadline = time.monotonic() + WAIT_S
        while True:
            value = check()
            if value:
                return value
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}")
            time.sleep(0.05)

    def card(self, run_id: str) -> ChoiceCard:
        def waiting() -> ChoiceCard | None:
            run = self.client.get(run_id)
            cards = self.client.choices(run_id) if run.status == "waiting" else []
            return cards[0] if cards else None

        found: ChoiceCard = self.wait("a waiting card", waiting)
        return found

    def ended(self, run_id: str) -> Run:
        def check() -> Run | None:
            run = self.client.get(run_id)
            return run if run.status in ("completed", "failed", "cancelled") else None

        run: Run = self.wait("the run's end", check)
        return run

    def events(self, run_id: str) -> list[RunEvent]:
        return list(self.client.events(run_id))


@pytest.fixture
def model_server() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


@pytest.fixture
def here(tmp_path: Path, model_server: MockModelServer) -> Iterator[Here]:
    harness = Here(tmp_path, model_server)
    try:
        yield harness
    finally:
        for run in harness.client.runs().runs:  # nothing left driving in the background
            if run.status not in ("completed", "failed", "cancelled"):
                harness.client.cancel(run.id)
        harness.client.close()


def _result(events: list[RunEvent]) -> dict[str, Any]:
    (result,) = [e.data for e in events if e.type == "tool.completed"]
    return result


def test_helix_choose_answers_the_card_from_another_process(here: Here) -> None:
    here.model.play(Scenario.of(ASK, {"text": "PostgreSQL it is."}))
    run_id = here.detach()
    card = here.card(run_id)
    assert card.question == "Which database?"
    assert [c.id for c in card.choices] == ["sqlite", "postgres"]
    assert card.expires_at is not None

    wrong = here("choose", run_id, "mysql")
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == (
        f"error: component {card.component_id!r} has no choice 'mysql': its choices are"
        " sqlite, postgres"
    )
    chose = here("choose", run_id, card.component_id, "2")  # a number, counted from 1
    assert chose.returncode == 0, chose.stderr
    assert chose.stdout.strip() == f"chose postgres (PostgreSQL) on {card.component_id}"

    assert here.ended(run_id).status == "completed"
    events = here.events(run_id)
    (chosen,) = [e for e in events if e.type == "ui.chosen"]
    assert chosen.data["choice"] == "postgres"
    assert chosen.actor == chosen.data["by"] == "user:ann"
    result = _result(events)
    assert result["ok"] is True
    assert json.loads(result["output"]) == {
        "choice": "postgres", "label": "PostgreSQL", "by": "user:ann"
    }  # fmt: skip
    again = here("choose", run_id, "sqlite")
    assert again.returncode == 1
    assert again.stderr.strip() == f"error: run {run_id!r} waits for no choice"
    unknown = here("choose", run_id, "cmp_000000000000", "sqlite")
    assert unknown.returncode == 3


def test_the_sdk_answers_the_card(here: Here) -> None:
    here.model.play(Scenario.of(ASK, {"text": "SQLite it is."}))
    run_id = here.detach()
    card = here.card(run_id)
    made = here.client.choose(run_id, None, "sqlite")
    assert (made.component_id, made.choice) == (card.component_id, "sqlite")
    assert here.ended(run_id).status == "completed"
    assert json.loads(_result(here.events(run_id))["output"])["choice"] == "sqlite"
    assert here.client.choices(run_id) == []


def test_an_unattended_run_fails_the_call_at_once(here: Here) -> None:
    here.model.play(Scenario.of(ASK, {"text": "Nobody to ask."}))
    run_id = here.detach("--unattended")
    assert here.ended(run_id).status == "completed"
    events = here.events(run_id)
    result = _result(events)
    assert result["ok"] is False
    assert "nobody attends this run" in result["output"]
    assert not [e for e in events if e.type.startswith("ui.")]
