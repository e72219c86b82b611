"""The conformance suite of a tier's live worlds (``Sandbox.open_box`` + ``LiveWorld``).

Subclass ``LiveWorldConformance`` in a test module (its name must start with ``Test``)
and provide a ``sandbox`` fixture: the tier under test. Each test opens a box on a
fresh world and closes it. What must hold: commands run in the world, a background
process runs on between commands and its output is read in pages, ``stop`` ends it and
everything it started, ``close`` leaves nothing behind on the host, a relay reaches a
port inside the box, and — on a tier whose boxes ``can_checkpoint`` — a checkpoint
image moved elsewhere restores the box with its memory and processes intact (a
counter in a background HTTP server goes on counting). Override ``leftovers`` to name
what the tier would leave on the host (its containers), judged after ``close``.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import ClassVar

import pytest

from helix.errors import ConfigError
from helix.sandbox import Box, LiveWorld, OutputPage, Sandbox
from helix.testing._host import processes_mentioning, wait_gone

from ._sandbox_arena import NONBLOCKING_PROBE

COUNTER_SERVER = """\
import http.server, sys
count = 0
class Counter(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        global count
        count += 1
        body = str(count).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
print("listening", flush=True)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Counter).serve_forever()
"""
"""A background HTTP server whose answer is how many requests it has had: its memory."""


def free_port() -> int:
    """A TCP port free on the host's loopback (a box may share the host's)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def http_get(live: LiveWorld, port: int, path: str = "/") -> str | None:
    """The body a GET of ``path`` on the box's ``port`` answers, ``None`` if none did."""
    async with live.relay(port) as relay:
        assert relay.stdin is not None
        assert relay.stdout is not None
        relay.stdin.write(f"GET {path} HTTP/1.0\r\nHost: world\r\n\r\n".encode())
        await relay.stdin.drain()
        relay.stdin.close()
        answer = await relay.stdout.read()
    head, _, body = answer.partition(b"\r\n\r\n")
    return body.decode() if head.startswith(b"HTTP/1.") else None


