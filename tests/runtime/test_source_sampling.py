"""A tool source's sampling is served by the run's model over HTTP (the mock provider),
counted against the run's budget, refused past its cap, and gated by ``sampling.allow``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helix.errors import SamplingRefusedError
from helix.kernel.events import Event
from helix.kernel.log import EventStore, MemoryEventStore
from helix.kernel.session import SpendQuery, replay_run, spend, trace
from helix.providers import Scenario
from helix.runtime import Blueprint, Engine, ModelPrice, decide
from helix.testing import MockModelServer
from helix.tools import SampleReply

from ._asking_sources import SAMPLE_CALL, AskingSource

MODEL = "openai:house-model"
PRICE = {MODEL: ModelPrice(input=1.0, output=2.0)}
"""A dollar per million input tokens, two per million output."""
CALL_USAGE = {"input_tokens": 1000, "output_tokens": 10}
SAMPLE_USAGE = {"input_tokens": 100_000, "output_tokens": 50_000}
"""The sampled reply's tokens: $0.10 + $0.10."""


@pytest.fixture
def server() -> Iterator[MockModelServer]:
    """The run's model over HTTP: the call, the sampled reply, the final answer, in order."""
    steps: list[dict[str, Any]] = [
        {**SAMPLE_CALL, "usage": CALL_USAGE},
        {"text": "Sunny.", "usage": SAMPLE_USAGE},
        {"text": "done", "usage": CALL_USAGE},
    ]
    with MockModelServer(Scenario.of(*steps)) as mock:
        yield mock


def _engine(home: Path, server: MockModelServer, source: AskingSource) -> Engine:
    env = {"OPENAI_API_KEY": "test-no-key", "OPENAI_BASE_URL": server.openai_base_url}
    return Engine(MemoryEventStore(), home=home, env=env, sources=lambda setup: [source])


def _blueprint(allow: str, usd: float | None = None, max_tokens: int = 1024) -> Blueprint:
    return Blueprint.model_validate(
        {
            "model": MODEL,
            "prices": PRICE,
            "budget": {"usd": usd},
            "sampling": {"allow": allow, "max_tokens": max_tokens},
        }
    )


async def _events(store: EventStore, run_id: str, event_type: str) -> list[Event]:
    return [e for e in await store.read(run_id) if e.type == event_type]


