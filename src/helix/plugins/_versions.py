"""Version constraints (``>=0.1,<1``): the small part of PEP 440 a plugin needs.

Only release numbers are compared (``1.2.0rc1`` and ``1.2.0+local`` count as
``1.2.0``); a constraint is clauses joined by commas, each an operator (``>=``, ``<=``,
``>``, ``<``, ``==``, ``!=``, ``~=``) and a version; ``==1.2.*`` matches a prefix.
"""

from __future__ import annotations

import re

_CLAUSE = re.compile(r"\s*(~=|==|!=|>=|<=|>|<)\s*(\d+(?:\.\d+)*)(\.\*)?\s*")
_RELEASE = re.compile(r"\s*v?(\d+(?:\.\d+)*)")


def release(version: str) -> tuple[int, ...]:
    """The release numbers of ``version`` (``ValueError`` when it starts with none)."""
    match = _RELEASE.match(version)
    if match is None:
        raise ValueError(f"{version!r} is not a version (like 1.2.0)")
    return tuple(int(part) for part in match.group(1).split("."))


def satisfies(version: str, constraint: str) -> bool:
    """Whether ``version`` meets ``constraint``; ``ValueError`` names a malformed clause."""
    have = release(version)
    for clause in constraint.split(","):
        match = _CLAUSE.fullmatch(clause)
        if match is None:
            raise ValueError(f"{clause.strip()!r} is not a version clause (like >=0.1)")
        op, text, star = match.groups()
        want = tuple(int(part) for part in text.split("."))
        if star and op not in ("==", "!="):
            raise ValueError(f"{clause.strip()!r}: only == and != take a .* suffix")
        if not _holds(have, op, want, prefix=bool(star)):
            return False
    return True


def _holds(have: tuple[int, ...], op: str, want: tuple[int, ...], *, prefix: bool) -> bool:
    if prefix:
        equal = have[: len(want)] == want
        return equal if op == "==" else not equal
    width = max(len(have), len(want))
    a, b = _pad(have, width), _pad(want, width)
    match op:
        case "==":
            return a == b
        case "!=":
            return a != b
        case ">=":
            return a >= b
        case "<=":
            return a <= b
        case ">":
            return a > b
        case "<":
            return a < b
    # ~=: at least ``want``, and the same release up to its last number
    return a >= b and have[: len(want) - 1] == want[:-1] if len(want) > 1 else a >= b


def _pad(numbers: tuple[int, ...], width: int) -> tuple[int, ...]:
    return numbers + (0,) * (width - len(numbers))
