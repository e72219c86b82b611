"""Host-side git for the pack, run so that no repository (and no world) can make it run a program.

What is defended, for every git the pack runs on the host:

- hooks never run (``core.hooksPath=/dev/null``); no file-system monitor
  (``core.fsmonitor=false``), pager, editor, askpass or signing program is started;
  ``ext::`` and ``fd::`` remotes are refused (``protocol.ext.allow=never``…);
  diffs use no external driver or text conversion (``--no-ext-diff --no-textconv``);
- the system configuration is not read (``GIT_CONFIG_NOSYSTEM``), nothing prompts
  (``GIT_TERMINAL_PROMPT=0``), optional locks are off;
- the world's own ``.git`` is never trusted: the agent can rewrite it to point at a
  repository of its making. Git is given the worktree's private git folder, recorded
  when the pack made the worktree (``Worktree.git_dir``, outside the world), and the
  world as the work tree (``GIT_DIR`` / ``GIT_WORK_TREE``);
- git itself never follows a symbolic link out of the work tree when it adds files
  (it records links as links).

What is not defended: the person's global configuration (``~/.gitconfig``) is read,
since pushing needs its credentials and identity; programs named by the repository's
own ``.git/config`` under keys not listed above (a ``filter.<driver>`` named by a
``.gitattributes`` in the world, ``core.sshCommand`` for an ``ssh`` remote) run as
that configuration says: that file is the person's, outside the world, and the agent
cannot write it (docs/packs/engineering.md, "Safety").
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from helix.errors import ConfigError

GIT_TIMEOUT_S = 120.0
MAX_GIT_OUTPUT = 4 * 1024 * 1024
_OVERRIDES = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("core.alternateRefsCommand", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("protocol.ext.allow", "never"),
    ("protocol.fd.allow", "never"),
    ("submodule.recurse", "false"),
    ("gc.auto", "0"),
)
_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
}
_PASSED = ("PATH", "HOME", "USER", "LANG", "SSH_AUTH_SOCK", "XDG_CONFIG_HOME", "TMPDIR")
METADATA = "engineering.json"
"""The worktree's record, beside the world (never inside it: the agent cannot write it)."""


class GitError(ConfigError):
    """A git command failed; the message has its output's end."""


@dataclass(frozen=True, slots=True)
class Worktree:
    """What the pack recorded when it made a run's worktree (``METADATA``)."""

    run_id: str
    world: str
    """The worktree: the run's world."""
    repository: str
    """The checkout the run was asked to work on (left untouched)."""
    git_dir: str
    """The worktree's private git folder, inside the repository's ``.git``."""
    branch: str
    base: str
    """The commit the branch started from."""

    def save(self, folder: Path) -> None:
        """Write the record into ``folder`` (the world's parent)."""
        (folder / METADATA).write_text(json.dumps(asdict(self), indent=2) + "\n")


def worktree_of(run_id: str, world: Path) -> Worktree | None:
    """The record of the worktree the pack made for run ``run_id`` at ``world``, or ``None``.

    Read beside the world, without following a link; a record of another run or
    world (or one that does not parse) is no record.
    """
    path = world.parent / METADATA
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as file:
            data = json.loads(file.read(64 * 1024))
        record = Worktree(**{k: str(data[k]) for k in Worktree.__dataclass_fields__})
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if record.run_id != run_id or Path(record.world) != world:
        return None
    return record


def git_env(worktree: Worktree | None = None) -> dict[str, str]:
    """The environment host-side git runs with (see the module's documentation)."""
    env = {k: os.environ[k] for k in _PASSED if k in os.environ}
    env.update(_ENV)
    env["GIT_CONFIG_COUNT"] = str(len(_OVERRIDES))
    for number, (key, value) in enumerate(_OVERRIDES):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    if worktree is not None:
        env["GIT_DIR"] = worktree.git_dir
        env["GIT_WORK_TREE"] = worktree.world
    return env


async def git(
    *args: str,
    cwd: Path,
    worktree: Worktree | None = None,
    check: bool = True,
    timeout_s: float = GIT_TIMEOUT_S,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str]:
    """Run ``git ARGS`` safely (see above); its exit code, standard output and error.

    ``check``: a non-zero exit raises ``GitError`` with the output's end. ``env``: more
    variables (an author, say); the safe settings win over them.
    """
    variables = {**(env or {}), **git_env(worktree)}
    process = await asyncio.create_subprocess_exec(
        "git",
        *args,
        cwd=cwd,
        env=variables,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout_s)
    except BaseException:  # a timeout or a cancellation: the git goes too
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    stdout = out[:MAX_GIT_OUTPUT].decode("utf-8", errors="replace")
    stderr = err[-64 * 1024 :].decode("utf-8", errors="replace")
    code = process.returncode if process.returncode is not None else -1
    if check and code != 0:
        said = (stderr.strip() or stdout.strip())[-800:]
        raise GitError(f"git {args[0]} failed (exit {code}): {said}")
    return code, stdout, stderr
