"""The automation store: one small typed interface, a SQLite and a PostgreSQL backend.

Automations live in the database the events and accounts live in (tables of their own),
so one ``HELIX_DB`` names everything a server keeps. The firing claims' primary key
``(automation_id, slot)`` is what makes several servers on one database fire a slot
once: whoever inserts the row fires, the others find it there. Every backend passes the
one conformance suite in ``tests/automations``.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Collection
from typing import Any

from helix.errors import ConflictError, NotFoundError

from ._model import Automation, Firing


class AutomationExistsError(ConflictError):
    """The workspace already has an automation with that name."""

    code = "automation_exists"


class AutomationNotFoundError(NotFoundError):
    """No automation with that id (among the caller's workspaces)."""

    code = "automation_not_found"


def encode(automation: Automation) -> str:
    """The row's ``body``: trigger, target and policy as JSON."""
    return json.dumps(
        automation.model_dump(mode="json", include={"trigger", "target", "missed"}),
        separators=(",", ":"),
    )


def decode(row: Any) -> Automation:
    """A row ``(id, workspace, name, owner, body, paused, created_at, active_since)``."""
    body = json.loads(row[4])
    return Automation(
        id=row[0], workspace=row[1], name=row[2], owner=row[3], paused=bool(row[5]),
        created_at=row[6], active_since=float(row[7]), **body,
    )  # fmt: skip


COLUMNS = "id, workspace, name, owner, body, paused, created_at, active_since"


class AutomationStore(ABC):
    """Automations, their webhook secrets, and the claims of their firings."""

    @abstractmethod
    async def add(self, automation: Automation, secret: str | None) -> None:
        """Store a new automation; ``AutomationExistsError`` if its workspace has the name."""

    @abstractmethod
    async def get(self, automation_id: str) -> Automation | None:
        """The automation (without ``next_firing``/``last_firing``), if there is one."""

    @abstractmethod
    async def list(self, workspaces: Collection[str] | None = None) -> list[Automation]:
        """The automations of ``workspaces`` (all with ``None``), by workspace then name."""

    @abstractmethod
    async def set_paused(self, automation_id: str, paused: bool, *, active_since: float) -> None:
        """Pause or resume; resuming sets ``active_since`` (slots before it never fire).

        ``AutomationNotFoundError`` if there is no such automation.
        """

    @abstractmethod
    async def remove(self, automation_id: str) -> None:
        """Delete the automation and its claims; ``AutomationNotFoundError`` if missing."""

    @abstractmethod
    async def secret(self, automation_id: str) -> str | None:
        """The webhook's signing secret (``None`` for other triggers or a missing one)."""

    @abstractmethod
    async def claim(
        self, automation_id: str, slot: str, *, fired_at: str, slot_at: float | None = None
    ) -> bool:
        """Claim ``slot`` for firing: ``True`` for the one caller (of any server) that got it.

        ``slot_at``: a cron slot's time (POSIX seconds), the schedule's cursor.
        """

    @abstractmethod
    async def settle(
        self, automation_id: str, slot: str, *, run_id: str | None, error: str | None
    ) -> None:
        """Record what a claimed firing did: the run it started, or why it could not."""

    @abstractmethod
    async def last_slot(self, automation_id: str) -> float | None:
        """The latest claimed cron slot's time, if any: slots up to it are done."""

    @abstractmethod
    async def last_firing(self, automation_id: str) -> Firing | None:
        """The most recent claim (by ``fired_at``, then slot), if any."""

    async def close(self) -> None:  # noqa: B027 (a no-op unless the backend holds resources)
        """Release the connection."""
