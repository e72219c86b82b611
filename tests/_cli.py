"""Running ``helix`` as a person does: a process of its own, with a home of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_helix(
    home: Path, *args: str, drop: tuple[str, ...], prelude: str = "", **env: str
) -> subprocess.CompletedProcess[str]:
    """``helix ARGS`` with ``HELIX_HOME=home`` and ``env``; the finished process.

    ``drop``: prefixes of variables not inherited from this process (so the setting
    a test is about is only what it passes). ``prelude``: Python run before the CLI
    starts (to block a module, say).
    """
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    code = (
        f"{prelude}\nimport sys\nsys.argv = ['helix', *{list(args)!r}]\n"
        "from helix.cli import main\nmain()"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**inherited, "HELIX_HOME": str(home), **env},
        timeout=120,
    )
