"""Telling a command that only reads from one that may write (see ``is_read_only_command``)."""

from __future__ import annotations

import re
from functools import lru_cache

from ._shell import operands, short_flags, words

_PROGRAMS = frozenset({
    "ls", "cat", "head", "tail", "wc", "grep", "rg", "find", "pwd", "echo", "git", "stat",
    "file", "du", "tree", "which",
})  # fmt: skip
_QUIET = re.compile(r"(?:[12]?>|&>)\s*/dev/null(?![^\s;&|])|[12]?>&[12](?![^\s;&|])")
"""Redirections that write nowhere (``2>/dev/null``, ``2>&1``)."""
_UNSAFE_TEXT = re.compile(r"[<>`\x00-\x08\x0a-\x1f\x7f]|\$\(")
"""Redirections, substitutions and new lines (a second command the chain rules miss)."""
_CHAINS = frozenset({";", "&&", "||", "|", "&", "|&"})
_FIND_ACTS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
_GIT_READS = frozenset({"status", "log", "diff", "show", "branch"})
_GIT_RUNS = ("--output", "--ext-diff", "--textconv", "--exec")
"""Options that write a file or run an external diff or a text converter (git 2.39 does
not abbreviate them: ``--ext`` and ``--textc`` are errors)."""
_BRANCH_LISTING = frozenset(
    {"--list", "-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}
)
_BRANCH_FLAGS = _BRANCH_LISTING | frozenset({
    "-a", "-r", "-v", "-vv", "--all", "--remotes", "--verbose", "--show-current", "--color",
    "--no-color",
})  # fmt: skip


def reads_only(command: str) -> bool:
    """Whether every program ``command`` runs is a reader used only to read."""
    return readers(command) is not None


@lru_cache(maxsize=256)
def readers(command: str) -> frozenset[str] | None:
    """The programs ``command`` runs if each is a reader used only to read, else ``None``.

    Syntax only: whether ``git`` may be trusted depends on the world's repository too.
    """
    text = _QUIET.sub(" ", command)
    if not text.strip() or _UNSAFE_TEXT.search(text):
        return None
    try:
        tokens = words(text, lenient=False)
    except ValueError:
        return None
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token in _CHAINS:
            segments.append([])
        elif token and set(token) <= set("();<>|&"):
            return None  # subshells, case arms: more shell than a reader needs
        else:
            segments[-1].append(token)
    filled = [s for s in segments if s]
    if not filled or not all(_reader(segment) for segment in filled):
        return None
    return frozenset(segment[0] for segment in filled)


def _reader(segment: list[str]) -> bool:
    # Bare names only: ./ls or /tmp/ls could be anything the run wrote.
    program, args = segment[0], segment[1:]
    if program not in _PROGRAMS:
        return False
    if program == "find":
        return not _FIND_ACTS & set(args)
    if program == "rg":  # --pre and --hostname-bin run a program
        return not any(a.startswith(("--pre", "--hostname-bin")) for a in args)
    if program == "tree":
        return "o" not in short_flags(args) and not any(a.startswith("--output") for a in args)
    if program == "file":
        return "C" not in short_flags(args) and "--compile" not in args  # writes magic.mgc
    if program == "git":
        return _git_reads(args)
    return True


def _git_reads(args: list[str]) -> bool:
    while args and args[0] in ("--no-pager", "-P"):
        args = args[1:]
    # Any other global option is refused: -c, --config-env, -C, --exec-path, --git-dir,
    # --work-tree point git at other configuration or programs; -p/--paginate starts a
    # pager. git does not abbreviate them, so only an exact --no-pager or -P is allowed.
    if not args or args[0] not in _GIT_READS:
        return False
    subcommand, rest = args[0], args[1:]
    if any(a.startswith(_GIT_RUNS) for a in rest):
        return False
    if subcommand != "branch":
        return True
    # A bare name would create a branch: only listing is reading.
    flags = [a for a in rest if a.startswith("-")]
    if not all(
        f in _BRANCH_FLAGS or f.startswith(("--sort=", "--format=", "--color=")) for f in flags
    ):
        return False
    return not operands(rest) or bool(_BRANCH_LISTING & set(rest))
