"""Environment settings every sandboxed command gets, so git runs no program a repository names.

A repository's ``.git/config`` can name programs git runs on its own (a file-system
monitor, a pager, hooks, a signature checker…), and the world's ``.git`` is the
agent's to write. These variables turn off the system and global configuration and
give the keys that can be given a harmless value one: git reads
``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` as if they were
``-c`` options, which win over every configuration file. What they cannot reach
(driver commands with names of the repository's choosing, ``diff.external``, whose
empty value makes ``git diff`` fail) the gates check instead (docs/security.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

_PLAIN = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_OPTIONAL_LOCKS": "0",
}
"""``GIT_PAGER`` also beats ``pager.<command>``; an empty ``GIT_ASKPASS`` asks nobody;
``:`` is git's editor that changes nothing; no optional locks: ``git status`` does not
rewrite the index (so no ``post-index-change`` hook)."""

_OVERRIDES = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.attributesFile", "/dev/null"),
    ("credential.helper", ""),
    ("gpg.program", "gpg"),
    ("gpg.openpgp.program", "gpg"),
    ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"),
)
"""Keys given as if by ``git -c``: they win over the repository's own configuration."""


def git_environment() -> dict[str, str]:
    """The variables above, ``GIT_CONFIG_COUNT`` and its numbered keys included."""
    env = dict(_PLAIN)
    env["GIT_CONFIG_COUNT"] = str(len(_OVERRIDES))
    for number, (key, value) in enumerate(_OVERRIDES):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    return env


def absolute_path(value: str) -> str:
    """``PATH`` without its empty and relative entries, which name the working directory.

    With ``.`` (or an empty entry) in ``PATH``, a bare ``ls`` would run the world's own
    ``./ls``; the read-only list trusts bare names only because they are looked up in
    absolute directories.
    """
    return os.pathsep.join(part for part in value.split(os.pathsep) if os.path.isabs(part))


def protect(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with the git settings above (they win) and an absolute ``PATH``."""
    protected = {**env, **git_environment()}
    if "PATH" in protected:
        protected["PATH"] = absolute_path(protected["PATH"])
    return protected
