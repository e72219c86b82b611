"""The pack's UI components: test results and a delivered diff, with their terminal text.

``engineering.test_results``: a test run's counts and failures (``TestReport.as_json``
and an optional ``title``). ``engineering.diff``: what ``deliver`` committed and
pushed: branch, commit, files with lines added and removed, the unified diff (capped).
The dashboard draws both (server/static/engineering.js); a terminal shows their text.
"""

from __future__ import annotations

from typing import Any

from helix.plugins import PluginComponent

_FAILURE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "test_id": {"type": "string", "maxLength": 300},
        "outcome": {"enum": ["failed", "error"]},
        "message": {"type": "string", "maxLength": 500},
        "file": {"type": ["string", "null"], "maxLength": 300},
        "line": {"type": ["integer", "null"], "minimum": 0},
        "traceback": {"type": "string", "maxLength": 2000},
    },
    "required": ["test_id", "outcome", "message"],
    "additionalProperties": False,
}
_COUNT: dict[str, Any] = {"type": "integer", "minimum": 0}

TEST_RESULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 200},
        "passed": _COUNT,
        "failed": _COUNT,
        "errors": _COUNT,
        "skipped": _COUNT,
        "green": {"type": "boolean"},
        "source": {"enum": ["junit", "output", "none"]},
        "duration_s": {"type": ["number", "null"], "minimum": 0},
        "failures": {"type": "array", "items": _FAILURE, "maxItems": 50},
        "notes": {"type": "array", "items": {"type": "string", "maxLength": 300}, "maxItems": 10},
    },
    "required": ["passed", "failed", "errors", "skipped", "green", "failures"],
    "additionalProperties": False,
}

DIFF_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 200},
        "branch": {"type": "string", "maxLength": 200},
        "commit": {"type": "string", "maxLength": 64},
        "remote": {"type": "string", "maxLength": 200},
        "files": {
            "type": "array",
            "maxItems": 500,
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "maxLength": 500},
                    "added": {"type": ["integer", "null"], "minimum": 0},
                    "removed": {"type": ["integer", "null"], "minimum": 0},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
        },
        "diff": {"type": "string", "maxLength": 65536},
        "summary": {"type": "string", "maxLength": 8000},
    },
    "required": ["files", "diff"],
    "additionalProperties": False,
}


def render_test_results(props: dict[str, Any]) -> str:
    """The test results as a terminal shows them: the counts, then one line per failure."""
    head = "PASS" if props.get("green") else "FAIL"
    counts = (
        f"{props.get('passed', 0)} passed, {props.get('failed', 0)} failed,"
        f" {props.get('errors', 0)} errors, {props.get('skipped', 0)} skipped"
    )
    lines = [f"{head} {counts}"]
    for failure in props.get("failures", []):
        where = failure.get("file") or "?"
        if failure.get("line") is not None:
            where = f"{where}:{failure['line']}"
        first = (str(failure.get("message") or "").splitlines() or [""])[0]
        lines.append(f"  ✗ {failure.get('test_id')} ({where}) {first}")
    return "\n".join(lines)


def render_diff(props: dict[str, Any]) -> str:
    """The delivered change as a terminal shows it: branch and commit, then a diffstat."""
    lines = []
    if props.get("branch"):
        lines.append(f"branch {props['branch']} @ {str(props.get('commit', ''))[:12]}")
    for entry in props.get("files", []):
        added, removed = entry.get("added"), entry.get("removed")
        counts = "binary" if added is None else f"+{added} -{removed}"
        lines.append(f"  {entry.get('path')}  {counts}")
    return "\n".join(lines) or "(no changes)"


COMPONENTS = (
    PluginComponent("engineering.test_results", TEST_RESULTS_SCHEMA, render_test_results),
    PluginComponent("engineering.diff", DIFF_SCHEMA, render_diff),
)
