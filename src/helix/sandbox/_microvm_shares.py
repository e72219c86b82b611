"""A microVM box's two 9p shares, served by Helix on the host ends of their ports.

The guest mounts the host's ``/usr`` (read-only) and the world over virtio-serial
ports (``_microvm_guest.USR_PORT``, ``WORLD_PORT``); QEMU carries each port to a Unix
socket in the box's folder, and ``Shares`` connects to both and answers the guest's
9P2000.L requests there (``_ninep.NinepShare``: every path resolved component by
component under the share's root, no link followed). Because the server is Helix's,
its state (the guest's fids) is saved beside a checkpoint (``dump``) and loaded by
whichever Helix restores it (``load``), days later perhaps, on another world path.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from helix.errors import ConfigError

from ._ninep import NinepShare

SHARES = ("usr", "world")
"""The shares' names: their sockets are ``NAME.sock`` in the box's folder."""
Connect = Callable[[Path], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


class Shares:
    """The box's ``/usr`` and world shares, each serving one connection to QEMU."""

    def __init__(self, usr: NinepShare, world: NinepShare) -> None:
        self._shares = {"usr": usr, "world": world}
        self._tasks: list[asyncio.Task[None]] = []
        self._writers: list[asyncio.StreamWriter] = []

    @classmethod
    def fresh(cls, world: Path) -> Shares:
        """Shares for a guest that has mounted neither yet."""
        return cls(NinepShare(Path("/usr"), read_only=True), NinepShare(world))

    @classmethod
    def load(cls, world: Path, state: Mapping[str, Any]) -> Shares:
        """The shares a checkpoint's guest has mounted, as ``dump`` left them.

        ``ConfigError`` if the saved state is not a valid one (it is read from disk).
        """
        try:
            usr = NinepShare.load(Path("/usr"), state["usr"], read_only=True)
        except (KeyError, TypeError, ValueError) as error:
            raise ConfigError(f"the checkpoint's shares are damaged: {error}") from None
        try:
            world_share = NinepShare.load(world, state["world"])
        except (KeyError, TypeError, ValueError) as error:
            usr.close()
            raise ConfigError(f"the checkpoint's shares are damaged: {error}") from None
        return cls(usr, world_share)

    @classmethod
    def template(cls, world: Path, usr: Mapping[str, Any]) -> Shares:
        """The shares of a guest from a template: ``/usr`` mounted, the world not yet.

        ``usr`` is the ``/usr`` share's saved state; ``ValueError`` if it is not a valid one.
        """
        return cls(NinepShare.load(Path("/usr"), usr, read_only=True), NinepShare(world))

    def dump(self) -> dict[str, Any]:
        """Both shares' state (JSON-able), once the guest is stopped."""
        return {name: share.dump() for name, share in self._shares.items()}

    async def connect(self, folder: Path, connect: Connect) -> None:
        """Connect to each share's socket in ``folder`` and serve it until ``close``."""
        for name, share in self._shares.items():
            reader, writer = await connect(folder / f"{name}.sock")
            self._writers.append(writer)
            self._tasks.append(asyncio.create_task(share.serve(reader, writer)))

    @property
    def busy(self) -> bool:
        """Whether a request of the guest's is being answered now."""
        return any(share.busy for share in self._shares.values())

    async def settled(self, timeout_s: float) -> None:
        """Return once no request is being answered (``ConfigError`` after ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        while self.busy:
            if time.monotonic() > deadline:
                raise ConfigError("the microvm's shares stayed busy: cannot checkpoint")
            await asyncio.sleep(0.005)

    async def close(self) -> None:
        """Stop serving (the guest is gone or frozen into a checkpoint)."""
        for writer in self._writers:
            writer.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        self._tasks.clear()
        self._writers.clear()
        for share in self._shares.values():
            share.close()
