"""A live world: a run's box, with background processes it can read from and stop.

Everything here happens inside the box, through ``Box.exec``: a background process is
started by a small shell script in its own session (``setsid``), its output going to a
log and its exit code to a file in the box's ``state_dir``, both outside the world. The
host reads them back with more ``exec``s and never opens a path the box could have
planted, so nothing the agent leaves on disk is followed from the host side.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from helix.errors import ConfigError

from ._box import Box, CheckpointImage
from ._sandbox import CommandResult

WORLD_HOST = "world"
"""The host name by which a run's own tools reach ports of its live world
(``http://world:8000/``): each connection is a relay into the box, so nothing else on
the host can reach them."""
PROCESS_ID = re.compile(r"p[1-9][0-9]{0,5}")
"""A background process's id in a live world: ``p1``, ``p2``…"""

_START = """
d="$1"; id="$2"; mkdir -p "$d" && cd "$3" || exit 97
[ -e "$d/$id.log" ] && { echo "$id already exists"; exit 98; }
: >"$d/$id.log"
setsid /bin/sh -c \\
  'echo $$ >"$2.pid"; /bin/sh -c "$1" </dev/null >"$2.log" 2>&1; echo $? >"$2.exit"' \\
  sh "$4" "$d/$id" </dev/null >/dev/null 2>&1 &
i=0; while [ ! -s "$d/$id.pid" ] && [ "$i" -lt 1000 ]; do sleep 0.01; i=$((i+1)); done
[ -s "$d/$id.pid" ] || { echo "$id did not start"; exit 99; }
"""
_OUTPUT = """
f="$1/$2"; [ -f "$f.log" ] || { echo missing; exit 0; }
if [ -f "$f.exit" ]; then echo "exited $(cat "$f.exit")"; else echo running; fi
wc -c <"$f.log"
tail -c +"$3" "$f.log" | head -c "$4"
"""
_STOP = """
f="$1/$2"; p=$(cat "$f.pid" 2>/dev/null) || { echo missing; exit 0; }
[ -f "$f.exit" ] && { echo ended; exit 0; }
kill -TERM -"$p" 2>/dev/null; i=0
while kill -0 -"$p" 2>/dev/null && [ "$i" -lt 30 ]; do sleep 0.1; i=$((i+1)); done
kill -KILL -"$p" 2>/dev/null
[ -f "$f.exit" ] || echo 143 >"$f.exit"; echo stopped
"""
_RELAY = """
import socket, sys, threading
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
s.settimeout(None)
def up():
    while data := sys.stdin.buffer.read1(65536):
        s.sendall(data)
    s.shutdown(socket.SHUT_WR)
threading.Thread(target=up, daemon=True).start()
while data := s.recv(65536):
    sys.stdout.buffer.write(data); sys.stdout.buffer.flush()
"""
_CONTROL_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class OutputPage:
    """Part of a background process's output, and whether it still runs."""

    process: str
    text: str
    offset: int
    """The byte offset in the process's output where ``text`` starts."""
    next_offset: int
    """Where the next read should start (``offset`` plus the bytes read)."""
    size: int
    """Bytes the process has written so far."""
    running: bool
    exit_code: int | None
    """The exit code once it ended (``143`` when ``stop`` ended it); else ``None``."""


class LiveWorld:
    """A box kept for a run: commands, background processes, relays to its ports."""

    def __init__(self, box: Box) -> None:
        self.box = box

    @property
    def tier(self) -> str:
        return self.box.tier

    async def run(self, command: str, *, timeout_s: float, max_output: int) -> CommandResult:
        """Run ``command`` with ``/bin/sh -c`` in the world, in the box."""
        return await self.box.exec(
            ["/bin/sh", "-c", command], timeout_s=timeout_s, max_output=max_output
        )

    async def start(self, process: str, command: str) -> None:
        """Start ``command`` in the background as ``process`` (an id such as ``p3``)."""
        _check_id(process)
        argv = ["/bin/sh", "-c", _START, "sh", self.box.state_dir, process]
        result = await self._control([*argv, str(self.box.world), command])
        if result.exit_code != 0:
            raise ConfigError(f"the background process could not start: {result.output[:300]}")

    async def output(self, process: str, *, offset: int = 0, max_bytes: int) -> OutputPage:
        """What ``process`` wrote from byte ``offset`` on, at most ``max_bytes`` of it."""
        _check_id(process)
        if offset < 0:
            raise ConfigError(f"offset must be 0 or more, not {offset}")
        argv = ["/bin/sh", "-c", _OUTPUT, "sh", self.box.state_dir, process]
        result = await self._control(
            [*argv, str(offset + 1), str(max_bytes)], max_output=max_bytes + 256
        )
        status, _, rest = result.output.partition("\n")
        if status == "missing":
            raise ConfigError(f"no background process {process} in this live world")
        size_line, _, text = rest.partition("\n")
        size = int(size_line.strip() or 0)
        exit_code = int(status.split()[1]) if status.startswith("exited ") else None
        read = len(text.encode())
        return OutputPage(
            process=process,
            text=text,
            offset=offset,
            next_offset=min(offset + read, size) if read else min(offset, size),
            size=size,
            running=status == "running",
            exit_code=exit_code,
        )

    async def stop(self, process: str) -> str:
        """End ``process`` and all it started (TERM, then KILL after 3 s).

        ``stopped``, or ``ended`` if it had already ended.
        """
        _check_id(process)
        result = await self._control(["/bin/sh", "-c", _STOP, "sh", self.box.state_dir, process])
        answer = result.output.strip()
        if answer == "missing":
            raise ConfigError(f"no background process {process} in this live world")
        return answer

    @contextlib.asynccontextmanager
    async def relay(self, port: int) -> AsyncIterator[asyncio.subprocess.Process]:
        """A connection to ``port`` on the box's own loopback, as a process's stdin/stdout."""
        if not 0 < port < 65536:
            raise ConfigError(f"port must be between 1 and 65535, not {port}")
        async with self.box.stream(["python3", "-S", "-I", "-c", _RELAY, str(port)]) as process:
            yield process

    async def checkpoint(self, image: Path) -> CheckpointImage:
        """Freeze the box into ``image`` (``Box.checkpoint``); this world is then closed."""
        return await self.box.checkpoint(image)

    async def close(self) -> None:
        """Kill everything in the box."""
        await self.box.close()

    async def _control(self, argv: list[str], *, max_output: int = 4096) -> CommandResult:
        return await self.box.exec(argv, timeout_s=_CONTROL_TIMEOUT_S, max_output=max_output)


def _check_id(process: str) -> None:
    if not PROCESS_ID.fullmatch(process):
        raise ConfigError(f"{process[:40]!r} is not a background process's id (p1, p2…)")
