"""What a server asks of the run goes to its host: elicitation, sampling, roots.

The host here is built by the test with real async functions (the runtime's own
``ask`` and ``sample`` are tested with the runtime); the server is the real test
server over stdio.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from helix.kernel.events import Payload
from helix.mcp.client import McpServerSpec, McpSource
from helix.sandbox import ProcessSandbox
from helix.tools import (
    Elicitation,
    ElicitationAnswer,
    SampleReply,
    SampleRequest,
    SourceHost,
    ToolContext,
    ToolResult,
)

from .conftest import SRC, stdio_server


@asynccontextmanager
async def opened(world: Path, **host: Any) -> AsyncIterator[tuple[McpSource, list[Payload]]]:
    recorded: list[Payload] = []

    async def record(payload: Payload) -> None:
        recorded.append(payload)

    box = ProcessSandbox()
    source = McpSource(McpServerSpec.model_validate(stdio_server()))
    await source.open(
        SourceHost(
            run_id="run_test",
            world=world,
            sandbox=box,
            env={"HELIX_SRC": SRC},
            record=record,
            changed=lambda name: None,
            **host,
        )
    )
    try:
        yield source, recorded
    finally:
        await source.close()
        box.close()


async def use(source: McpSource, tool: str, world: Path, **args: Any) -> ToolResult:
    found = next(t for t in source.tools() if t.name == f"t__{tool}")
    ctx = ToolContext(
        run_id="run_test", call_id=f"call_{tool}", world=world, sandbox=ProcessSandbox()
    )
    return await found.call(ctx, args)


def answering(answer: ElicitationAnswer, asked: list[Elicitation]) -> Callable[..., Any]:
    async def ask(question: Elicitation) -> ElicitationAnswer:
        asked.append(question)
        return answer

    return ask


async def test_an_elicitation_is_put_to_the_hosts_asker(tmp_path: Path) -> None:
    asked: list[Elicitation] = []
    ask = answering(ElicitationAnswer("accept", {"ok": True}), asked)
    async with opened(tmp_path, ask=ask) as (source, _):
        result = await use(source, "confirm", tmp_path, question="Delete it all?")
    assert result.ok
    assert json.loads(result.output) == {"action": "accept", "data": {"ok": True}}
    (question,) = asked
    assert question.source == "mcp:t"
    assert question.message == "Delete it all?"
    assert question.call_id == "call_confirm"
    assert question.schema["properties"]["ok"]["type"] == "boolean"


async def test_without_anyone_to_ask_an_elicitation_is_declined(tmp_path: Path) -> None:
    async with opened(tmp_path) as (source, _):
        result = await use(source, "confirm", tmp_path, question="Delete it all?")
    assert json.loads(result.output) == {"action": "decline", "data": None}


async def test_a_sampling_request_is_served_by_the_hosts_sampler(tmp_path: Path) -> None:
    requests: list[SampleRequest] = []

    async def sample(request: SampleRequest) -> SampleReply:
        requests.append(request)
        return SampleReply(text="short", model="scripted:t")

    async with opened(tmp_path, sample=sample) as (source, _):
        result = await use(source, "summarise", tmp_path, text="a long text")
    assert result.output == "scripted:t: short"
    (request,) = requests
    assert request.source == "mcp:t"
    assert [(m.role, m.text) for m in request.messages] == [("user", "a long text")]
    assert request.system == "Summarise."
    assert request.max_tokens == 64
    assert request.call_id == "call_summarise"


async def test_sampling_refused_by_the_host_is_an_mcp_error_for_the_server(
    tmp_path: Path,
) -> None:
    async def sample(request: SampleRequest) -> SampleReply:
        raise RuntimeError("over budget")

    async with opened(tmp_path, sample=sample) as (source, _):
        refused = await use(source, "summarise", tmp_path, text="x")
    async with opened(tmp_path) as (source, _):
        unserved = await use(source, "summarise", tmp_path, text="x")
    assert not refused.ok
    assert "sampling refused: over budget" in refused.output
    assert not unserved.ok
    assert "this run does not serve sampling requests" in unserved.output


async def test_the_roots_are_the_world(tmp_path: Path) -> None:
    async with opened(tmp_path) as (source, recorded):
        result = await use(source, "roots", tmp_path)
    assert json.loads(result.output) == [tmp_path.as_uri()]
    assert [p.TYPE for p in recorded] == ["mcp.server.started", "mcp.server.stopped"]


async def test_arguments_are_checked_against_the_servers_schema(tmp_path: Path) -> None:
    from helix.errors import InvalidToolArgumentsError

    async with opened(tmp_path) as (source, _):
        echo = next(t for t in source.tools() if t.name == "t__echo")
        try:
            echo.validate({"text": 3})
        except InvalidToolArgumentsError as error:
            problem = str(error)
        else:
            problem = ""
    assert problem.startswith("t__echo: ")
    assert "text: 3 is not of type 'string'" in problem
    assert echo.parameters["required"] == ["text"]
