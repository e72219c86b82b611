"""Which paths a world's snapshots leave out: ``.gitignore`` rules, plus ``.helixignore``.

The rules of both files at the world's root are read in that order (later rules win,
``!`` re-includes), with git's pattern syntax: a pattern with a slash before its end is
anchored at the root, one without matches a name at any depth, a trailing slash matches
only directories, ``*`` and ``?`` stay within a path segment and ``**`` crosses them.
``.git/`` is always left out: it is the version control's, not the agent's, state.
Nested ``.gitignore`` files are not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

IGNORE_FILES = (".gitignore", ".helixignore")
ALWAYS_IGNORED = (".git/",)


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    negated: bool
    dirs_only: bool


class IgnoreRules:
    """A compiled list of ignore patterns; ``ignored(path, is_dir)`` applies them."""

    def __init__(self, lines: list[str]) -> None:
        self._rules = [rule for line in lines if (rule := _compile(line)) is not None]
        self.applies_to_files = any(not rule.dirs_only for rule in self._rules)
        """Whether any rule can leave out a file (else only folders need checking)."""

    @classmethod
    def for_world(cls, root: Path) -> IgnoreRules:
        """The rules of the world at ``root`` (its ignore files, if any, and the defaults)."""
        lines = list(ALWAYS_IGNORED)
        for name in IGNORE_FILES:
            try:
                lines += (root / name).read_text(errors="replace").splitlines()
            except OSError:
                continue
        return cls(lines)

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` (relative, ``/``-separated) is left out (its parents unchecked)."""
        verdict = False
        for rule in self._rules:
            if rule.dirs_only and not is_dir:
                continue
            if rule.pattern.fullmatch(path):
                verdict = not rule.negated
        return verdict

    def ignored_with_parents(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` or any folder above it is left out."""
        parts = path.split("/")
        for depth in range(1, len(parts)):
            if self.ignored("/".join(parts[:depth]), True):
                return True
        return self.ignored(path, is_dir)


def _compile(line: str) -> _Rule | None:
    text = line.rstrip("\n")
    if not text.strip() or text.startswith("#"):
        return None
    if not text.endswith("\\ "):
        text = text.rstrip()
    negated = text.startswith("!")
    if negated or text.startswith("\\!") or text.startswith("\\#"):
        text = text[1:]
    dirs_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    text = text.lstrip("/")
    body = _translate(text)
    regex = body if anchored else f"(?:.*/)?{body}"
    return _Rule(re.compile(regex), negated, dirs_only)


def _translate(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[" and (end := glob.find("]", i + 2)) != -1:
            inner = glob[i + 1 : end]
            if inner.startswith("!"):
                inner = "^" + inner[1:]
            out.append(f"[{inner.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        elif char == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)
