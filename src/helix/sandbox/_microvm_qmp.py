"""A minimal client of QEMU's machine protocol (QMP), for migrations and run states."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from helix.errors import ConfigError


class Qmp:
    """A minimal QMP client: one command at a time, events skipped."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer

    @classmethod
    async def connect(cls, path: Path) -> Qmp:
        started = time.monotonic()
        while True:
            try:
                reader, writer = await asyncio.open_unix_connection(str(path))
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() - started > 30:
                    raise ConfigError("QEMU's QMP socket never answered") from None
                await asyncio.sleep(0.02)
        qmp = cls(reader, writer)
        await reader.readline()  # the greeting
        await qmp.run("qmp_capabilities")
        return qmp

    async def run(self, command: str, **arguments: object) -> dict[str, Any]:
        message: dict[str, object] = {"execute": command}
        if arguments:
            message["arguments"] = arguments
        self._writer.write(json.dumps(message).encode() + b"\n")
        await self._writer.drain()
        while True:
            line = await self._reader.readline()
            if not line:
                raise ConfigError(f"QEMU closed QMP during {command}")
            answer = json.loads(line)
            if "error" in answer:
                raise ConfigError(f"QEMU refused {command}: {answer['error'].get('desc')}")
            if "return" in answer:
                result = answer["return"]
                return result if isinstance(result, dict) else {}

    def close(self) -> None:
        self._writer.close()


async def until_migrated(qmp: Qmp, timeout_s: float) -> object:
    """The migration's status once it has ended (``completed``, ``failed``…)."""
    status: object = None
    for _ in range(int(timeout_s / 0.02)):
        status = (await qmp.run("query-migrate")).get("status")
        if status in ("completed", "failed", "cancelled"):
            break
        await asyncio.sleep(0.02)
    return status


async def continue_loaded(path: Path) -> None:
    """Once QEMU (QMP at ``path``) has loaded its ``-incoming`` guest, let it run (``cont``).

    A guest migrated while stopped (a checkpoint, a template) stays paused where loaded.
    """
    qmp = await Qmp.connect(path)
    try:
        while (await qmp.run("query-status")).get("status") == "inmigrate":  # noqa: ASYNC110 - QEMU is asked, not told
            await asyncio.sleep(0.01)
        await qmp.run("cont")
    finally:
        qmp.close()
