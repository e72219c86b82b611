"""A test run's results as values: counts, and each failure with where and why.

``TestReport`` is what ``run_tests`` and ``triage_failures`` return (as text for the
model, as props of the ``engineering.test_results`` component for people).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

MAX_FAILURES = 50
"""Failures kept in a report (the counts still count every one)."""
MAX_MESSAGE = 500
"""Characters of a failure's message kept."""
MAX_TRACEBACK = 2000
"""Characters of a failure's traceback excerpt kept (its end: where it failed)."""

Outcome = Literal["failed", "error"]


def clip(text: str, limit: int, *, tail: bool = False) -> str:
    """``text`` cut to ``limit`` characters, marked (``tail``: keep the end)."""
    if len(text) <= limit:
        return text
    if tail:
        return "…" + text[-(limit - 1) :]
    return text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Failure:
    """One test that failed (an assertion) or errored (setup, collection, a crash)."""

    test_id: str
    """pytest's node id: ``tests/test_calc.py::test_add``."""
    outcome: Outcome
    message: str
    file: str | None = None
    """Where it failed, relative to the world, when known."""
    line: int | None = None
    traceback: str = ""
    """The traceback's last lines."""

    def as_json(self) -> dict[str, Any]:
        """The failure as plain JSON (component props, events)."""
        return {
            "test_id": self.test_id,
            "outcome": self.outcome,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "traceback": self.traceback,
        }

    @property
    def where(self) -> str:
        """``file:line`` (or what of it is known)."""
        if self.file is None:
            return "?"
        return self.file if self.line is None else f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class TestReport:
    """What a test run came to."""

    __test__ = False  # not a pytest test class, whatever its name says

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    failures: tuple[Failure, ...] = ()
    source: str = "junit"
    """What it was read from: ``junit`` (XML), ``output`` (pytest's text), or ``none``."""
    duration_s: float | None = None
    notes: tuple[str, ...] = field(default=())
    """What the reader could not read, or left out (a capped report, say)."""

    @property
    def total(self) -> int:
        """Every test counted."""
        return self.passed + self.failed + self.errors + self.skipped

    @property
    def green(self) -> bool:
        """No failure, no error, and at least one test ran."""
        return self.failed == 0 and self.errors == 0 and self.passed > 0

    def counts(self) -> str:
        """``3 passed, 1 failed, 0 errors, 0 skipped``."""
        return (
            f"{self.passed} passed, {self.failed} failed, {self.errors} errors,"
            f" {self.skipped} skipped"
        )

    def as_json(self) -> dict[str, Any]:
        """The report as plain JSON: the ``engineering.test_results`` component's props."""
        return {
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "skipped": self.skipped,
            "green": self.green,
            "source": self.source,
            "duration_s": self.duration_s,
            "failures": [f.as_json() for f in self.failures],
            "notes": list(self.notes),
        }

    def text(self) -> str:
        """The report as the model reads it."""
        lines = [("GREEN: " if self.green else "NOT GREEN: ") + self.counts()]
        for failure in self.failures:
            lines.append(f"- {failure.outcome.upper()} {failure.test_id} at {failure.where}")
            if failure.message:
                lines.append(f"  {failure.message}")
            if failure.traceback:
                lines.extend("    " + t for t in failure.traceback.splitlines()[-12:])
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


def failure(
    test_id: str,
    outcome: Outcome,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    traceback: str = "",
) -> Failure:
    """A ``Failure`` with its texts capped."""
    return Failure(
        test_id=clip(test_id, 300),
        outcome=outcome,
        message=clip(message.strip(), MAX_MESSAGE),
        file=clip(file, 300) if file else None,
        line=line if line is None or line >= 0 else None,
        traceback=clip(traceback.strip("\n"), MAX_TRACEBACK, tail=True),
    )
