"""A run's MCP servers read as one note each in the run view and in the event log."""

from __future__ import annotations

from typing import Any

from helix.api import RunEvent
from helix.cli._render import summarize
from helix.cli._transcript import Note, Transcript


def _event(seq: int, kind: str, data: dict[str, Any]) -> RunEvent:
    return RunEvent.model_construct(
        run_id="run_mcp", seq=seq, type=kind, v=1, ts="", turn=1, actor="system", data=data
    )


EVENTS: list[tuple[str, dict[str, Any]]] = [
    ("mcp.server.started", {"server": "t", "transport": "stdio", "target": "python3",
                            "tools": ["t__echo", "t__grow"], "server_name": "helix-test",
                            "server_version": "1.0", "tier": "bwrap", "restarts": 0}),
    ("mcp.tools.changed", {"server": "t", "added": ["t__late"], "removed": ["t__grow"],
                           "tools": ["t__echo", "t__late"]}),
    ("mcp.egress.decided", {"server": "t", "host": "api.test", "port": 443, "verdict": "deny",
                            "reason": "api.test is not in the egress allowlist"}),
    ("mcp.server.failed", {"server": "t", "reason": "exited (code 7)", "restarts": 1,
                           "gave_up": True}),
    ("mcp.server.stopped", {"server": "t"}),
]  # fmt: skip


def test_each_mcp_event_is_a_note() -> None:
    transcript = Transcript("run_mcp")
    for seq, (kind, data) in enumerate(EVENTS, start=1):
        transcript.add(_event(seq, kind, data))
    notes = [(b.text, b.tone) for b in transcript.blocks if isinstance(b, Note)]
    assert notes == [
        ("MCP server t (stdio in bwrap): t__echo, t__grow", "info"),
        ("MCP server t tools changed: +t__late -t__grow", "info"),
        ("MCP server t deny api.test:443: api.test is not in the egress allowlist", "warn"),
        ("MCP server t failed: exited (code 7) (no more restarts)", "bad"),
        ("MCP server t stopped", "info"),
    ]


def test_each_mcp_event_has_a_log_line() -> None:
    lines = [summarize(_event(1, kind, data)) for kind, data in EVENTS]
    assert lines == [
        "t (stdio) answered",
        "t: +t__late -t__grow",
        "t deny api.test:443",
        "t: exited (code 7)",
        "t",
    ]
