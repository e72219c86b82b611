"""``helix serve`` with a trace endpoint: every run it drives reaches the collector."""

from __future__ import annotations

from pathlib import Path

import httpx

from helix.telemetry import read_otel_settings, span_id_of, trace_id_of
from helix.testing import MockModelServer
from tests.telemetry._collector import collector

from .conftest import LiveServer, make_config, start_asking_run, wait_for_event, wait_for_status


def _sign_in(live: LiveServer) -> httpx.Client:
    with live.client() as anonymous:
        answer = anonymous.post("/auth/link", json={"token": live.bootstrap_token})
    assert answer.status_code == 200, answer.text
    return live.client(answer.json()["token"])


def test_the_server_exports_the_runs_it_drives(
    tmp_path: Path, model_server: MockModelServer
) -> None:
    with collector() as received:
        settings = read_otel_settings({"HELIX_OTEL_ENDPOINT": received.url})
        live = LiveServer(make_config(tmp_path, model_server, otel=settings)).start()
        try:
            with _sign_in(live) as owner:
                run_id = start_asking_run(owner, model_server)
                wait_for_event(owner, run_id, "approval.requested")
                (pending,) = owner.get(f"/runs/{run_id}/approvals").json()["approvals"]
                decided = owner.post(
                    f"/runs/{run_id}/approvals/{pending['request_id']}", json={"decision": "allow"}
                )
                assert decided.status_code == 200, decided.text
                wait_for_status(owner, run_id, "completed")
        finally:
            live.stop()  # the exporter sends what it holds as the server stops
        spans = received.wait_for(6)
    mine = [s for s in spans if s.trace_id == trace_id_of(run_id)]
    assert sorted(s.name for s in mine) == [
        "chat gpt-4.1",
        "chat gpt-4.1",
        "execute_tool run_command",
        "invoke_agent default",
        "turn 1",
        "turn 2",
    ]
    (run,) = [s for s in mine if s.span_id == span_id_of(run_id)]
    assert run.attributes["gen_ai.provider.name"] == "openai"
    (tool,) = [s for s in mine if s.name == "execute_tool run_command"]
    names = [name for name, _, _ in tool.events]
    assert "approval.requested" in names
    assert "approval.decided" in names
    assert tool.attributes["helix.tool.outcome"] == "ok"
    chats = [s for s in mine if s.name.startswith("chat")]
    assert all(c.attributes["gen_ai.provider.name"] == "openai" for c in chats)
    assert all(c.attributes["gen_ai.usage.input_tokens"] > 0 for c in chats)
