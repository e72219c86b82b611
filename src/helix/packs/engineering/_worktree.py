"""Each run in a git worktree of its own, on a branch of its own (``Plugin.prepare_world``).

When a run naming the pack is created on a world that is the top of a git checkout
with at least one commit, the pack adds a worktree of that repository at
``HELIX_HOME/worktrees/RUN_ID/world`` on a new branch ``helix/<first 12 of the run
id>`` from the checkout's ``HEAD``, and that worktree becomes the run's world. The
checkout itself (its files, its index, its current branch) is left as it was; its
uncommitted changes are not in the worktree. Beside the worktree, outside the world,
``engineering.json`` records where the worktree's git folder is, for ``deliver`` and
the other tools (``_git.Worktree``). A world that is not a git checkout's top (a plain
folder, a folder inside a repository) is left as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from helix.plugins import WorldRequest

from ._git import GitError, Worktree, git

BRANCH_PREFIX = "helix/"


def branch_for(run_id: str) -> str:
    """The branch a run works on: ``helix/`` and the first 12 characters of its id's hex."""
    return BRANCH_PREFIX + run_id.removeprefix("run_")[:12]


def _remove_empty(folder: Path) -> None:
    """Take away the run's folder a failed ``git worktree add`` left (only if empty)."""
    with contextlib.suppress(OSError):
        folder.rmdir()


async def prepare_world(request: WorldRequest) -> Path | None:
    """A worktree on the run's own branch, when the world is a checkout's top (see above)."""
    world = request.world
    if not await asyncio.to_thread(lambda: (world / ".git").exists()):
        return None
    code, top, _ = await git("rev-parse", "--show-toplevel", cwd=world, check=False)
    if code != 0 or await asyncio.to_thread(lambda: Path(top.strip()).resolve()) != world:
        return None
    code, base, _ = await git(
        "rev-parse", "--verify", "-q", "HEAD^{commit}", cwd=world, check=False
    )
    if code != 0:
        raise GitError(f"the repository at {world} has no commit yet: commit once, then start")
    folder = request.home / "worktrees" / request.run_id
    target = folder / "world"
    await asyncio.to_thread(folder.mkdir, parents=True)
    branch = branch_for(request.run_id)
    try:
        await git("worktree", "add", "--quiet", "-b", branch, str(target), base.strip(), cwd=world)
    except GitError:
        await asyncio.to_thread(_remove_empty, folder)
        raise
    resolved = await asyncio.to_thread(target.resolve)
    _, git_dir, _ = await git("rev-parse", "--absolute-git-dir", cwd=resolved)
    record = Worktree(
        run_id=request.run_id,
        world=str(resolved),
        repository=str(world),
        git_dir=git_dir.strip(),
        branch=branch,
        base=base.strip(),
    )
    await asyncio.to_thread(record.save, folder)
    return resolved
