"""Held steps: a mock server's reply that waits for ``release()``; a scripted model's not."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from helix.providers import ModelRequest, Scenario, UserMessage
from helix.providers._registry import open_model
from helix.testing import MockModelServer

REQUEST = ModelRequest(messages=(UserMessage("hi"),))


async def test_a_held_step_answers_after_release_and_later_ones_at_once() -> None:
    scenario = Scenario.of({"text": "first"}, {"text": "held", "held": True}, {"text": "after"})
    with MockModelServer(scenario) as server:
        env = {"OPENAI_API_KEY": "test", "OPENAI_BASE_URL": server.openai_base_url}
        model = open_model("openai:gpt-4.1", env=env)
        try:
            assert (await model.request(REQUEST)).text == "first"  # not held
            call = asyncio.ensure_future(model.request(REQUEST))
            while len(server.requests) < 2:  # noqa: ASYNC110 - a server thread records it
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)
            assert not call.done()
            server.release()
            assert (await call).text == "held"
            assert (await model.request(REQUEST)).text == "after"
        finally:
            await model.aclose()


async def test_a_scripted_model_plays_a_held_step_at_once(tmp_path: Path) -> None:
    path = tmp_path / "held.json"
    path.write_text(json.dumps([{"text": "held", "held": True}]))
    model = open_model(f"scripted:{path}")
    assert (await model.request(REQUEST)).text == "held"
