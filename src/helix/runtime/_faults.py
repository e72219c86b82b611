"""Deliberate faults, for testing supervision and crash recovery end to end.

``HELIX_FAULTS`` holds comma-separated rules; unset (the normal case) means none:

- ``crash-after:EVENT_TYPE`` raises ``InjectedFault`` in the loop right after the run's
  first append of an event of that type, once per process (the supervisor restarts it).
- ``exit-after:EVENT_TYPE`` ends the process at once (``os._exit``), as a ``kill -9``
  would, right after that append: the next process must resume.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field


class InjectedFault(RuntimeError):
    """A crash asked for by ``HELIX_FAULTS``."""


@dataclass
class Faults:
    """The fault rules in force and which have fired."""

    crash_after: set[str] = field(default_factory=set[str])
    exit_after: set[str] = field(default_factory=set[str])
    fired: set[str] = field(default_factory=set[str])

    @classmethod
    def from_env(cls) -> Faults:
        """Read ``HELIX_FAULTS``."""
        faults = cls()
        for rule in filter(
            None, (r.strip() for r in os.environ.get("HELIX_FAULTS", "").split(","))
        ):
            kind, _, event_type = rule.partition(":")
            if kind == "crash-after":
                faults.crash_after.add(event_type)
            elif kind == "exit-after":
                faults.exit_after.add(event_type)
        return faults

    @property
    def armed(self) -> bool:
        """Whether any rule is in force (appends skip the check when none is)."""
        return bool(self.crash_after or self.exit_after)

    def after(self, event_types: list[str]) -> None:
        """Fire whatever rule matches these just-appended event types."""
        for event_type in event_types:
            if event_type in self.exit_after:
                os._exit(137)
            if event_type in self.crash_after and event_type not in self.fired:
                self.fired.add(event_type)
                raise InjectedFault(f"injected crash after {event_type}")
