"""``helix tui`` as a command: listed in help, light to import, and clear without its extra."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BLOCKED = (
    "import sys\n"
    "sys.modules['textual'] = None  # as if it were not installed: import fails\n"
    "sys.argv = ['helix', 'tui']\n"
    "from helix.cli import main\n"
    "main()\n"
)


def helix(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HELIX_HOME": str(tmp_path)}
    env.pop("HELIX_SERVER", None)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )


def test_without_the_extra_it_names_the_install_command(tmp_path: Path) -> None:
    done = helix(BLOCKED, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "error:" in done.stderr
    assert "pip install 'helix-harness[tui]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_lists_it_and_loads_no_textual(tmp_path: Path) -> None:
    code = (
        "import sys\nsys.argv = ['helix', '--help']\nfrom helix.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('textual loaded' if 'textual' in sys.modules else 'textual not loaded')"
    )
    done = helix(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert " tui " in done.stdout
    assert done.stdout.strip().endswith("textual not loaded")
