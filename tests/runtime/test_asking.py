"""Asking a person is written once: every approval request of the runtime comes from ``ask``."""

from __future__ import annotations

import re
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "src" / "helix" / "runtime"


def _makers(pattern: str) -> list[str]:
    made = re.compile(pattern)
    return sorted(p.name for p in RUNTIME.glob("*.py") if made.search(p.read_text()))


def test_approval_requests_and_system_decisions_are_made_in_one_place() -> None:
    assert _makers(r"\bApprovalRequested\(") == ["_asking.py"]
    assert _makers(r"apr_") == ["_asking.py"]  # one kind of request id
    # Decisions: the system's (auto-approve, deadlines) there, a person's in run control.
    assert _makers(r"\bApprovalDecided\(") == ["_asking.py", "_control.py"]
