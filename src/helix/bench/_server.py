"""``helix bench server``: WebSocket delivery, REST pages of a long log, the SDK's cost.

The server is the real app on uvicorn (in a thread of this process, on its own event
loop) over a SQLite store. Events are appended in the server's process, as a run the
server drives appends them; each of the WebSocket clients (in this process's main
loop) notes when an event arrives against the time the log stamped on it. The
baseline is the same events read by plain log subscriptions inside the server: what
the WebSocket layer adds is the difference. Clients and server share this process's
GIL, so the figures are, if anything, pessimistic.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Coroutine
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from helix._util import free_port
from helix.accounts import Hashing
from helix.kernel.events import NewEvent, SteerReceived, parse_iso
from helix.kernel.log import EventStore, SqliteEventStore
from helix.testing import run_created, session_events

from ._figure import Figure, percentile
from ._sdk import sdk_call_overhead

SUITE = "server"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ServerSizes:
    """How much work each measurement does."""

    clients: int = 100
    runs: int = 4
    events_per_run: int = 250
    append_interval_s: float = 0.01
    log_events: int = 100_000
    page_limit: int = 100
    page_seconds: float = 3.0
    page_concurrency: int = 8
    sdk_calls: int = 2_000

    @classmethod
    def quick(cls) -> ServerSizes:
        """A smoke test's sizes."""
        return cls(
            clients=10, runs=2, events_per_run=20, log_events=2_000, page_seconds=0.5,
            page_concurrency=2, sdk_calls=40,
        )  # fmt: skip


@dataclass
class _Served:
    """The app served by uvicorn in a thread; coroutines can be run on its loop."""

    app: Any
    server: Any
    thread: threading.Thread
    port: int
    loop: asyncio.AbstractEventLoop | None = None
    started: threading.Event = field(default_factory=threading.Event)

    def on_loop(self, coroutine: Coroutine[Any, Any, T]) -> Awaitable[T]:
        assert self.loop is not None
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return asyncio.wrap_future(future)


async def run_server_bench(
    sizes: ServerSizes, *, workdir: Path | None = None
) -> AsyncIterator[Figure]:
    """Measure; figures come out as they are ready."""
    with tempfile.TemporaryDirectory(dir=workdir) as scratch:
        home = Path(scratch)
        long_run = await _long_log(home / "helix.db", sizes.log_events)
        served = await _serve(home)
        try:
            token = await _token(served)
            for figure in await _delivery(served, token, sizes):
                yield figure
            yield await _pages(served, token, long_run, sizes)
            yield await asyncio.to_thread(
                sdk_call_overhead, served.port, token, long_run, sizes.sdk_calls
            )
        finally:
            served.server.should_exit = True
            await asyncio.to_thread(served.thread.join, 30)


async def _long_log(path: Path, events: int) -> str:
    turns = max(1, events // 8)  # a turn with one tool call is eight events
    async with SqliteEventStore(path) as store:
        record = await store.create_run(run_created("a long session"), run_id="long")
        batch = session_events(turns)
        head = 1
        for start in range(0, len(batch), 5000):
            head = await store.append(record.id, batch[start : start + 5000], expected_seq=head)
    return record.id


async def _serve(home: Path, db_url: str | None = None) -> _Served:
    """The app on uvicorn in a thread; its store is ``db_url`` (default: SQLite in ``home``)."""
    import uvicorn

    from helix.server import ServerConfig, create_app

    config = ServerConfig(
        db_url=db_url or f"sqlite:///{home / 'helix.db'}",
        home=home,
        hashing=Hashing.cheap(),
        resume_on_start=False,
        ws_queue=100_000,
    )
    app = create_app(config, announce=lambda _link: None)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", ws="websockets-sansio")
    )
    served = _Served(app, server, threading.Thread(target=lambda: None), port)

    def main() -> None:
        async def serve() -> None:
            served.loop = asyncio.get_running_loop()
            served.started.set()
            await server.serve()

        asyncio.run(serve())

    served.thread = threading.Thread(target=main, name="helix-bench-server", daemon=True)
    served.thread.start()
    await asyncio.to_thread(served.started.wait, 30)
    for _ in range(3000):
        if server.started:
            break
        await asyncio.sleep(0.01)
    return served


async def _token(served: _Served) -> str:
    import httpx

    link = served.app.state.helix.bootstrap_token
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{served.port}/api/v1") as client:
        answer = await client.post("/auth/link", json={"token": link})
    token = answer.json()["token"]
    assert isinstance(token, str)
    return token


