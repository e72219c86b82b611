"""``scripted:PATH`` and the scenario files it reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helix.errors import ModelRequestError, ScenarioError
from helix.providers import (
    AssistantMessage,
    ModelRequest,
    Scenario,
    ToolCall,
    ToolResult,
    UserMessage,
    collect,
)
from helix.providers._registry import open_model
from helix.providers._scripted import ScriptedModel

STEPS: list[dict[str, Any]] = [
    {"text": "Looking.", "tool_calls": [{"name": "read_file", "args": {"path": "a.txt"}}]},
    {"text": "Done.", "usage": {"input_tokens": 50, "output_tokens": 2}},
]


def conversation(turns: int) -> ModelRequest:
    messages: list[UserMessage | AssistantMessage | ToolResult] = [UserMessage("go")]
    for n in range(turns):
        call = ToolCall(f"c{n}", "read_file", {"path": "a.txt"})
        messages += [AssistantMessage("Looking.", (call,)), ToolResult(f"c{n}", "read_file", "x")]
    return ModelRequest(messages=tuple(messages))


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("s.json", json.dumps({"steps": STEPS})),
        ("s.yaml", "- text: Looking.\n  tool_calls:\n    - {name: read_file, args: {path: a.txt}}\n"
                   "- text: Done.\n  usage: {input_tokens: 50, output_tokens: 2}\n"),
        ("s.toml", '[[steps]]\ntext = "Looking."\n[[steps.tool_calls]]\nname = "read_file"\n'
                   'args = {path = "a.txt"}\n[[steps]]\ntext = "Done."\n'
                   "usage = {input_tokens = 50, output_tokens = 2}\n"),
    ],
)  # fmt: skip
async def test_plays_a_scenario_file(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    model = open_model(f"scripted:{path}")
    assert model.name == f"scripted:{path}"
    first = await model.request(conversation(0))
    assert first.text == "Looking."
    assert first.tool_calls == (ToolCall("call_0_0", "read_file", {"path": "a.txt"}),)
    assert first.stop_reason == "tool_calls"
    second = await model.request(conversation(1))
    assert (second.text, second.usage.input_tokens, second.stop_reason) == ("Done.", 50, "end")


async def test_replies_follow_the_conversation_not_the_call_count() -> None:
    """A run resumed after a crash asks again and gets the same reply."""
    model = ScriptedModel(Scenario.of(*STEPS))
    again = [await model.request(conversation(1)) for _ in range(3)]
    assert {r.text for r in again} == {"Done."}


async def test_streaming_matches_the_plain_reply() -> None:
    model = ScriptedModel(Scenario.of(*STEPS))
    plain = await model.request(conversation(0))
    streamed = await collect(model.stream(conversation(0)), "scripted")
    assert (streamed.text, streamed.tool_calls) == (plain.text, plain.tool_calls)


async def test_running_out_of_steps_is_a_clear_error() -> None:
    model = ScriptedModel(Scenario.of(*STEPS), label="two.yaml")
    with pytest.raises(ModelRequestError, match="no reply for model call 3"):
        await model.request(conversation(2))


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("bad.json", "{not json", "does not parse"),
        ("bad.yaml", "steps: [text: [unclosed", "does not parse"),
        ("bad.txt", "steps: []", "unknown scenario format"),
        ("bad2.json", json.dumps({"steps": [{"txet": "typo"}]}), "steps.0.txet"),
        ("bad3.json", json.dumps({"steps": [{"error": {"status": 200}}]}), "steps.0.error.status"),
        ("bad4.json", json.dumps({"nothing": 1}), "steps"),
    ],
)
def test_bad_scenario_files_name_the_fix(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ScenarioError, match=message) as caught:
        Scenario.from_file(path)
    assert "\n" not in str(caught.value)


def test_missing_scenario_file() -> None:
    with pytest.raises(ScenarioError, match="cannot read scenario"):
        open_model("scripted:/no/such/scenario.yaml")
