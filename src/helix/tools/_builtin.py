"""The tools every run can be offered."""

from __future__ import annotations

from ._command import run_command
from ._delegate import delegate
from ._files import edit_file, read_file, write_file
from ._http import http_fetch
from ._plan import plan
from ._search import list_files, search_files
from ._tool import ToolDef, ToolRegistry
from ._ui import ask_choice, show_component

BUILTIN_TOOLS: tuple[ToolDef, ...] = (
    read_file,
    write_file,
    edit_file,
    list_files,
    search_files,
    run_command,
    http_fetch,
    delegate,
    plan,
    show_component,
    ask_choice,
)
"""The built-in tools, with the names and arguments the public contract fixes."""


def builtin_registry() -> ToolRegistry:
    """A new registry holding the built-in tools (callers may add their own to it)."""
    return ToolRegistry(BUILTIN_TOOLS)
