"""The example of docs/engine.md's "Using the engine as a library" runs as printed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import helix

DOC = Path(__file__).resolve().parents[2] / "docs" / "engine.md"


def test_the_library_example_runs_and_prints_what_it_says() -> None:
    section = DOC.read_text().split("## Using the engine as a library", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    source = str(Path(helix.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": source}
    done = subprocess.run(
        [sys.executable, "-c", code.group(1)], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    assert printed == ["running 1", "completed at 2", "at 42"]
    promised = re.findall(r"print\(.*\)  # (.*)", code.group(1))
    assert [p.split(":")[0] for p in promised] == printed
