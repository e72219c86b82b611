"""``run_tests`` and ``triage_failures``: the test suite run in the sandbox, read as results.

``run_tests`` runs pytest in the run's sandbox (as ``run_command`` runs a command)
with ``--junitxml`` into a file of a random name at the world's top, reads that file
(without following a link; deleted after) and returns the counts and each failure.
When the run's world is the pack's worktree, the report is also kept beside the
world (``tests.jsonl``, ``last-tests.xml``, ``last-tests.txt``) for ``deliver``'s
before/after and for ``triage_failures`` without arguments.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shlex
from pathlib import Path

from helix.tools import ToolContext, ToolResult, UiPart, tool

from ._files import Declined, in_world, read_bytes
from ._git import worktree_of
from ._junit import MAX_XML_BYTES, ReportError, parse_junit
from ._pytest_text import parse_pytest_output
from ._report import TestReport

_FRAME = re.compile(r"^([^\s:][^:\n]*\.py):(\d+):", re.MULTILINE)
_RAN = (0, 1)
"""pytest's exit codes when the tests ran: all passed, some failed."""


def _history(world: Path) -> Path:
    return world.parent


def keep_report(ctx: ToolContext, report: TestReport, xml: bytes | None, output: str) -> None:
    """Record ``report`` beside the worktree (nothing when the world is not the pack's)."""
    if worktree_of(ctx.run_id, ctx.world) is None:
        return
    folder = _history(ctx.world)
    line = json.dumps({"call_id": ctx.call_id, **report.as_json(), "counts": report.counts()})
    with open(folder / "tests.jsonl", "a", encoding="utf-8") as file:
        file.write(line + "\n")
    (folder / "last-tests.txt").write_text(output[-MAX_XML_BYTES:], encoding="utf-8")
    last = folder / "last-tests.xml"
    if xml is not None:
        last.write_bytes(xml)
    else:
        last.unlink(missing_ok=True)


def test_history(run_id: str, world: Path) -> list[dict[str, object]]:
    """Every report ``run_tests`` kept for this run's worktree, oldest first."""
    if worktree_of(run_id, world) is None:
        return []
    path = _history(world) / "tests.jsonl"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out: list[dict[str, object]] = []
    for line in lines:
        with contextlib.suppress(ValueError):
            out.append(json.loads(line))
    return out


def _component(report: TestReport, title: str) -> UiPart:
    return UiPart("engineering.test_results", {"title": title, **report.as_json()})


@tool(effect="world", command="command", sandboxed=True, paths={"paths": "read"})
async def run_tests(
    ctx: ToolContext,
    command: str = "python3 -m pytest",
    paths: list[str] | None = None,
    keyword: str | None = None,
) -> ToolResult:
    """Run the test suite with pytest in the run's sandbox and return structured results.

    `command` starts pytest (default `python3 -m pytest`); the tool adds its own
    options (a JUnit report, no cache) and `paths` (test files or folders in the world;
    default: pytest's own discovery) and `-k keyword` when given. The result has the
    passed/failed/errors/skipped counts and, for each failure, its test id, file:line,
    message and the end of its traceback. The call fails only when the tests could not
    run (pytest's usage errors, no tests collected, a timeout).
    """
    if not command.strip():
        return ToolResult(ok=False, output="command is empty: give how pytest starts")
    try:
        for path in paths or []:
            in_world(ctx.world, path)
    except Declined as refusal:
        return ToolResult(ok=False, output=str(refusal))
    name = f".helix-junit-{secrets.token_hex(8)}.xml"
    words = ["-p", "no:cacheprovider", "-o", "junit_family=xunit1", "-rfE", f"--junitxml={name}"]
    if keyword:
        words += ["-k", keyword]
    words += ["--", *(paths or [])] if paths else []
    line = f"PYTHONDONTWRITEBYTECODE=1 {command} {shlex.join(words)}"
    report_file = ctx.world / name
    try:
        result = await ctx.sandbox.run(
            line,
            cwd=ctx.world,
            timeout_s=ctx.command_timeout_s,
            max_output=ctx.max_output,
            egress=ctx.egress,
            tmp_bytes=ctx.tmp_bytes,
        )
        xml = await asyncio.to_thread(read_bytes, report_file, MAX_XML_BYTES)
    except OSError as error:
        return ToolResult(ok=False, output=f"the tests could not start: {error}")
    finally:
        with contextlib.suppress(OSError):
            await asyncio.to_thread(os.unlink, report_file)
    if result.timed_out:
        return ToolResult(
            ok=False,
            output=f"{result.output}\n[timed out after {ctx.command_timeout_s:g}s]",
            node=result.node,
        )
    report = _read(xml, result.output, ctx.world)
    ran = result.exit_code in _RAN and report.total > 0
    footer = f"[pytest exit code {result.exit_code}]"
    if not ran:
        tail = result.output[-4000:]
        return ToolResult(
            ok=False,
            output=f"the tests did not run:\n{tail}\n{footer}",
            node=result.node,
        )
    await asyncio.to_thread(keep_report, ctx, report, xml, result.output)
    title = "Tests: green" if report.green else "Tests: failing"
    return ToolResult(
        ok=True,
        output=f"{report.text()}\n{footer}",
        ui=_component(report, title),
        node=result.node,
    )


