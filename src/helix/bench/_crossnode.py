"""``cross_node_stream_p99_ms``: an event appended by one API server reaching another's client.

Two API servers on one scratch PostgreSQL database: this process serves the app (on
uvicorn, in a thread with a loop of its own) and appends a run's events through its
store, one every ``interval_s``; a ``helix serve`` process is the other server. The
same number of WebSocket clients follow the run on each. A client of the other server
gets an event once the commit's ``NOTIFY`` has reached that process and it has read the
event back from the log; a client of this server gets it from the store's own fan-out
(the same delivery within one server: the baseline, measured on the same events). Each
latency is the arrival time (in this process's main loop) minus the time the log
stamped on the event when it committed; both are this machine's clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from helix._util import free_port
from helix.kernel.events import NewEvent, SteerReceived, parse_iso
from helix.kernel.log import EventStore
from helix.testing import run_created

from ._figure import Figure, percentile
from ._postgres import temporary_database
from ._server import _serve, _Served, _token, _ts, _ws_token

SUITE = "distributed"
WAIT_S = 60.0


@dataclass(frozen=True, slots=True)
class StreamSizes:
    """How many events, how far apart, and how many clients follow on each server."""

    events: int = 2000
    interval_s: float = 0.005
    clients: int = 2

    @classmethod
    def quick(cls) -> StreamSizes:
        """A smoke test's sizes."""
        return cls(events=50, clients=1)


async def run_cross_node(
    sizes: StreamSizes, *, postgres_url: str | None, workdir: Path | None = None
) -> AsyncIterator[Figure]:
    """Measure on a scratch database of the server ``postgres_url`` (an admin URL).

    Without one, no figure: the streams cross processes only through PostgreSQL.
    """
    if postgres_url is None:
        return
    async with temporary_database(postgres_url) as db_url:
        with tempfile.TemporaryDirectory(dir=workdir, prefix="helix-bench-") as tmp:
            yield await _measure(sizes, db_url, Path(tmp))


async def _measure(sizes: StreamSizes, db_url: str, root: Path) -> Figure:
    here = await _serve(root / "here", db_url)
    try:
        token = await _token(here)  # the first owner, before the other server starts
        async with _helix_serve(db_url, root / "other") as other_port:
            cross, local = await _deliveries(here, other_port, token, sizes)
    finally:
        here.server.should_exit = True
        await asyncio.to_thread(here.thread.join, 30)
    params = {
        "events": sizes.events,
        "interval_ms": sizes.interval_s * 1000,
        "clients_per_server": sizes.clients,
        "store": "postgresql",
        "p50_ms": round(percentile(cross, 50) * 1000, 3),
        "baseline_p50_ms": round(percentile(local, 50) * 1000, 3),
        "baseline": "the same events to clients of the appending server",
    }
    value, baseline = percentile(cross, 99) * 1000, percentile(local, 99) * 1000
    return Figure(SUITE, "cross_node_stream_p99_ms", value, "ms", params, baseline)


@contextlib.asynccontextmanager
async def _helix_serve(db_url: str, home: Path) -> AsyncIterator[int]:
    """A ``helix serve`` process on ``db_url``; its port."""
    import httpx

    port = free_port()
    env = {**os.environ, "HELIX_DB": db_url, "HELIX_HOME": str(home)}
    command = [sys.executable, "-m", "helix", "serve", "--port", str(port), "--no-resume"]
    log = await asyncio.to_thread(_log_file, home)
    with log:
        process = await asyncio.create_subprocess_exec(
            *command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env
        )
    try:
        deadline = time.monotonic() + WAIT_S
        async with httpx.AsyncClient() as client:
            while True:
                with contextlib.suppress(httpx.TransportError):
                    health = await client.get(f"http://127.0.0.1:{port}/api/v1/health")
                    if health.status_code == 200:
                        break
                if process.returncode is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"helix serve did not start: {_tail(home / 'serve.log')}")
                await asyncio.sleep(0.05)
        yield port
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 30)
            except TimeoutError:
                process.kill()
                await process.wait()


def _log_file(home: Path) -> BinaryIO:
    home.mkdir(parents=True)
    return open(home / "serve.log", "wb")  # closed by the caller


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-2000:] if path.exists() else ""


async def _deliveries(
    here: _Served, other_port: int, token: str, sizes: StreamSizes
) -> tuple[list[float], list[float]]:
    """Latencies (s) of every event to the other server's clients, and to this one's."""
    from websockets.asyncio.client import connect

    store: EventStore = here.app.state.helix.store
    record = await here.on_loop(store.create_run(run_created("stream"), workspace="default"))
    run_id = record.id
    cross: list[float] = []
    local: list[float] = []
    ready = [asyncio.Event() for _ in range(2 * sizes.clients)]

    async def client(port: int, into: list[float], subscribed: asyncio.Event) -> None:
        ws_token = await _ws_token(here, token, port=port)
        url = f"ws://127.0.0.1:{port}/api/v1/runs/{run_id}/stream?token={ws_token}"
        async with connect(url, max_queue=None) as socket:
            await socket.recv()  # run.created: the subscription is live
            subscribed.set()
            for _ in range(sizes.events):
                message = await socket.recv()
                into.append(time.time() - parse_iso(_ts(message)))

    async def append() -> None:
        await asyncio.gather(*(flag.wait() for flag in ready))
        for seq in range(1, sizes.events + 1):
            event = NewEvent(SteerReceived(message=f"event {seq}"), actor="user:bench")
            await here.on_loop(store.append(run_id, [event], expected_seq=seq))
            await asyncio.sleep(sizes.interval_s)

    async with asyncio.timeout(WAIT_S + sizes.events * (sizes.interval_s + 0.05)):
        async with asyncio.TaskGroup() as group:
            for index in range(sizes.clients):
                group.create_task(client(other_port, cross, ready[2 * index]))
                group.create_task(client(here.port, local, ready[2 * index + 1]))
            group.create_task(append())
    return cross, local
