"""Reading pytest's text output into a ``TestReport`` (when there is no JUnit report).

What is read: the final counts line (``1 failed, 2 passed in 0.12s``), the short test
summary (``FAILED tests/test_x.py::test_a - AssertionError: …``, ``ERROR …``) and, for
each failure's section (``____ test_a ____``), the last ``file.py:LINE:`` in it and its
last lines as the traceback excerpt. Output is untrusted and may be huge: only its
last ``MAX_OUTPUT_CHARS`` characters are read, line by line, with no regular
expression that can backtrack far.
"""

from __future__ import annotations

import re

from ._report import MAX_FAILURES, Failure, Outcome, TestReport, failure

MAX_OUTPUT_CHARS = 2 * 1024 * 1024
"""The end of the output that is read (the counts and the summary are at the end)."""
MAX_LINE = 4000
"""Longer lines are cut before any pattern looks at them."""
_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)")
_TIME = re.compile(r" in (\d+(?:\.\d+)?)s")
_SUMMARY = re.compile(r"^(FAILED|ERROR) (\S+)(?: - (.*))?$")
_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$")
_WHERE = re.compile(r"^([^\s:][^:]*\.py):(\d+): ?(.*)$")


def parse_pytest_output(output: str) -> TestReport:
    """The report pytest's text output gives (see the module's documentation)."""
    notes: list[str] = []
    if len(output) > MAX_OUTPUT_CHARS:
        notes.append(f"only the last {MAX_OUTPUT_CHARS} characters of the output were read")
        output = output[-MAX_OUTPUT_CHARS:]
    lines = [line[:MAX_LINE] for line in output.splitlines()]
    counts = _counts(lines)
    sections = _sections(lines)
    failures: list[Failure] = []
    listed = 0
    for line in lines:
        found = _SUMMARY.match(line.strip())
        if found is None:
            continue
        listed += 1
        if len(failures) >= MAX_FAILURES:
            continue
        kind: Outcome = "failed" if found[1] == "FAILED" else "error"
        test_id, message = found[2], found[3] or ""
        body = _section_for(test_id, sections)
        file, number, traceback = _where(body)
        failures.append(
            failure(test_id, kind, message, file=file, line=number, traceback=traceback)
        )
    if listed > len(failures):
        notes.append(f"{listed - len(failures)} more failures are not listed")
    if counts is None:
        notes.append("pytest's counts line was not found: the counts are the summary's")
        failed = sum(f.outcome == "failed" for f in failures)
        return TestReport(
            failed=failed,
            errors=len(failures) - failed,
            failures=tuple(failures),
            source="output",
            notes=tuple(notes),
        )
    passed, failed, errors, skipped, duration = counts
    return TestReport(
        passed=passed,
        failed=failed,
        errors=errors,
        skipped=skipped,
        failures=tuple(failures),
        source="output",
        duration_s=duration,
        notes=tuple(notes),
    )


def _counts(lines: list[str]) -> tuple[int, int, int, int, float | None] | None:
    for line in reversed(lines):
        text = line.strip().strip("=").strip()
        if " in " not in text or not _COUNT.search(text):
            continue
        found = {
            kind.rstrip("s") if kind.startswith("error") else kind: int(n)
            for n, kind in _COUNT.findall(text)
        }
        time = _TIME.search(text)
        return (
            found.get("passed", 0) + found.get("xpassed", 0),
            found.get("failed", 0),
            found.get("error", 0),
            found.get("skipped", 0) + found.get("xfailed", 0),
            float(time[1]) if time else None,
        )
    return None


def _sections(lines: list[str]) -> dict[str, list[str]]:
    """Each failure section's lines, by its title (``test_a``, ``TestX.test_b``)."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        title = _SECTION.match(line)
        if title is not None:
            current = out.setdefault(title[1].strip(), [])
            continue
        if line.startswith("=") and line.rstrip().endswith("="):
            current = None  # a new part of the output (the short summary, say)
            continue
        if current is not None and len(current) < 2000:
            current.append(line)
    return out


def _section_for(test_id: str, sections: dict[str, list[str]]) -> list[str]:
    path, _, rest = test_id.partition("::")
    name = rest.replace("::", ".")
    for title, body in sections.items():
        plain = title.removeprefix("ERROR at setup of ").removeprefix("ERROR at teardown of ")
        if plain == name or title == f"ERROR collecting {path}":
            return body
    return []


def _where(body: list[str]) -> tuple[str | None, int | None, str]:
    file: str | None = None
    number: int | None = None
    for line in body:
        found = _WHERE.match(line)
        if found is not None:
            file, number = found[1], int(found[2])
    return file, number, "\n".join(body[-20:])
