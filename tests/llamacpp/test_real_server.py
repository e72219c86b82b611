"""Helix against a real llama.cpp server: the protocol and the outcome, not the model's wisdom."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helix.providers import (
    AssistantMessage,
    ModelRequest,
    TextDelta,
    ToolResult,
    ToolSpec,
    UserMessage,
    collect,
    open_model,
)

from .conftest import ALIAS, LlamaServer, Steering

pytestmark = pytest.mark.xdist_group("llama")

MODEL = f"llamacpp:{ALIAS}"
LIST_FILES = ToolSpec(
    "list_files",
    "List the files of a folder.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def _helix(home: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("HELIX_", "LLAMACPP_"))}
    env = {**inherited, "HELIX_HOME": str(home), "LLAMACPP_BASE_URL": url}
    return subprocess.run(
        [sys.executable, "-m", "helix", *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )


def _events(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def _world(tmp_path: Path) -> Path:
    world = tmp_path / "world"
    world.mkdir()
    (world / "notes.txt").write_text("hello\n")
    return world


def test_helix_models_lists_the_servers_model(tmp_path: Path, llama: LlamaServer) -> None:
    result = _helix(tmp_path / "home", llama.url, "models")
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stdout.splitlines() if f"{llama.url}/models" in line]
    assert line.split() == ["llamacpp", f"{llama.url}/models", "1", "model"]
    assert f"llamacpp:{ALIAS}" in result.stdout


def test_a_plain_run_completes_with_usage_and_no_cost(
    tmp_path: Path, steered: tuple[Steering, str]
) -> None:
    steering, url = steered
    steering.choices = ["none"]  # left to itself, the tiny model often says nothing
    world = _world(tmp_path)
    result = _helix(
        tmp_path / "home", url,
        "run", "Say what you see.", "--model", MODEL, "--dir", str(world), "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = _events(result)
    (answer,) = _of(events, "model.responded")
    assert answer["data"]["usage"]["input_tokens"] > 0
    assert answer["data"]["usage"]["output_tokens"] > 0
    assert answer["data"]["cost_usd"] == 0
    assert events[-1]["type"] == "run.completed"
    assert events[-1]["data"]["summary"].startswith("I found ")
    assert steering.sent[0]["tool_choice"] == "auto"  # the run's tools were offered


def _blueprint(tmp_path: Path) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(
        f"model: {MODEL}\n"
        "system: You list files when asked, then say what you found.\n"
        "tools: [list_files]\n"
        "budget: {max_turns: 4}\n"
        "max_tokens: 96\n"
    )
    return path


def test_a_run_calls_a_tool_then_answers_on_the_real_server(
    tmp_path: Path, steered: tuple[Steering, str]
) -> None:
    steering, url = steered
    steering.choices = ["list_files", "none"]
    world = _world(tmp_path)
    result = _helix(
        tmp_path / "home", url,
        "run", "List the files here, then tell me what you found.",
        "--blueprint", str(_blueprint(tmp_path)), "--dir", str(world), "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = _events(result)
    assert events[-1]["type"] == "run.completed", [e["type"] for e in events]
    (called,) = _of(events, "tool.requested")
    assert called["data"]["name"] == "list_files"
    (done,) = _of(events, "tool.completed")  # what the tiny model asked for is its own affair
    assert events[-1]["data"]["summary"].startswith("I found ")
    assert steering.statuses == [200, 200]

    first, second = steering.sent
    assert first["tool_choice"] == "auto"  # Helix offers its tools; the server must see them
    assert [t["function"]["name"] for t in first["tools"]] == ["list_files"]
    replied = [m for m in second["messages"] if m["role"] == "assistant"]
    assert replied
    assert all(isinstance(m["content"], str) for m in replied)
    assert replied[-1]["tool_calls"][0]["function"]["name"] == "list_files"
    (result_message,) = [m for m in second["messages"] if m["role"] == "tool"]
    assert result_message["tool_call_id"] == replied[-1]["tool_calls"][0]["id"]
    assert result_message["content"] == done["data"]["output"]


async def test_a_streamed_tool_call_and_its_answer_assemble(steered: tuple[Steering, str]) -> None:
    steering, url = steered
    steering.choices = ["list_files", "none"]
    model = open_model(MODEL, env={"LLAMACPP_BASE_URL": url})
    try:
        ask = ModelRequest(
            messages=(UserMessage("List the files in the folder 'docs'."),),
            tools=(LIST_FILES,),
            max_tokens=64,
            temperature=0.0,
        )
        called = await collect(model.stream(ask), model.provider)
        (call,) = called.tool_calls
        assert call.name == "list_files"
        assert isinstance(call.args, dict)
        assert called.stop_reason == "tool_calls"

        follow = ModelRequest(
            messages=(
                *ask.messages,
                AssistantMessage(called.text, called.tool_calls),
                ToolResult(call.id, call.name, "docs/index.md\ndocs/usage.md"),
            ),
            tools=(LIST_FILES,),
            max_tokens=32,
            temperature=0.0,
        )
        answered = await collect(model.stream(follow), model.provider)
        assert answered.tool_calls == ()
        assert answered.text.startswith("I found ")
    finally:
        await model.aclose()
    assert steering.statuses == [200, 200]
    assert all(body["stream"] is True for body in steering.sent)


def test_a_killed_server_fails_the_run_cleanly(tmp_path: Path, llama: LlamaServer) -> None:
    server = LlamaServer(tmp_path / "server.log")
    server.stop()
    world = _world(tmp_path)
    result = _helix(
        tmp_path / "home", server.url,
        "run", "Say hello.", "--model", MODEL, "--dir", str(world), "--json",
    )  # fmt: skip
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    events = _events(result)
    failures = _of(events, "model.failed")
    assert [f["data"]["attempt"] for f in failures] == [1, 2, 3, 4]
    assert all("could not be reached" in f["data"]["error"] for f in failures)
    (failed,) = _of(events, "run.failed")
    assert "could not be reached" in failed["data"]["error"]


async def test_a_streamed_run_calls_a_tool_then_answers_on_the_real_server(
    tmp_path: Path, helix_home: Path, steered: tuple[Steering, str]
) -> None:
    from helix.kernel.log import MemoryEventStore
    from helix.runtime import Blueprint, Engine, ModelDelta
    from helix.sandbox import ProcessSandbox

    steering, url = steered
    steering.choices = ["list_files", "none"]
    pieces: list[ModelDelta] = []

    class Sink:
        def watching(self, run_id: str) -> bool:
            return True

        async def __call__(self, delta: ModelDelta) -> None:
            pieces.append(delta)

    sink = Sink()

    engine = Engine(
        MemoryEventStore(),
        home=helix_home,
        sandbox=ProcessSandbox(),
        env={"LLAMACPP_BASE_URL": url},
        deltas=sink,
    )
    blueprint = Blueprint.parse(
        {"model": MODEL, "tools": ["list_files"], "max_tokens": 96}, source="llama.yaml"
    )
    run = await engine.create("List the files, then say what you found.", blueprint=blueprint,
                              world=_world(tmp_path))  # fmt: skip
    state = await engine.drive(run.id)

    assert state.status == "completed"
    log = await engine.store.read(run.id)
    answers = [e.data for e in log if e.type == "model.responded"]
    assert len(answers) == 2
    assert answers[0]["tool_calls"][0]["name"] == "list_files"
    assert len([e for e in log if e.type == "tool.completed"]) == 1
    said = "".join(p.delta.text for p in pieces if p.turn == 2 and isinstance(p.delta, TextDelta))
    assert said == answers[1]["text"]
    assert said.startswith("I found ")
    assert all(body["stream"] is True for body in steering.sent)
    assert steering.statuses == [200, 200]
    # llama-cpp-python's server sends no usage in a stream: estimated, and marked so
    assert all(a["usage"]["estimated"] is True for a in answers)
    assert all(a["usage"]["input_tokens"] > 0 for a in answers)