async def _ws_token(served: _Served, token: str, *, port: int | None = None) -> str:
    """A stream token from the served app (or from the server at ``port``)."""
    import httpx

    headers = {"Authorization": f"Bearer {token}"}
    base = f"http://127.0.0.1:{port or served.port}/api/v1"
    async with httpx.AsyncClient(base_url=base, headers=headers) as client:
        answer = await client.post("/auth/ws-token")
    ws_token = answer.json()["token"]
    assert isinstance(ws_token, str)
    return ws_token


async def _delivery(served: _Served, token: str, sizes: ServerSizes) -> list[Figure]:
    from websockets.asyncio.client import connect

    store: EventStore = served.app.state.helix.store
    runs = [
        (await served.on_loop(store.create_run(run_created(f"run {i}"), workspace="default"))).id
        for i in range(sizes.runs)
    ]
    ws_token = await _ws_token(served, token)
    latencies: list[float] = []
    baseline: list[float] = []
    expected = sizes.events_per_run

    async def client(index: int) -> None:
        run_id = runs[index % len(runs)]
        url = f"ws://127.0.0.1:{served.port}/api/v1/runs/{run_id}/stream?token={ws_token}&after=0"
        async with connect(url, max_queue=None) as socket:
            for _ in range(expected):
                message = await socket.recv()
                arrived = time.time()
                latencies.append(arrived - parse_iso(_ts(message)))

    async def plain(run_id: str) -> None:  # on the server's loop
        async with store.subscribe(run_id, after=0) as events:
            async for event in events:
                baseline.append(time.time() - parse_iso(event.ts))
                if event.seq >= expected:
                    return

    async def append(run_id: str) -> None:
        for seq in range(1, expected + 1):
            event = NewEvent(SteerReceived(message=f"event {seq}"), actor="user:bench")
            await served.on_loop(store.append(run_id, [event], expected_seq=seq))
            await asyncio.sleep(sizes.append_interval_s)

    async with asyncio.TaskGroup() as group:
        for index in range(sizes.clients):
            group.create_task(client(index))
        watchers = [served.on_loop(plain(run_id)) for run_id in runs]
        await asyncio.sleep(0.5 + sizes.clients * 0.005)  # every client subscribed
        for run_id in runs:
            group.create_task(append(run_id))
        await asyncio.gather(*watchers)
    params = {
        "clients": sizes.clients,
        "runs": sizes.runs,
        "events": expected * sizes.runs,
        "interval_ms": sizes.append_interval_s * 1000,
    }
    return [
        Figure(SUITE, f"ws_delivery_p{q}", percentile(latencies, q) * 1000, "ms", params,
               baseline=percentile(baseline, q) * 1000)
        for q in (50, 99)
    ]  # fmt: skip


def _ts(message: str | bytes) -> str:
    text = message.decode() if isinstance(message, bytes) else message
    start = text.index('"ts":"') + 6
    return text[start : text.index('"', start)]


async def _pages(served: _Served, token: str, run_id: str, sizes: ServerSizes) -> Figure:
    import httpx

    store: EventStore = served.app.state.helix.store
    head = (await served.on_loop(store.get_run(run_id))).head
    done = 0
    deadline = time.monotonic() + sizes.page_seconds
    headers = {"Authorization": f"Bearer {token}"}
    base = f"http://127.0.0.1:{served.port}/api/v1"

    async def reader(client: httpx.AsyncClient) -> None:
        nonlocal done
        while time.monotonic() < deadline:
            after = random.randrange(-1, head - sizes.page_limit)
            answer = await client.get(
                f"/runs/{run_id}/events", params={"after": after, "limit": sizes.page_limit}
            )
            answer.raise_for_status()
            done += 1

    async with httpx.AsyncClient(base_url=base, headers=headers) as client:
        started = time.perf_counter()
        async with asyncio.TaskGroup() as group:
            for _ in range(sizes.page_concurrency):
                group.create_task(reader(client))
        rps = done / (time.perf_counter() - started)

    async def plain_reads() -> float:
        reads, begun = 0, time.perf_counter()
        while time.perf_counter() - begun < min(1.0, sizes.page_seconds):
            await store.read(run_id, after=random.randrange(-1, head - sizes.page_limit),
                             limit=sizes.page_limit)  # fmt: skip
            reads += 1
        return reads / (time.perf_counter() - begun)

    floor = await served.on_loop(plain_reads())
    params = {
        "events": head + 1,
        "limit": sizes.page_limit,
        "concurrency": sizes.page_concurrency,
        "baseline": "store.read of the same pages, in the server's process",
    }
    return Figure(SUITE, "events_page_rps", rps, "requests/s", params, baseline=floor)
