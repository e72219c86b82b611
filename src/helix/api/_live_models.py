"""A run's live world as the door shows it: its background processes and last image."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from helix.kernel.session import LiveState


class BackgroundProcessView(BaseModel):
    """One background process of a run's live world (``run_command`` with ``background``)."""

    model_config = ConfigDict(frozen=True)

    process: str
    """``p1``, ``p2``…"""
    command: str
    call_id: str
    turn: int | None
    """The turn that started it."""
    running: bool
    """Whether the log still has it running (frozen in ``image`` while checkpointed)."""
    exit_code: int | None
    ended: str | None
    """Why it ended: ``exited``, ``stopped`` or ``world_stopped``; ``None`` while running."""


class ProcessList(BaseModel):
    """A run's background processes, oldest first, and where its live world stands."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    processes: list[BackgroundProcessView]
    image: str | None
    """The checkpoint image the world will be restored from (an object's digest), while
    it is checkpointed; ``None`` otherwise."""
    tier: str | None
    """The tier of its last checkpoint, restore or stop; ``None`` if none happened."""

    @classmethod
    def of(cls, run_id: str, live: LiveState, *, finished: bool = False) -> ProcessList:
        """The list of a run's folded ``live`` state.

        A ``finished`` run's world is stopped by whoever drove it, even before its
        ``world.stopped`` is logged: its processes are shown ended (``world_stopped``).
        """
        shown = [
            BackgroundProcessView(
                process=p.process,
                command=p.command,
                call_id=p.call_id,
                turn=p.turn,
                running=p.running and not finished,
                exit_code=p.exit_code,
                ended="world_stopped" if p.running and finished else p.ended,
            )
            for p in live.processes.values()
        ]
        return cls(run_id=run_id, processes=shown, image=live.image, tier=live.tier)
