"""The pack's readers of test results: JUnit XML (untrusted) and pytest's text output."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.packs.engineering import (
    MAX_OUTPUT_CHARS,
    MAX_XML_BYTES,
    ReportError,
    parse_junit,
    parse_pytest_output,
)

JUNIT = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5" time="0.25">
<testcase classname="tests.test_calc" name="test_ok" time="0.001" />
<testcase classname="tests.test_calc" name="test_add" time="0.002">
<failure message="assert -1 == 5">def test_add():
&gt;       assert add(2, 3) == 5
E       assert -1 == 5

tests/test_calc.py:7: AssertionError</failure></testcase>
<testcase classname="tests.test_calc.TestMore" name="test_setup" time="0.0">
<error message="failed on setup with &quot;RuntimeError: boom&quot;">src/calc.py:3: RuntimeError
</error>
</testcase>
<testcase classname="tests.test_calc" name="test_skip"><skipped message="later" /></testcase>
<testcase classname="tests.test_calc" name="test_two" time="0.001" />
</testsuite></testsuites>
"""


def test_junit_counts_and_failures(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text("")
    report = parse_junit(JUNIT, world=tmp_path)
    assert (report.passed, report.failed, report.errors, report.skipped) == (2, 1, 1, 1)
    assert not report.green
    failed, errored = report.failures
    assert failed.test_id == "tests/test_calc.py::test_add"
    assert (failed.file, failed.line, failed.outcome) == ("tests/test_calc.py", 7, "failed")
    assert failed.message == "assert -1 == 5"
    assert "assert add(2, 3) == 5" in failed.traceback
    assert errored.test_id == "tests/test_calc.py::TestMore::test_setup"
    assert (errored.file, errored.line, errored.outcome) == ("src/calc.py", 3, "error")
    assert report.duration_s == 0.25


def test_junit_xunit1_file_and_line() -> None:
    data = (
        b'<testsuite><testcase classname="t.test_a.TestX" name="test_b" file="t/test_a.py"'
        b' line="9"><failure message="no">boom</failure></testcase></testsuite>'
    )
    (failure,) = parse_junit(data).failures
    assert failure.test_id == "t/test_a.py::TestX::test_b"
    assert (failure.file, failure.line) == ("t/test_a.py", 10)  # xunit1 lines are 0-based


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<testsuite><testcase classname="a" name="&lol3;"/></testsuite>"""
EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE t [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<testsuite><testcase classname="a" name="&secret;"/></testsuite>"""


@pytest.mark.parametrize("data", [BILLION_LAUGHS, EXTERNAL], ids=["expansion", "external"])
def test_hostile_xml_is_refused(data: bytes) -> None:
    with pytest.raises(ReportError, match="DTD or entities"):
        parse_junit(data)


def test_hostile_xml_is_refused_without_defusedxml(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def without(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("defusedxml"):
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", without)
    for data in (BILLION_LAUGHS, EXTERNAL, b"<!doctype x><testsuite/>"):
        with pytest.raises(ReportError, match="DTD or entities"):
            parse_junit(data)
    assert parse_junit(b"<testsuite><testcase name='a'/></testsuite>").passed == 1


def test_huge_or_broken_xml_is_refused() -> None:
    with pytest.raises(ReportError, match="more than"):
        parse_junit(b"<testsuite>" + b" " * MAX_XML_BYTES + b"</testsuite>")
    with pytest.raises(ReportError, match="not well-formed"):
        parse_junit(b"<testsuite><testcase>")
    with pytest.raises(ReportError, match="root element"):
        parse_junit(b"<html/>")


def test_many_failures_are_capped_and_said() -> None:
    cases = b"".join(
        b'<testcase classname="t" name="n%d"><failure message="x">' % i
        + b"y" * 5000
        + b"</failure></testcase>"
        for i in range(80)
    )
    report = parse_junit(b"<testsuite>" + cases + b"</testsuite>")
    assert report.failed == 80
    assert len(report.failures) == 50
    assert all(len(f.traceback) <= 2000 for f in report.failures)
    assert report.notes == ("30 more failures are not listed (the first 50 are)",)


OUTPUT = """\
============================= test session starts ==============================
collected 3 items

tests/test_calc.py F.s                                                   [100%]

=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(2, 3) == 5
E       assert -1 == 5

tests/test_calc.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert -1 == 5
==================== 1 failed, 1 passed, 1 skipped in 0.05s ====================
"""


def test_pytest_output() -> None:
    report = parse_pytest_output(OUTPUT)
    assert (report.passed, report.failed, report.errors, report.skipped) == (1, 1, 0, 1)
    (failure,) = report.failures
    assert failure.test_id == "tests/test_calc.py::test_add"
    assert (failure.file, failure.line) == ("tests/test_calc.py", 7)
    assert failure.message == "assert -1 == 5"
    assert "E       assert -1 == 5" in failure.traceback
    assert report.duration_s == 0.05
    assert report.source == "output"


def test_pytest_quiet_output_and_errors() -> None:
    quiet = "ERROR tests/test_x.py - ImportError: no module\n1 error in 0.10s\n"
    report = parse_pytest_output(quiet)
    assert (report.errors, report.failed, report.passed) == (1, 0, 0)
    assert report.failures[0].outcome == "error"
    assert parse_pytest_output("nothing here").notes == (
        "pytest's counts line was not found: the counts are the summary's",
    )


def test_huge_output_reads_only_its_end() -> None:
    noise = ("x" * 10_000 + "\n") * (MAX_OUTPUT_CHARS // 10_000 + 50)
    report = parse_pytest_output(noise + OUTPUT)
    assert report.failed == 1
    assert report.notes[0].startswith("only the last")
    # one enormous line with no newline is cut before any pattern reads it
    report = parse_pytest_output("FAILED " + "a" * 5_000_000)
    assert report.failed == 0 or len(report.failures[0].test_id) <= 300
