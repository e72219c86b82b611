"""Helix's own tools through ``helix.testing.conformance.ToolConformance``.

The built-in tools (``builtin_registry``) and the example tools with outside effects
(``example_tools``) pass the same suite a plugin's or an MCP server's tools do.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from helix.testing.conformance import SlowCall, ToolConformance, ToolSample
from helix.tools import ToolDef, ToolRegistry, builtin_registry, example_tools


def _notes(world: Path) -> None:
    """A text file longer than the suite's max_output, and a folder with a file."""
    lines = "".join(f"line {n}: hello conformance\n" for n in range(1, 1001))
    (world / "notes.txt").write_text(lines)
    (world / "docs").mkdir()
    (world / "docs" / "readme.md").write_text("hello docs\n")


class _Page(BaseHTTPRequestHandler):
    """Answers every GET with a page longer than the suite's max_output."""

    def do_GET(self) -> None:
        body = b"<p>hello conformance</p>\n" * 1000
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def page_server() -> Iterator[int]:
    """A real HTTP server on the loopback for ``http_fetch`` (its port), one per module."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _started(world: Path) -> bool:
    return (world / "started").exists()


class TestBuiltinTools(ToolConformance):
    samples = {
        "read_file": ToolSample(
            args={"path": "notes.txt"},
            failing={"path": "missing.txt"},
            prepare=_notes,
        ),
        "write_file": ToolSample(
            args={"path": "out/new.txt", "content": "hello\n"},
            failing={"path": "../outside.txt", "content": "escape\n"},
            prepare=_notes,
        ),
        "edit_file": ToolSample(
            args={"path": "notes.txt", "old": "line 7: hello", "new": "line 7: goodbye"},
            failing={"path": "notes.txt", "old": "not in the file", "new": "x"},
            prepare=_notes,
        ),
        "list_files": ToolSample(
            args={"path": ".", "pattern": "*.md"},
            failing={"path": "missing"},
            prepare=_notes,
        ),
        "search_files": ToolSample(
            args={"pattern": "hello", "path": "."},
            failing={"pattern": "(unclosed", "path": "."},
            prepare=_notes,
        ),
        "run_command": ToolSample(
            args={"command": "seq 1 5000"},
            failing={"command": "echo failing >&2; exit 3"},
            slow=SlowCall(
                args={"command": "touch started && sleep 60"},
                started=_started,
                leaves=frozenset({"started"}),
            ),
        ),
        "http_fetch": ToolSample(
            args={"url": "http://127.0.0.1/"},  # the web fixture's port is added (sample_for)
            failing={"url": "ftp://example.com/file"},
        ),
        "delegate": ToolSample(
            args={"objective": "summarise notes.txt"},
            failing={"objective": "summarise notes.txt"},  # no delegator in this context
            skip_call="it needs a runtime's child runs; tests/runtime/test_delegate.py runs it",
        ),
        "plan": ToolSample(
            args={"tasks": [{"id": "a", "objective": "summarise notes.txt"}]},
            failing={"tasks": [{"id": "a", "objective": "x"}]},  # no planner in this context
            skip_call="it needs a runtime's graph runs; tests/runtime/test_plan_tool.py runs it",
        ),
        "show_component": ToolSample(
            args={"component": "markdown", "props": {"text": "**hello**"}},
        ),
        "ask_choice": ToolSample(
            args={"question": "Which?", "choices": [{"id": "a", "label": "A"}]},
            failing={"question": "Which?", "choices": [{"id": "a", "label": "A"}]},  # no chooser
            skip_call="it waits for a person through the runtime; tests/ui/test_runs.py runs it",
        ),
    }

    web_port: int | None = None

    @pytest.fixture(autouse=True)
    def _web(self, page_server: int) -> None:
        self.web_port = page_server

    def sample_for(self, name: str) -> ToolSample:
        sample = super().sample_for(name)
        if name == "http_fetch":
            url = f"http://127.0.0.1:{self.web_port}/"
            return dataclasses.replace(sample, args={"url": url})
        return sample

    @pytest.fixture
    def tools(self) -> ToolRegistry:
        return builtin_registry()


class TestExampleTools(ToolConformance):
    samples = {
        "record_create": ToolSample(args={"name": "ticket", "fields": {"priority": "high"}}),
        "outbox_send": ToolSample(
            args={"to": "ann@example.com", "subject": "Report", "body": "Done."}
        ),
    }

    @pytest.fixture
    def tools(self, tmp_path: Path) -> tuple[ToolDef, ...]:
        return example_tools(tmp_path / "service")
