"""Writing development plugin folders for the tests (each a real folder on disk)."""

from __future__ import annotations

import textwrap
from pathlib import Path

HEADER = """\
from pathlib import Path

from helix.plugins import Plugin
from helix.tools import ToolContext, ToolResult, tool

HOOKS = Path(__file__).resolve().parents[1] / "hooks.log"


def note(line: str) -> None:
    with HOOKS.open("a") as out:
        out.write(line + "\\n")
"""


def write_plugin(root: Path, name: str, body: str) -> Path:
    """``root/name/plugin.py``: the shared header, then ``body``.

    The header's ``note`` appends a line to ``root/hooks.log``.
    """
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plugin.py").write_text(HEADER + "\n" + textwrap.dedent(body))
    return folder


def hooks(root: Path) -> list[str]:
    """What the plugins' hooks logged, in order."""
    path = root / "hooks.log"
    return path.read_text().splitlines() if path.exists() else []


def simple(name: str, *, requires: tuple[str, ...] = (), provides: str = "") -> str:
    """A plugin requiring ``requires``, providing ``provides`` (a dict literal); logs its hooks."""
    return f"""
    plugin = Plugin(
        name={name!r},
        version="1.0",
        requires={requires!r},
        provides={{{provides}}},
        activate=lambda caps: note("start {name} " + repr(sorted(caps.items()))),
        deactivate=lambda caps: note("stop {name}"),
    )
    """
