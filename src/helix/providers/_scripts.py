"""Where ``scripted:PATH`` models may be read from: anywhere, nowhere, or one folder.

The CLI plays any scenario file its user names (``True``: they are the user's own
files). A server plays none (``False``) unless its administrator names a folder
(``helix serve --scripts DIR``); then ``PATH`` is relative to that folder, and it is
read without following a link out of it: no absolute path outside it, no ``..``, and
each component is opened with ``O_NOFOLLOW`` beneath the folder, so a link swapped in
after the check is refused rather than followed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePath

from helix.errors import ModelNameError

from ._scenario import Scenario

ScriptAccess = Path | bool
"""``True``: any file; ``False``: none; a folder: only files beneath it."""

_MAX_SCRIPT_BYTES = 1 << 20


def read_script(name: str, scripts: ScriptAccess) -> Scenario:
    """The scenario ``scripted:NAME`` plays, read as ``scripts`` allows."""
    if scripts is True:
        return Scenario.from_file(name)
    root, inside = locate_script(name, scripts)
    return Scenario.parse(_read_beneath(root, inside, name), name)


def locate_script(name: str, scripts: ScriptAccess) -> tuple[Path, PurePath]:
    """The folder and the link-free path beneath it of ``NAME``; ``ModelNameError`` if refused.

    Only for a folder (or ``False``, which refuses): ``True`` has nothing to check.
    """
    if isinstance(scripts, bool):
        raise ModelNameError(
            f"scripted:{name}: this server plays no scripted models (its administrator can"
            " allow a folder of scenario files with helix serve --scripts DIR)"
        )
    root = scripts.resolve()
    path = PurePath(name)
    if path.is_absolute():
        for base in (scripts, root):
            if path.is_relative_to(base):
                path = path.relative_to(base)
                break
        else:
            raise _outside(name)
    parts = [p for p in path.parts if p != "."]
    if not parts or ".." in parts:
        raise _outside(name)
    try:
        real = root.joinpath(*parts).resolve(strict=True)
    except (OSError, RuntimeError):
        raise ModelNameError(
            f"scripted:{name}: there is no such scenario file in the server's scripts folder"
        ) from None
    if real == root or not real.is_relative_to(root):
        raise _outside(name)
    if not real.is_file():
        raise ModelNameError(
            f"scripted:{name}: there is no such scenario file in the server's scripts folder"
        )
    return root, real.relative_to(root)


def _outside(name: str) -> ModelNameError:
    return ModelNameError(
        f"scripted:{name}: scenario files are named relative to the server's scripts folder"
        " and must stay inside it (no absolute path outside it, no '..', no link out of it)"
    )


def _read_beneath(root: Path, inside: PurePath, name: str) -> str:
    """Open ``inside`` component by component from ``root``, following no link."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(root, flags | os.O_DIRECTORY)
    try:
        for part in inside.parts[:-1]:
            next_fd = os.open(part, flags | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        file_fd = os.open(inside.parts[-1], flags | os.O_NONBLOCK, dir_fd=fd)
    except OSError as error:
        raise ModelNameError(
            f"scripted:{name}: cannot open it beneath the scripts folder ({error.strerror})"
        ) from None
    finally:
        os.close(fd)
    with os.fdopen(file_fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ModelNameError(f"scripted:{name}: not a regular file")
        data = handle.read(_MAX_SCRIPT_BYTES + 1)
    if len(data) > _MAX_SCRIPT_BYTES:
        raise ModelNameError(f"scripted:{name}: over {_MAX_SCRIPT_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelNameError(f"scripted:{name}: not UTF-8 text") from None
