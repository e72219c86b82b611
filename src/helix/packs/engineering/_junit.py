"""Reading a JUnit XML report (pytest's ``--junitxml``) into a ``TestReport``.

The XML is untrusted (a test run is the agent's code, and may write anything there):
it is capped in size, and never expands entities or reads a DTD. With ``defusedxml``
installed (the ``engineering`` extra) it parses; without it, the standard library
parses, after a document declaring a DTD or an entity is refused outright.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._report import MAX_FAILURES, Failure, Outcome, TestReport, failure

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

MAX_XML_BYTES = 8 * 1024 * 1024
"""A larger report is refused unread."""
MAX_CASES = 100_000
"""Test cases counted; past this, the rest of the report is left out (and said so)."""
_WHERE = re.compile(r"^(?P<file>[^\s:][^:\n]*\.py):(?P<line>\d+):", re.MULTILINE)
_DECLARES = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


class ReportError(ValueError):
    """The report cannot be read; the message says why (shown to the model)."""


def parse_junit(data: bytes, *, world: Path | None = None) -> TestReport:
    """The report in ``data``; ``ReportError`` if it is too big, hostile or not JUnit XML.

    ``world`` (when given) turns pytest's dotted class names back into file paths.
    """
    if len(data) > MAX_XML_BYTES:
        raise ReportError(
            f"the JUnit report is {len(data)} bytes, more than the {MAX_XML_BYTES} read"
        )
    root = _parse(data)
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    if root.tag not in ("testsuite", "testsuites"):
        raise ReportError(f"not a JUnit report: its root element is <{root.tag[:40]}>")
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    failures: list[Failure] = []
    notes: list[str] = []
    duration = 0.0
    seen = 0
    for suite in suites:
        duration += _float(suite.get("time"))
        for case in suite.iter("testcase"):
            seen += 1
            if seen > MAX_CASES:
                notes.append(f"only the first {MAX_CASES} test cases were read")
                break
            outcome, detail = _outcome(case)
            counts[outcome] += 1
            wanted = detail is not None and outcome in ("failed", "errors")
            if wanted and detail is not None and len(failures) < MAX_FAILURES:
                failures.append(_failure(case, detail, outcome, world))
        else:
            continue
        break
    lost = counts["failed"] + counts["errors"] - len(failures)
    if lost > 0:
        notes.append(f"{lost} more failures are not listed (the first {MAX_FAILURES} are)")
    return TestReport(
        **counts,
        failures=tuple(failures),
        source="junit",
        duration_s=round(duration, 3),
        notes=tuple(notes),
    )


def _parse(data: bytes) -> Element:
    try:
        from defusedxml import DefusedXmlException
        from defusedxml.ElementTree import fromstring as defused_fromstring
    except ImportError:  # the stdlib, with every DTD and entity refused before parsing
        from xml.etree.ElementTree import ParseError, fromstring

        if _DECLARES.search(data):
            raise ReportError("the JUnit report declares a DTD or entities: refused") from None
        try:
            return fromstring(data)
        except ParseError as error:
            raise ReportError(f"the JUnit report is not well-formed XML: {error}") from None
    from xml.etree.ElementTree import ParseError

    try:
        root: Element = defused_fromstring(data, forbid_dtd=True)
    except DefusedXmlException as error:
        raise ReportError(
            f"the JUnit report declares a DTD or entities: refused ({error})"
        ) from None
    except ParseError as error:
        raise ReportError(f"the JUnit report is not well-formed XML: {error}") from None
    return root


def _outcome(case: Element) -> tuple[str, Element | None]:
    for tag, outcome in (("failure", "failed"), ("error", "errors"), ("skipped", "skipped")):
        found = case.find(tag)
        if found is not None:
            return outcome, found
    return "passed", None


def _failure(case: Element, detail: Element, outcome: str, world: Path | None) -> Failure:
    text = detail.text or ""
    message = detail.get("message") or (text.strip().splitlines() or [""])[-1]
    file, line = case.get("file"), _int(case.get("line"))
    places = list(_WHERE.finditer(text))
    if places:  # where it failed beats where the test is defined
        file, line = places[-1]["file"], int(places[-1]["line"])
    elif line is not None:
        line += 1  # xunit1's line is 0-based
    kind: Outcome = "failed" if outcome == "failed" else "error"
    return failure(
        _test_id(case, world),
        kind,
        message,
        file=file,
        line=line,
        traceback="\n".join(text.splitlines()[-30:]),
    )


def _test_id(case: Element, world: Path | None) -> str:
    """The pytest node id from a case's ``classname`` (``tests.test_calc.TestX``) and name."""
    name = case.get("name") or "?"
    classname = case.get("classname") or ""
    if case.get("file"):
        path = str(case.get("file"))
        module = path.removesuffix(".py").replace("/", ".")
        inner = classname.removeprefix(module).strip(".")
        return "::".join(p for p in (path, *inner.split("."), name) if p)
    parts = [p for p in classname.split(".") if p]
    for cut in range(len(parts), 0, -1):
        path = "/".join(parts[:cut]) + ".py"
        if world is not None and _is_file(world / path):
            return "::".join([path, *parts[cut:], name])
    return "/".join(parts) + ".py::" + name if parts else name


def _is_file(path: Path) -> bool:
    try:
        return path.is_file() and not path.is_symlink()
    except (OSError, ValueError):
        return False


def _float(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if number == number and 0 <= number < 1e9 else 0.0


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
