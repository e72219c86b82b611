"""Running ``helix`` as a person does: a process of its own, with its own HELIX_HOME."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def helix(
    home: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 400
) -> subprocess.CompletedProcess[str]:
    """``python -m helix ARGS`` with ``HELIX_HOME=home``; the finished process."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HELIX_", "RAY_"))}
    base.update({"HELIX_HOME": str(home), "PYTHONPATH": str(SRC), **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "helix", *args],
        env=base, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
