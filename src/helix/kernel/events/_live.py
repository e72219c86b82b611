"""Live-world events: background processes of a run's box, its checkpoints and restores.

A run whose blueprint asks for a live world (``sandbox.live``) keeps one box for its
commands. What runs in it in the background, when it was frozen into a checkpoint
image (an object in the store) and brought back, and when it was stopped, is logged
here, so the run's processes can be listed from its log and a paused run resumed on
another node from its last image.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ._checks import Digest
from ._payload import Payload

ProcessId = str
"""``p1``, ``p2``…: a background process's id within its run."""
_PROCESS = r"^p[1-9][0-9]{0,5}$"


class WorldProcessStarted(Payload):
    """A background process was started in the run's live world (Helix's addition)."""

    TYPE: ClassVar[str] = "world.process_started"

    process: ProcessId = Field(pattern=_PROCESS)
    command: str
    call_id: str
    """The ``run_command`` call (``background: true``) that started it."""


class WorldProcessEnded(Payload):
    """A background process was seen to have ended, or was ended (Helix's addition)."""

    TYPE: ClassVar[str] = "world.process_ended"

    process: ProcessId = Field(pattern=_PROCESS)
    exit_code: int | None = None
    """Its exit code, when it exited on its own or by ``stop_process``; ``None`` when it
    was killed with its world."""
    reason: Literal["exited", "stopped", "world_stopped"]
    """``exited``: it ended on its own; ``stopped``: ``stop_process`` ended it;
    ``world_stopped``: its live world was stopped (the run ended, or paused on a tier
    that cannot checkpoint)."""


class WorldCheckpointed(Payload):
    """The run's live world was frozen into a checkpoint image, its processes released.

    The image (the tier's own format, as one tar archive) is an object in the store;
    the next use of the world after a resume restores it, memory and processes intact.
    """

    TYPE: ClassVar[str] = "world.checkpointed"

    tier: str
    image: Digest
    size_bytes: int = Field(ge=0)
    """The archive's size."""
    seconds: float = Field(ge=0)
    """How long the checkpoint took (the tier's own step and the archive)."""
    processes: list[ProcessId] = Field(default_factory=list[ProcessId])
    """The background processes it holds, still running when it was taken."""
    reason: Literal["paused", "idle"]


class WorldRestored(Payload):
    """The run's live world was brought back from its last checkpoint image."""

    TYPE: ClassVar[str] = "world.restored"

    tier: str
    image: Digest
    seconds: float = Field(ge=0)


class WorldStopped(Payload):
    """The run's live world was stopped and everything in it killed (Helix's addition)."""

    TYPE: ClassVar[str] = "world.stopped"

    tier: str
    reason: Literal["ended", "paused"]
    """``ended``: the run ended (completed, failed, cancelled); ``paused``: the run
    paused and the tier cannot checkpoint (``detail`` says why)."""
    detail: str = ""
    processes: list[ProcessId] = Field(default_factory=list[ProcessId])
    """The background processes that were still running, and were killed."""


LIVE_PAYLOADS: tuple[type[Payload], ...] = (
    WorldProcessStarted,
    WorldProcessEnded,
    WorldCheckpointed,
    WorldRestored,
    WorldStopped,
)
"""The live-world events (the runtime logs a tool's ``ToolResult.events`` of these types)."""