class LiveWorldConformance:
    """What every tier's live world does. Subclass it and give a ``sandbox`` fixture."""

    attempts: ClassVar[int] = 200
    """How many times a test looks again for what it waits on (a server answering, a
    process ending), each after a short pause."""

    def leftovers(self, box: Box) -> list[str]:
        """What of ``box`` remains on the host after ``close`` (none, on a good tier)."""
        return []

    @pytest.fixture
    async def live(self, sandbox: Sandbox, tmp_path: Path) -> AsyncIterator[LiveWorld]:
        world = tmp_path / "world"
        world.mkdir()
        world_live = LiveWorld(await sandbox.open_box(cwd=world.resolve()))
        try:
            yield world_live
        finally:
            await world_live.close()

    async def _until_ended(self, live: LiveWorld, process: str) -> OutputPage:
        for _ in range(self.attempts):
            page = await live.output(process, max_bytes=65536)
            if not page.running:
                return page
            await asyncio.sleep(0.05)
        raise AssertionError(f"{process} never ended")

    async def _until_answers(self, live: LiveWorld, port: int) -> str:
        for _ in range(self.attempts):
            body = await http_get(live, port)
            if body is not None:
                return body
            await asyncio.sleep(0.05)
        raise AssertionError(f"nothing answered on port {port} in the box")

    async def _serve_counter(self, live: LiveWorld) -> int:
        port = free_port()
        (live.box.world / "counter.py").write_text(COUNTER_SERVER)
        await live.start("p1", f"exec python3 counter.py {port}")
        return port

    # -- the suite ------------------------------------------------------------------

    async def test_commands_run_in_the_world(self, live: LiveWorld) -> None:
        result = await live.run("pwd; echo made > f.txt; cat f.txt", timeout_s=60, max_output=4096)
        assert result.exit_code == 0, result.output
        assert result.output == f"{live.box.world}\nmade\n"
        assert (live.box.world / "f.txt").read_text() == "made\n"

    async def test_output_is_written_blocking(self, live: LiveWorld) -> None:
        """A command writing faster than Helix reads waits; it never fails with EAGAIN."""
        result = await live.run(f'python3 -c "{NONBLOCKING_PROBE}"', timeout_s=60, max_output=1000)
        assert result.output == "[0, 0]\n", result.output

    async def test_a_background_process_runs_on_and_is_read_in_pages(self, live: LiveWorld) -> None:
        await live.start("p1", "echo first; exec sleep 3600")
        await live.run("true", timeout_s=60, max_output=64)  # another command between
        first = await live.output("p1", max_bytes=65536)
        for _ in range(self.attempts):
            if first.text:
                break
            await asyncio.sleep(0.05)
            first = await live.output("p1", max_bytes=65536)
        assert first.text == "first\n"
        assert first.running
        assert first.next_offset == first.size == 6
        with pytest.raises(ConfigError):
            await live.output("p1", offset=-1, max_bytes=10)

    async def test_an_ended_process_gives_its_exit_code(self, live: LiveWorld) -> None:
        await live.start("p2", "echo done; exit 3")
        page = await self._until_ended(live, "p2")
        assert (page.text, page.exit_code, page.running) == ("done\n", 3, False)
        later = await live.output("p2", offset=page.next_offset, max_bytes=100)
        assert later.text == ""
        assert later.next_offset == page.next_offset

    async def test_output_is_paged_by_offset(self, live: LiveWorld) -> None:
        await live.start("p1", "printf 'abcdefghij'")
        await self._until_ended(live, "p1")
        head = await live.output("p1", max_bytes=4)
        tail = await live.output("p1", offset=head.next_offset, max_bytes=100)
        assert (head.text, head.next_offset, tail.text, tail.size) == ("abcd", 4, "efghij", 10)

    async def test_stop_ends_the_process_and_what_it_started(self, live: LiveWorld) -> None:
        marker = f"{uuid.uuid4().int % 10**6 + 10**6}"
        await live.start("p1", f"sleep {marker}1 & sleep {marker}2; wait")
        assert await live.stop("p1") == "stopped"
        page = await live.output("p1", max_bytes=100)
        assert not page.running
        assert page.exit_code is not None
        assert await wait_gone(marker) == []
        assert await live.stop("p1") == "ended"

    async def test_unknown_or_malformed_processes_are_refused(self, live: LiveWorld) -> None:
        for bad in ("p9", "../etc/passwd", "p1; rm -rf /", ""):
            with pytest.raises(ConfigError):
                await live.output(bad, max_bytes=10)
            with pytest.raises(ConfigError):
                await live.stop(bad)

    async def test_close_leaves_nothing_on_the_host(self, sandbox: Sandbox, tmp_path: Path) -> None:
        marker = f"{uuid.uuid4().int % 10**6 + 10**6}"
        world = tmp_path.resolve()  # noqa: ASYNC240 - a test's own temporary folder
        live = LiveWorld(await sandbox.open_box(cwd=world))
        await live.start("p1", f"sleep {marker}")
        await live.close()
        await live.close()  # a second close is harmless
        assert await wait_gone(marker) == []
        assert self.leftovers(live.box) == []
        assert processes_mentioning(live.box.state_dir) == []

    async def test_close_kills_what_an_ended_command_left_running(
        self, sandbox: Sandbox, tmp_path: Path
    ) -> None:
        marker = f"{uuid.uuid4().int % 10**6 + 10**6}"
        world = tmp_path.resolve()  # noqa: ASYNC240 - a test's own temporary folder
        live = LiveWorld(await sandbox.open_box(cwd=world))
        try:
            # the shell ends at once; the sleep it forked stays in its session
            await live.start("p1", f"sleep {marker} & echo $! >daemon.pid; echo started")
            page = await self._until_ended(live, "p1")
            assert (page.exit_code, page.text) == (0, "started\n")
            still = await live.run("kill -0 $(cat daemon.pid)", timeout_s=60, max_output=100)
            assert still.exit_code == 0, still.output
        finally:
            await live.close()
        assert await wait_gone(marker) == []

    async def test_a_relay_reaches_a_port_in_the_box(self, live: LiveWorld) -> None:
        port = await self._serve_counter(live)
        assert await self._until_answers(live, port) == "1"
        assert await http_get(live, port) == "2"
        with pytest.raises(ConfigError):
            async with live.relay(70000):
                pass

    async def test_checkpoint_keeps_memory_and_processes(
        self, sandbox: Sandbox, live: LiveWorld, tmp_path: Path
    ) -> None:
        if not live.box.can_checkpoint:
            with pytest.raises(ConfigError):
                await live.checkpoint(tmp_path / "image")
            return
        port = await self._serve_counter(live)
        assert await self._until_answers(live, port) == "1"
        (tmp_path / "image").mkdir()
        image = await live.checkpoint(tmp_path / "image")
        assert image.size_bytes > 0
        assert image.tier == sandbox.tier
        moved = tmp_path / "elsewhere"
        shutil.move(image.path, moved)  # as it goes into the store and out on another node
        restored = LiveWorld(await sandbox.open_box(cwd=live.box.world, restore=moved))
        try:
            assert await http_get(restored, port) == "2"
            assert (await restored.output("p1", max_bytes=100)).text == "listening\n"
        finally:
            await restored.close()
