"""Telling whether the process a mark names has ended, its pid reused or not."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helix._util import process_gone, process_mark, start_ticks


def test_this_process_is_not_gone_and_an_ended_one_is() -> None:
    assert not process_gone(process_mark())
    assert process_mark() == f"{os.getpid()}.{start_ticks(os.getpid())}"
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert process_gone(f"{child.pid}.{1 << 40}")  # reaped: its pid names nobody


def test_a_pid_given_to_another_process_is_gone() -> None:
    ticks = start_ticks(os.getpid())
    assert ticks is not None
    assert process_gone(f"{os.getpid()}.{ticks + 1}")  # same pid, another start


@pytest.mark.parametrize("mark", ["", "12", "abc.def", "12.", ".34", "-1.5", "1.2.3"])
def test_a_mark_not_made_here_is_nobodys_to_judge(mark: str) -> None:
    assert not process_gone(mark)
