"""Helix's own tools through ``helix.testing.conformance.ToolConformance``.

The built-in tools (``builtin_registry``) and the example tools with outside effects
(``example_tools``) pass the same suite a plugin's or an MCP server's tools do.
"""

from __future__ import annotations

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
            args={"url": "http://127.0.0.1:9/"},
            failing={"url": "ftp://example.com/file"},
            skip_call="it needs an HTTP server; tests/tools/test_builtin.py runs it",
        ),
        "delegate": ToolSample(
            args={"objective": "summarise notes.txt"},
            failing={"objective": "summarise notes.txt"},  # no delegator in this context
            skip_call="it needs a runtime's child runs; tests/runtime/test_delegate.py runs it",
        ),
    }

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
