"""A Helix process that opens a box and is then killed with ``kill -9``, for reaping tests."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

_HOLDER = """
import asyncio, sys
from pathlib import Path
from helix.sandbox import LiveWorld, resolve_sandbox

async def main():
    sandbox = resolve_sandbox(sys.argv[1])
    box = await sandbox.open_box(cwd=Path(sys.argv[2]))
    if len(sys.argv) > 3:
        await LiveWorld(box).start("p1", sys.argv[3])
    state = sandbox.state() if hasattr(sandbox, "state") else "-"
    print(getattr(box, "name", "-"), state, box.state_dir, flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""

_FIRST_USE = """
import asyncio, sys
from pathlib import Path
from helix.sandbox import resolve_sandbox

async def open_and_close():
    box = await sandbox.open_box(cwd=Path.cwd())
    await box.close()

sandbox = resolve_sandbox(sys.argv[1])
if sys.argv[1] == "podman":
    asyncio.run(sandbox.home())
elif sys.argv[1] == "process":
    asyncio.run(open_and_close())
else:
    sandbox.state()
"""


def open_and_kill(tier: str, world: Path) -> tuple[str, str]:
    """Open a box of ``tier`` on ``world`` in another process, then ``kill -9`` it.

    The box's name and (gVisor) its sandbox's state folder, as that process printed them.
    """
    name, state, _ = _hold_and_kill(tier, world)
    return name, state


def start_and_kill(tier: str, world: Path, command: str) -> str:
    """Open a box of ``tier`` on ``world`` in another process, start ``command`` in the
    background there, then ``kill -9`` that process. The box's state folder."""
    return _hold_and_kill(tier, world, command)[2]


def _hold_and_kill(tier: str, world: Path, *command: str) -> list[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, tier, str(world), *command],
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
    return line.split()


async def first_use(tier: str) -> None:
    """A fresh Helix process's first use of ``tier`` (which reaps what a killed one left)."""
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", _FIRST_USE, tier], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
