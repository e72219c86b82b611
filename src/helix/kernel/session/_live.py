"""The fold of live-world events: a run's background processes and its pending image."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from helix.kernel.events import Event


@dataclass
class BackgroundProcess:
    """A process a run started in the background of its live world."""

    process: str
    command: str
    call_id: str
    turn: int | None
    running: bool = True
    exit_code: int | None = None
    ended: str | None = None
    """Why it ended (``world.process_ended``'s reason); ``None`` while it runs."""


@dataclass
class LiveState:
    """What the log says of the run's live world."""

    processes: dict[str, BackgroundProcess] = field(default_factory=dict[str, BackgroundProcess])
    image: str | None = None
    """The checkpoint image (an object's digest) the world is to be restored from, once
    it was checkpointed and not yet restored or stopped; ``None``: none."""
    tier: str | None = None
    """The tier of the last checkpoint, restore or stop."""

    def running(self) -> list[str]:
        """The ids of the processes still running (frozen in ``image``, if there is one)."""
        return [p.process for p in self.processes.values() if p.running]

    def next_id(self) -> str:
        """The id the next background process gets."""
        return f"p{len(self.processes) + 1}"


def _started(live: LiveState, event: Event, data: dict[str, Any]) -> None:
    live.processes[data["process"]] = BackgroundProcess(
        data["process"], data["command"], data["call_id"], event.turn
    )


def _ended(live: LiveState, event: Event, data: dict[str, Any]) -> None:
    process = live.processes.get(data["process"])
    if process is not None:
        process.running = False
        process.exit_code = data.get("exit_code")
        process.ended = data["reason"]


def _checkpointed(live: LiveState, event: Event, data: dict[str, Any]) -> None:
    live.image = data["image"]
    live.tier = data["tier"]


def _restored(live: LiveState, event: Event, data: dict[str, Any]) -> None:
    live.image = None
    live.tier = data["tier"]


def _stopped(live: LiveState, event: Event, data: dict[str, Any]) -> None:
    live.image = None
    live.tier = data["tier"]
    for process in live.processes.values():
        if process.running:
            process.running = False
            process.ended = "world_stopped"


LIVE_HANDLERS: dict[str, Callable[[LiveState, Event, dict[str, Any]], None]] = {
    "world.process_started": _started,
    "world.process_ended": _ended,
    "world.checkpointed": _checkpointed,
    "world.restored": _restored,
    "world.stopped": _stopped,
}
