"""Whether git, run in the world, could be made to run a program the world names.

Read from the host, never following a link: every file and folder is opened relative
to the world with ``O_NOFOLLOW``, and a link where a file or folder should be is a
reason to say no.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ._git_config import ConfigSyntaxError, config_entries, executing_key

MAX_DIRECTORIES = 20_000
"""Folders of the world searched for nested repositories; a bigger world is not vouched for."""
MAX_DEPTH = 64
"""Nesting searched for nested repositories; a deeper world is not vouched for."""
_MAX_CONFIG_BYTES = 1 << 20
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class _Refused(Exception):
    """Why git in this world is not vouched for (the message is the reason)."""


def repository_problem(world: Path) -> str | None:
    """Why git run in ``world`` might run a program the world names, or ``None``.

    ``None`` only when the world's ``.git`` is a real folder holding a repository of its
    own (``HEAD``, ``objects``, ``refs``; no ``commondir``), its ``config`` and
    ``config.worktree`` (regular files, if present) parse and set no key that runs a
    program or reads another file (``executing_key``), its ``hooks`` folder holds no
    link and no executable file but ``*.sample``, and no other ``.git`` lies anywhere
    in the world (a submodule or nested repository has a configuration of its own).
    """
    try:
        root = os.open(world, _DIRECTORY)
    except OSError as error:
        return f"the world could not be opened ({error.strerror})"
    try:
        _check(root)
    except _Refused as refused:
        return str(refused)
    except OSError as error:
        return f"the repository could not be checked ({error.strerror})"
    finally:
        os.close(root)
    return None


def _check(root: int) -> None:
    try:
        git = os.open(".git", _DIRECTORY, dir_fd=root)
    except FileNotFoundError:
        raise _Refused("the world has no .git folder, so git would look elsewhere") from None
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _Refused("the world's .git is a link or a file: it can point anywhere") from None
        raise
    try:
        _check_git_dir(git)
    finally:
        os.close(git)
    _search(root, "", 0, [0])


def _check_git_dir(git: int) -> None:
    kinds = {name: _kind(git, name) for name in ("HEAD", "objects", "refs", "commondir")}
    if (kinds["HEAD"], kinds["objects"], kinds["refs"]) != ("file", "dir", "dir"):
        raise _Refused(".git lacks HEAD, objects or refs, so git would look elsewhere")
    if kinds["commondir"] is not None:
        raise _Refused(".git/commondir makes git use another repository's configuration")
    for name in ("config", "config.worktree"):
        data = _read(git, name)
        if data is None:
            continue
        try:
            entries = config_entries(data)
        except ConfigSyntaxError as error:
            raise _Refused(f".git/{name} is not valid configuration ({error})") from None
        for key, value in entries:
            if executing_key(key, value):
                raise _Refused(f".git/{name} sets {key}, which can make git run a program")
    _check_hooks(git)


def _check_hooks(git: int) -> None:
    kind = _kind(git, "hooks")
    if kind is None:
        return
    if kind != "dir":
        raise _Refused(".git/hooks is not a folder")
    hooks = os.open("hooks", _DIRECTORY, dir_fd=git)
    try:
        with os.scandir(hooks) as entries:
            for entry in entries:
                if entry.name.endswith(".sample"):
                    continue
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode) or info.st_mode & 0o111:
                    raise _Refused(f".git/hooks/{entry.name} is a hook git may run")
    finally:
        os.close(hooks)


def _search(folder: int, where: str, depth: int, seen: list[int]) -> None:
    """Refuse any ``.git`` below the world's own; folders opened without following links."""
    seen[0] += 1
    if seen[0] > MAX_DIRECTORIES:
        raise _Refused(f"the world has over {MAX_DIRECTORIES} folders to search for nested .git")
    if depth > MAX_DEPTH:
        raise _Refused(f"the world nests folders over {MAX_DEPTH} deep to search for nested .git")
    subfolders = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name == ".git":
                if depth:
                    raise _Refused(f"{where}.git is a nested repository with its own configuration")
            elif entry.is_dir(follow_symlinks=False):
                subfolders.append(entry.name)
    for name in subfolders:
        try:
            child = os.open(name, _DIRECTORY, dir_fd=folder)
        except FileNotFoundError:
            continue  # removed since it was listed: nothing to search
        try:
            _search(child, f"{where}{name}/", depth + 1, seen)
        finally:
            os.close(child)


def _kind(folder: int, name: str) -> str | None:
    """``"file"``, ``"dir"``, ``"other"`` (a link included) or ``None`` if absent."""
    try:
        mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return "file"
    return "dir" if stat.S_ISDIR(mode) else "other"


def _read(folder: int, name: str) -> bytes | None:
    """The regular file ``name`` in ``folder`` (``None`` if absent), never through a link."""
    try:
        fd = os.open(name, _FILE, dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _Refused(f".git/{name} is a link, which can point anywhere") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Refused(f".git/{name} is not a regular file")
        if info.st_size > _MAX_CONFIG_BYTES:
            raise _Refused(f".git/{name} is too large to check")
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(_MAX_CONFIG_BYTES + 1)
        if len(data) > _MAX_CONFIG_BYTES:
            raise _Refused(f".git/{name} is too large to check")
        return data
    finally:
        os.close(fd)
