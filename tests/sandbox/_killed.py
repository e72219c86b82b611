"""A Helix process that opens a box and is then killed with ``kill -9``, for reaping tests."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

_HOLDER = """
import asyncio, sys
from pathlib import Path
from helix.sandbox import resolve_sandbox

async def main():
    sandbox = resolve_sandbox(sys.argv[1])
    box = await sandbox.open_box(cwd=Path(sys.argv[2]))
    state = sandbox.state() if hasattr(sandbox, "state") else ""
    print(box.name, state, flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""

_FIRST_USE = """
import asyncio, sys
from helix.sandbox import resolve_sandbox

sandbox = resolve_sandbox(sys.argv[1])
asyncio.run(sandbox.home()) if sys.argv[1] == "podman" else sandbox.state()
"""


def open_and_kill(tier: str, world: Path) -> tuple[str, str]:
    """Open a box of ``tier`` on ``world`` in another process, then ``kill -9`` it.

    The box's name and (gVisor) its sandbox's state folder, as that process printed them.
    """
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, tier, str(world)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        line = holder.stdout.readline()
    finally:
        holder.kill()
        _, said = holder.communicate()
    assert line, f"the holder did not open a box: {said[-2000:]}"
    name, _, state = line.strip().partition(" ")
    return name, state


async def first_use(tier: str) -> None:
    """A fresh Helix process's first use of ``tier`` (which reaps what a killed one left)."""
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", _FIRST_USE, tier], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
