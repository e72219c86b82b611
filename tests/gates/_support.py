"""The built-in tools and one more, and helpers to build calls and contexts."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

from helix.gates import GateCall, GateContext, Policy
from helix.tools import BUILTIN_TOOLS, ToolContext, ToolRegistry, ToolResult, tool


@tool(effect="external-withhold")
async def send_email(ctx: ToolContext, to: str, body: str) -> ToolResult:
    """Send an email."""
    return ToolResult(ok=True, output="")


TOOLS = ToolRegistry([*BUILTIN_TOOLS, send_email])
"""The built-in tools as declared (the gates read their facets; none is run here)."""


def make_call(name: str, **args: Any) -> GateCall:
    """A call of ``name`` (``tool`` is ``None`` for a name no tool has)."""
    return GateCall("call_1", name, args, TOOLS.get(name) if name in TOOLS else None)


def make_ctx(world: Path, **changes: Any) -> GateContext:
    """A context for a run in ``world``, with ``changes`` applied."""
    return replace(GateContext(run_id="run_1", world=world, policy=Policy()), **changes)


GIT_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.test",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.test",
}
"""What the tests run git with on the host: no configuration but the repository's."""


def git(world: Path, *args: str) -> str:
    """Run ``git args`` in ``world`` on the host and return its output."""
    done = subprocess.run(
        ["git", *args], cwd=world, env=GIT_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(world: Path) -> Path:
    """Make ``world`` a clean repository: one commit of ``notes.txt``, then an edit of it."""
    git(world, "init", "-q", "-b", "main")
    (world / "notes.txt").write_text("one\n")
    git(world, "add", "notes.txt")
    git(world, "commit", "-q", "-m", "first")
    (world / "notes.txt").write_text("one\ntwo\n")
    return world
