"""The SDK answers a tool source's question: ``decide(..., answer=)``, sync and async.

The run is driven by an engine of its own on the store (with the test's source); the
clients are other connections to it, as another program would be.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helix import AsyncClient, Client
from helix.errors import InvalidAnswerError
from helix.kernel.log import open_store
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.tools import ElicitationAnswer
from tests.runtime._asking_sources import ASK_CALL, AskingSource


@pytest.mark.parametrize("kind", ["async", "sync"])
async def test_the_sdk_answers_a_question(tmp_path: Path, helix_home: Path, kind: str) -> None:
    home = helix_home
    env = {"HELIX_HOME": str(home), "HELIX_DB": f"sqlite:///{home / 'helix.db'}"}
    store = await open_store(env["HELIX_DB"])
    source = AskingSource()

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(Scenario.of(ASK_CALL, {"text": "done"}), label="t")

    engine = Engine(store, home=home, model_factory=model, env={}, sources=lambda s: [source])
    record = await engine.create("ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    driving = asyncio.create_task(engine.drive(record.id))
    try:
        async with store.subscribe(record.id) as events:
            async for event in events:
                if event.type == "approval.requested":
                    break
        if kind == "async":
            async with AsyncClient(env=env, user="ann") as client:
                (pending,) = await client.approvals(record.id)
                assert pending.question is not None
                assert pending.question.fields["properties"]["name"]["type"] == "string"
                with pytest.raises(InvalidAnswerError, match="missing required field"):
                    await client.decide(record.id, None, "allow", answer={"age": 1})
                await client.decide(record.id, None, "allow", answer={"name": "Ada"})
        else:

            def answer() -> None:
                with Client(env=env, user="ann") as client:
                    (pending,) = client.approvals(record.id)
                    assert pending.question is not None
                    assert pending.question.source == "test:asking"
                    client.decide(record.id, pending.request_id, "allow", answer={"name": "Ada"})

            await asyncio.to_thread(answer)
        state = await asyncio.wait_for(driving, 60)
    finally:
        await store.close()
    assert state.status == "completed"
    assert source.answers == [ElicitationAnswer("accept", {"name": "Ada"})]