def _read(xml: bytes | None, output: str, world: Path) -> TestReport:
    if xml is not None:
        try:
            return parse_junit(xml, world=world)
        except ReportError as error:
            report = parse_pytest_output(output)
            return _noted(report, f"the JUnit report was not read ({error}); from pytest's output")
    return parse_pytest_output(output)


def _noted(report: TestReport, note: str) -> TestReport:
    from dataclasses import replace

    return replace(report, notes=(*report.notes, note))


@tool(read_only=True, idempotent=True, effect="none", paths={"junit_path": "read"})
async def triage_failures(
    ctx: ToolContext, output: str = "", junit_path: str | None = None
) -> ToolResult:
    """Read test results into structured failures (JUnit XML, pytest's output, the last run).

    Give `junit_path` (a JUnit XML report in the world) or `output` (pytest's text
    output); with neither, the last `run_tests` report of this run is read. Returns
    the counts and each failure (test id, file:line, message, traceback excerpt),
    grouped by file, with the source files the tracebacks pass through.
    """
    xml: bytes | None = None
    text = output
    if junit_path is not None:
        try:
            target = in_world(ctx.world, junit_path)
        except Declined as refusal:
            return ToolResult(ok=False, output=str(refusal))
        xml = await asyncio.to_thread(read_bytes, target, MAX_XML_BYTES)
        if xml is None:
            return ToolResult(ok=False, output=f"{junit_path}: no such regular file")
    elif not output.strip():
        xml, text = await asyncio.to_thread(_last, ctx)
        if xml is None and not text:
            return ToolResult(
                ok=False,
                output="nothing to triage: give junit_path or output (no run_tests report yet)",
            )
    if xml is not None:
        try:
            report = await asyncio.to_thread(parse_junit, xml, world=ctx.world)
        except ReportError as error:
            if not text:
                return ToolResult(ok=False, output=str(error))
            report = _noted(parse_pytest_output(text), f"JUnit not read: {error}")
    else:
        report = parse_pytest_output(text)
    return ToolResult(ok=True, output=triage_text(report), ui=_component(report, "Triage"))


def _last(ctx: ToolContext) -> tuple[bytes | None, str]:
    if worktree_of(ctx.run_id, ctx.world) is None:
        return None, ""
    folder = _history(ctx.world)
    xml = read_bytes(folder / "last-tests.xml", MAX_XML_BYTES)
    try:
        text = (folder / "last-tests.txt").read_text(encoding="utf-8")
    except OSError:
        text = ""
    return xml, text


def triage_text(report: TestReport) -> str:
    """The report grouped by the file each failure is in, with the code it passed through."""
    lines = [("GREEN: " if report.green else "NOT GREEN: ") + report.counts()]
    by_file: dict[str, list[str]] = {}
    suspects: dict[str, None] = {}
    for failure in report.failures:
        by_file.setdefault(failure.file or "?", []).append(
            f"  - {failure.outcome} {failure.test_id} (line {failure.line}): {failure.message}"
        )
        for frame in _FRAME.finditer(failure.traceback):
            if not Path(frame[1]).name.startswith("test_"):
                suspects[f"{frame[1]}:{frame[2]}"] = None
    for file, entries in by_file.items():
        lines.append(f"{file}:")
        lines.extend(entries)
    if suspects:
        lines.append("code the failing tests pass through: " + ", ".join(suspects))
    for failure in report.failures:
        if failure.traceback:
            lines.append(f"--- {failure.test_id}")
            lines.extend(failure.traceback.splitlines()[-15:])
    lines.extend(f"note: {n}" for n in report.notes)
    return "\n".join(lines)
