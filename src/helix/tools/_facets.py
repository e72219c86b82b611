"""What a tool does, declared once: the facets every gate reads instead of its name.

A gate never asks *which* tool a call is, only what the tool says it does: which of
its arguments are paths in the world (read or written), which one is a shell command
line, which one is a URL, whether it runs in the run's sandbox, whether it hands its
work to a child run, whether it only reads, and what its effect is. A tool from a
plugin that runs a shell with ``cmd=`` meets the commands gate exactly as the
built-in command tool does, because both declare ``command=``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, get_args

EffectKind = Literal["none", "world", "external-withhold", "external-compensate", "external"]
"""What running the tool changes: nothing, the run's world (revertible by snapshots),
or the outside world: withheld until approved, compensated on rollback, or
(``external``) done for good, as far as Helix knows (an MCP server's tool that is not
read-only: nothing can withhold or undo it, so it asks by default and a rollback
reports it as not undoable; it may change the world too, which the turn's snapshot
walks for)."""

PathAccess = Literal["read", "write"]
"""What a tool does at a path argument: reads it, or writes (creates, changes) it."""

FacetName = Literal["paths", "writes", "command", "url", "sandboxed", "delegates"]
"""A facet a gate may be scoped to (``Gate.facets``): the tools that declare it."""

_NAMES: frozenset[str] = frozenset(get_args(FacetName))


@dataclass(frozen=True, slots=True)
class Facets:
    """What a tool does, as the gates read it (``ToolDef.facets``)."""

    read_only: bool = False
    """It only reads the world and changes nothing anywhere."""
    effect: EffectKind = "world"
    paths: Mapping[str, PathAccess] = field(default_factory=dict[str, PathAccess])
    """argument → ``read`` or ``write``: the arguments naming paths in the world (a
    string, or a list of strings). A tool declaring write paths says its changes to the
    world are at those paths."""
    command: str | None = None
    """The argument holding a shell command line, if any."""
    url: str | None = None
    """The argument holding a URL the tool reaches, if any."""
    sandboxed: bool = False
    """It runs its work in the run's sandbox (``tool.started`` names the tier, and its
    connections go through the run's egress proxy)."""
    delegates: bool = False
    """It hands its work to a child run, each of whose calls passes the gates itself."""

    def __post_init__(self) -> None:
        # A copy nobody can change: the gates checked what was declared.
        object.__setattr__(self, "paths", MappingProxyType(dict(self.paths)))
        for argument, access in self.paths.items():
            if access not in ("read", "write"):
                raise ValueError(f"path argument {argument!r}: access must be read or write")
        if self.writes and (self.read_only or self.effect != "world"):
            raise ValueError(
                f"arguments {', '.join(self.writes)} are written paths in the world,"
                " so the tool is not read-only and its effect is 'world'"
            )
        roles = [*self.paths, *(a for a in (self.command, self.url) if a is not None)]
        doubled = sorted({a for a in roles if roles.count(a) > 1})
        if doubled:
            raise ValueError(f"an argument has one role only: {', '.join(doubled)}")

    @property
    def arguments(self) -> frozenset[str]:
        """Every argument a facet names."""
        named = {self.command, self.url} - {None}
        return frozenset(self.paths) | {a for a in named if a is not None}

    @property
    def writes(self) -> tuple[str, ...]:
        """The path arguments the tool writes, in declaration order."""
        return tuple(a for a, access in self.paths.items() if access == "write")

    def declares(self, facet: str) -> bool:
        """Whether the tool declares ``facet`` (one of ``FacetName``)."""
        match facet:
            case "paths":
                return bool(self.paths)
            case "writes":
                return bool(self.writes)
            case "command":
                return self.command is not None
            case "url":
                return self.url is not None
            case "sandboxed":
                return self.sandboxed
            case "delegates":
                return self.delegates
        raise ValueError(f"unknown facet {facet!r}: facets are {', '.join(sorted(_NAMES))}")
