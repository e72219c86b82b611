"""A run's live world (``sandbox.live``): opened on first use, frozen on pause, ended with it.

The box is opened the first time a tool needs it — restored from the run's last
checkpoint image when the log names one (``state.live.image``), so a run paused on
one node resumes its processes on another. When the run pauses, the world is
checkpointed into the object store (``world.checkpointed``) where the tier can,
otherwise stopped with the reason logged (``world.stopped``); when the run ends, or
its driver stops, everything in the box is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from helix.errors import ConfigError
from helix.kernel.events import (
    TERMINAL_STATUSES,
    NewEvent,
    Payload,
    WorldCheckpointed,
    WorldRestored,
    WorldStopped,
)
from helix.kernel.session import SessionState
from helix.sandbox import (
    AUTOMATIC,
    EgressHook,
    LiveWorld,
    Sandbox,
    StrongestSandbox,
    resolve_sandbox,
)
from helix.tools import LIVE_TOOLS, ToolRegistry

from ._blueprint import Blueprint
from ._session import LiveSession
from ._setup import RunSetup


def offered(tools: ToolRegistry, blueprint: Blueprint) -> list[str]:
    """The tools a blueprint that names none is offered: all (the live ones if live)."""
    live = {t.name for t in LIVE_TOOLS}
    return [n for n in tools.names if blueprint.sandbox.live or n not in live]


def live_sandbox(sandbox: Sandbox, blueprint: Blueprint) -> Sandbox:
    """The sandbox a run uses: the engine's, or a stronger one the run asks for.

    Only where the engine's was left to choose (``StrongestSandbox``): a run asking for
    a tier chosen only when asked for, or for a live world, gets one.
    """
    settings = blueprint.sandbox
    if not isinstance(sandbox, StrongestSandbox):
        return sandbox
    if settings.live:
        return resolve_sandbox(minimum=settings.kind, live=True)
    if settings.kind not in AUTOMATIC:
        return resolve_sandbox(minimum=settings.kind)
    return sandbox


class RunLiveWorld:
    """The live world of one run's incarnation (``ToolContext.live``)."""

    def __init__(self, setup: RunSetup, session: LiveSession, egress: EgressHook | None) -> None:
        self.setup = setup
        self.session = session
        self._egress = egress
        self._world: LiveWorld | None = None
        self._lock = asyncio.Lock()
        self._issued = 0

    @property
    def is_open(self) -> bool:
        return self._world is not None

    def next_process(self) -> str:
        """A new background process id (``p1``, ``p2``…), never given twice in the run."""
        self._issued = max(self._issued, len(self.session.state.live.processes)) + 1
        return f"p{self._issued}"

    def is_running(self, process: str) -> bool:
        """Whether the log still has ``process`` running."""
        known = self.session.state.live.processes.get(process)
        return known is not None and known.running

    async def world(self) -> LiveWorld:
        """The run's live world, opened (or restored from its last image) on first use."""
        async with self._lock:
            if self._world is None:
                self._world = await self._open()
            return self._world

    async def _open(self) -> LiveWorld:
        sandbox = self.setup.sandbox
        if not sandbox.can_keep_live:
            raise ConfigError(
                f"the {sandbox.tier} sandbox cannot keep a live world (sandbox.live): use the"
                " process, podman or gvisor tier"
            )
        image = self.session.state.live.image
        tmp_bytes = self.setup.blueprint.sandbox.tmp_mb << 20
        if image is None or self.setup.objects is None:
            box = await sandbox.open_box(
                cwd=self.setup.world, egress=self._egress, tmp_bytes=tmp_bytes
            )
            return LiveWorld(box)
        clock = self.setup.clock
        started = clock.monotonic()
        with tempfile.TemporaryDirectory(prefix="helix-restore-") as folder:
            unpacked = Path(folder) / "image"
            await asyncio.to_thread(_unpack, self.setup.objects.path(image), unpacked)
            box = await sandbox.open_box(
                cwd=self.setup.world, egress=self._egress, tmp_bytes=tmp_bytes, restore=unpacked
            )
        seconds = round(clock.monotonic() - started, 4)
        await self._log(WorldRestored(tier=sandbox.tier, image=image, seconds=seconds))
        return LiveWorld(box)

    async def watch_idle(self, minutes: float) -> None:
        """Checkpoint the world once ``minutes`` pass with no new turn and no call running.

        Runs until cancelled (the loop's task group owns it); the world is restored
        when a tool next needs it.
        """
        session = self.session
        while session.state.status not in TERMINAL_STATUSES:
            turn, head = session.state.turn, session.state.head
            moved = await session.wait_until(_moved_on(turn), minutes * 60)
            state = session.state
            if moved or not self.is_open or state.running_calls or state.head != head:
                continue
            if self._world is not None and self._world.box.can_checkpoint:
                await self.suspend("idle")

    async def suspend(self, reason: Literal["paused", "idle"] = "paused") -> None:
        """The run paused (or idled): checkpoint the world into the store.

        On a pause where the tier cannot, the world is stopped and the reason logged;
        an idle world that cannot be checkpointed is left running.
        """
        async with self._lock:
            world = self._world
            if world is None:
                return
            objects = self.setup.objects
            able = world.box.can_checkpoint and objects is not None
            if reason == "idle" and not able:
                return
            self._world = None
            running = self.session.state.live.running()
            if not able or objects is None:
                await world.close()
                why = f"the {world.tier} sandbox cannot checkpoint a live world"
                if objects is None:
                    why = "this engine keeps no object store to hold a checkpoint"
                stopped = WorldStopped(
                    tier=world.tier, reason="paused", detail=why, processes=running
                )
                await self._log(stopped)
                return
            clock = self.setup.clock
            started = clock.monotonic()
            with tempfile.TemporaryDirectory(prefix="helix-checkpoint-") as folder:
                image = Path(folder) / "image"
                image.mkdir()
                try:
                    await world.checkpoint(image)
                except BaseException:
                    await world.close()
                    raise
                archive = Path(folder) / "image.tar"
                await asyncio.to_thread(_pack, image, archive)
                size = (await asyncio.to_thread(os.stat, archive)).st_size
                digest, _added = await asyncio.to_thread(objects.put_file, archive, size)
            seconds = round(clock.monotonic() - started, 4)
            checkpointed = WorldCheckpointed(
                tier=world.tier,
                image=digest,
                size_bytes=size,
                seconds=seconds,
                processes=running,
                reason=reason,
            )
            await self._log(checkpointed)

    async def end(self, *, interrupted: bool = False) -> None:
        """Kill everything in the world: the run ended (or its driver stopped)."""
        async with self._lock:
            world, self._world = self._world, None
            if world is None:
                return
            await world.close()
            if not interrupted:
                running = self.session.state.live.running()
                await self._log(WorldStopped(tier=world.tier, reason="ended", processes=running))

    async def _log(self, payload: Payload) -> None:
        turn = self.session.state.turn or None
        await self.session.append([NewEvent(payload, turn=turn)])


def _moved_on(turn: int) -> Callable[[SessionState], bool]:
    """Whether a run has left ``turn`` (a new turn started, or it ended)."""
    return lambda state: state.turn != turn or state.status in TERMINAL_STATUSES


def _pack(image: Path, archive: Path) -> None:
    with tarfile.open(archive, "w") as tar:
        tar.add(image, arcname=".")


def _unpack(archive: Path, into: Path) -> None:
    """Unpack a checkpoint archive, refusing links, devices and paths out of ``into``."""
    into.mkdir()
    try:
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, OSError) as error:
        with contextlib.suppress(OSError):
            shutil.rmtree(into)
        raise ConfigError(f"the live world's checkpoint image could not be read: {error}") from None
