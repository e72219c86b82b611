"""Policies the gates apply: the capability ceiling, egress lists, approval rules.

These are data (pydantic models, so blueprints and workspace settings can hold them);
the gates in ``builtin/`` apply them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from helix.sandbox import EgressPolicy as EgressPolicy


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ArgumentConstraint(_Frozen):
    """A limit on one argument of one tool: its string value must match ``pattern``."""

    pattern: str
    """A regular expression the whole value must match (``re.fullmatch``)."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        # A broken pattern found at load time beats a gate error on every call.
        _check_pattern(pattern)
        return pattern

    def allows(self, value: object) -> bool:
        """Whether ``value`` (as text, see ``argument_text``) matches the whole pattern."""
        return re.fullmatch(self.pattern, argument_text(value)) is not None


class Policy(_Frozen):
    """A capability ceiling: which tools, and within which argument limits.

    Ceilings nest (organisation ≥ workspace ≥ blueprint ≥ run) and the effective one
    is their intersection, so a lower level can only narrow what a higher one allows.
    """

    tools: frozenset[str] | None = None
    """Tools allowed; ``None`` allows every tool."""
    deny_tools: frozenset[str] = frozenset()
    """Tools refused whatever ``tools`` says."""
    arguments: dict[str, dict[str, tuple[ArgumentConstraint, ...]]] = Field(
        default_factory=dict[str, dict[str, tuple[ArgumentConstraint, ...]]]
    )
    """tool → argument → constraints, all of which must hold."""

    def intersect(self, other: Policy) -> Policy:
        """The ceiling allowing only what both ``self`` and ``other`` allow.

        Tools are intersected (``None`` meaning every tool), refused tools and argument
        constraints are united, so the result is never wider than either side.
        """
        if self.tools is None:
            tools = other.tools
        elif other.tools is None:
            tools = self.tools
        else:
            tools = self.tools & other.tools
        arguments = {tool: dict(limits) for tool, limits in self.arguments.items()}
        for tool, limits in other.arguments.items():
            merged = arguments.setdefault(tool, {})
            for arg, constraints in limits.items():
                known = merged.get(arg, ())
                merged[arg] = known + tuple(c for c in constraints if c not in known)
        return Policy(
            tools=tools, deny_tools=self.deny_tools | other.deny_tools, arguments=arguments
        )


class ApprovalRule(_Frozen):
    """Whether a call of ``tool`` (whose arguments match ``when``) is allowed or asked."""

    tool: str
    """A tool name, or ``*`` for every tool."""
    when: dict[str, str] = Field(default_factory=dict[str, str])
    """argument → regular expression (``re.search``) that must match its value."""
    action: Literal["allow", "ask", "deny"]

    @field_validator("when")
    @classmethod
    def _compiles(cls, when: dict[str, str]) -> dict[str, str]:
        for pattern in when.values():
            _check_pattern(pattern)
        return when

    def matches(self, tool: str, args: Mapping[str, Any]) -> bool:
        """Whether this rule covers a call of ``tool`` with ``args``.

        An argument named in ``when`` but absent from ``args`` does not match: a rule
        about what a value looks like says nothing about a call without it.
        """
        if self.tool not in ("*", tool):
            return False
        return all(
            name in args and re.search(pattern, argument_text(args[name])) is not None
            for name, pattern in self.when.items()
        )


def argument_text(value: object) -> str:
    """An argument's value as the text patterns are matched against.

    Strings are taken as they are; anything else as JSON (``30``, ``true``, ``["a"]``),
    so a pattern reads the same whichever language wrote the call.
    """
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _check_pattern(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as error:
        raise ValueError(f"invalid regular expression {pattern!r}: {error}") from None
