"""What ``Plugins`` tells: a plugin as listed, and a change that happened to one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ._graph import Status
from ._load import SourceKind

ChangeKind = Literal["reloaded", "restarted", "activated", "deactivated", "failed"]


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """One plugin as ``helix plugins list`` shows it."""

    name: str
    version: str | None
    """Declared version + a hash of its files; ``None`` when it did not load."""
    source: SourceKind
    location: str
    status: Status
    reason: str
    """Why it is not active; for an active one whose last edit failed, that error."""
    requires: tuple[str, ...] = ()
    provides: Mapping[str, list[str]] = field(default_factory=dict[str, list[str]])

    def to_dict(self) -> dict[str, Any]:
        """As JSON (``helix plugins list --json``)."""
        return {
            "name": self.name,
            "version": self.version,
            "source": self.source,
            "location": self.location,
            "status": self.status,
            "reason": self.reason,
            "requires": list(self.requires),
            "provides": dict(self.provides),
        }


@dataclass(frozen=True, slots=True)
class PluginChange:
    """What happened to one plugin (told to subscribers)."""

    name: str
    kind: ChangeKind
    version: str | None
    """The version now serving (``None``: none does)."""
    previous: str | None
    reason: str


Listener = Callable[[PluginChange], None]