async def test_sampling_within_budget_is_served_recorded_and_counted(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    source = AskingSource(max_tokens=4000)
    engine = _engine(helix_home, server, source)
    blueprint = _blueprint("allow", usd=1.0, max_tokens=500)
    record = await engine.create("sample", blueprint=blueprint, world=tmp_path, attended=False)
    state = await engine.drive(record.id)
    assert state.status == "completed", state.error
    assert source.answers == [SampleReply("Sunny.", MODEL, "endTurn")]
    (sampled,) = await _events(engine.store, record.id, "mcp.sampled")
    assert sampled.data["source"] == "test:asking"
    assert sampled.data["call_id"] == "s1"
    assert sampled.data["model"] == MODEL
    assert sampled.data["text"] == "Sunny."
    assert sampled.data["cost_usd"] == pytest.approx(0.2)
    assert sampled.data["usage"]["output_tokens"] == 50_000
    # What the model was sent: the source's prompt, its system text, no tools, capped tokens.
    sent = server.requests[1].body
    assert sent["messages"][-1]["content"] == "Summarise the weather in one word."
    assert "tools" not in sent
    assert sent.get("max_tokens", sent.get("max_completion_tokens")) == 500
    # The run's spend: its two model calls and the sampling, in state, spend and trace.
    calls = 2 * (1000 * 1.0 + 10 * 2.0) / 1e6
    assert state.own_usage.cost_usd == pytest.approx(0.2 + calls)
    assert state.usage_by_model[MODEL].output_tokens == 50_020
    report = await spend(engine.store, query=SpendQuery(by="model"))
    assert report.total.cost_usd == pytest.approx(0.2 + calls)
    traced = await trace(engine.store, record.id)
    assert traced.cost_usd == pytest.approx(0.2 + calls)
    # Replay reads the text back: the model is not asked again.
    again = await replay_run(engine.store, record.id)
    assert again.own_usage.cost_usd == pytest.approx(state.own_usage.cost_usd)
    assert len(server.requests) == 3


async def test_sampling_that_could_pass_the_cap_is_refused(
    tmp_path: Path, helix_home: Path, server: MockModelServer
) -> None:
    source = AskingSource(max_tokens=1_000_000)
    engine = _engine(helix_home, server, source)
    blueprint = _blueprint("allow", usd=0.5, max_tokens=1_000_000)  # $2 of output at most
    record = await engine.create("sample", blueprint=blueprint, world=tmp_path, attended=False)
    await engine.drive(record.id)
    (refusal,) = source.answers
    assert isinstance(refusal, SamplingRefusedError)
    assert "could take the run past its budget cap ($0.5000" in str(refusal)
    (refused,) = await _events(engine.store, record.id, "mcp.sample_refused")
    assert refused.data["call_id"] == "s1"
    assert "budget cap" in refused.data["reason"]
    assert not await _events(engine.store, record.id, "mcp.sampled")
    assert len(server.requests) == 2  # the model was not sampled


@pytest.mark.parametrize(
    ("allow", "reason"),
    [
        ("deny", "the blueprint's sampling.allow is deny"),
        ("ask", "it needs a person's approval, and nobody attends this run"),
    ],
)
async def test_sampling_denied_by_the_blueprint_or_unattended_is_refused(
    tmp_path: Path, helix_home: Path, server: MockModelServer, allow: str, reason: str
) -> None:
    source = AskingSource()
    engine = _engine(helix_home, server, source)
    record = await engine.create(
        "sample", blueprint=_blueprint(allow), world=tmp_path, attended=False
    )
    assert (await engine.drive(record.id)).status == "completed"
    (refused,) = await _events(engine.store, record.id, "mcp.sample_refused")
    assert refused.data["reason"] == reason
    assert str(source.answers[0]) == reason
    assert not await _events(engine.store, record.id, "approval.requested")
    (completed,) = await _events(engine.store, record.id, "tool.completed")
    assert completed.data["ok"] is False


async def _first(store: EventStore, run_id: str, event_type: str) -> Event:
    async with store.subscribe(run_id) as events:
        async for event in events:
            if event.type == event_type:
                return event
    raise AssertionError(f"the log ended without {event_type}")


@pytest.mark.parametrize("decision", ["allow", "deny"])
async def test_sampling_asks_a_person_by_default(
    tmp_path: Path, helix_home: Path, server: MockModelServer, decision: str
) -> None:
    source = AskingSource()
    engine = _engine(helix_home, server, source)
    blueprint = Blueprint.model_validate({"model": MODEL, "prices": PRICE})
    assert blueprint.sampling.allow == "ask"
    record = await engine.create("sample", blueprint=blueprint, world=tmp_path)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(engine.drive(record.id))
        asked = await _first(engine.store, record.id, "approval.requested")
        assert asked.data["name"] == "sampling"
        assert asked.data["args"] == {"source": "test:asking", "max_tokens": 200}
        assert asked.data["question"] == {
            "source": "test:asking",
            "message": "[system]\nBe brief.\n\n[user]\nSummarise the weather in one word.",
            "schema": {},
        }
        await decide(engine.store, record.id, asked.data["request_id"], decision, by="user:ann")
    assert driving.result().status == "completed"
    if decision == "allow":
        assert source.answers == [SampleReply("Sunny.", MODEL, "endTurn")]
        assert len(await _events(engine.store, record.id, "mcp.sampled")) == 1
    else:
        (refused,) = await _events(engine.store, record.id, "mcp.sample_refused")
        assert refused.data["reason"] == "denied by user:ann"
        assert not await _events(engine.store, record.id, "mcp.sampled")
