"""Several ``helix serve`` processes on one PostgreSQL database: live streams cross them.

Server A drives a run; the clients of server B (a WebSocket, the all-runs WebSocket,
the SDK, ``helix logs --follow``) see every event of it in order, while they arrive,
with no gap and no duplicate. Also: a burst of events appended by a third process, and
a listening connection that the database drops (``pg_terminate_backend``).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from helix import Client
from helix.kernel.events import NewEvent, SteerReceived
from helix.kernel.log import open_store
from helix.testing import MockModelServer, run_created

from .conftest import MODEL, WAIT_S, Admin, Cli, free_port, play, wait_for_event

pytestmark = pytest.mark.postgres

Event = dict[str, Any]


class Node:
    """One ``helix serve`` process: its address and a signed-in client."""

    def __init__(self, cli: Cli, db_url: str, token: str, home: Path) -> None:
        self.port = free_port()
        cli.serve(self.port, env={"HELIX_DB": db_url, "HELIX_HOME": str(home)})
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = token
        self.http = httpx.Client(
            base_url=f"{self.url}/api/v1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=WAIT_S,
        )

    def ws(self, path: str) -> ClientConnection:
        ws_token = self.http.post("/auth/ws-token").json()["token"]
        sep = "&" if "?" in path else "?"
        opened = connect(f"ws://127.0.0.1:{self.port}/api/v1{path}{sep}token={ws_token}")
        return opened.__enter__()


class Collector:
    """Reads a WebSocket in a thread: every event (of one run, if asked) in arrival order."""

    def __init__(
        self,
        socket: ClientConnection,
        run_id: str | None = None,
        reopen: Callable[[int], ClientConnection] | None = None,
    ) -> None:
        self.socket = socket
        self.run_id = run_id
        self.reopen = reopen
        """Given, a client dropped for being slow reconnects after its last seq (as the SDK)."""
        self.drops = 0
        self.events: list[Event] = []
        self.closed: Any = None
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while True:
            try:
                for message in self.socket:
                    event = json.loads(message)
                    if "seq" not in event or (self.run_id and event["run_id"] != self.run_id):
                        continue
                    with self._changed:
                        self.events.append(event)
                        self._changed.notify_all()
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd is not None else None
                if code == 4008 and self.reopen is not None:
                    self.drops += 1
                    self.socket = self.reopen(self.events[-1]["seq"] if self.events else -1)
                    continue
                self.closed = closed
            except Exception as error:  # recorded: the waits fail on it
                self.closed = error
            break
        with self._changed:
            self.closed = self.closed or "closed"
            self._changed.notify_all()

    def wait_for(self, event_type: str, run_id: str | None = None) -> list[Event]:
        deadline = time.monotonic() + WAIT_S
        with self._changed:
            while not any(
                e["type"] == event_type and (run_id is None or e["run_id"] == run_id)
                for e in self.events
            ):
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    pytest.fail(f"no {event_type} ({self.closed}); saw {types(self.events)}")
                self._changed.wait(left)
            return list(self.events)

    def wait_for_count(self, count: int) -> list[Event]:
        deadline = time.monotonic() + WAIT_S
        with self._changed:
            while len(self.events) < count:
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    pytest.fail(f"{len(self.events)} of {count} events ({self.closed})")
                self._changed.wait(left)
            return list(self.events)

    def settle(self, count: int) -> list[Event]:
        """The events once ``count`` arrived or the socket closed (no failure if it did)."""
        deadline = time.monotonic() + WAIT_S
        with self._changed:
            while len(self.events) < count and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    pytest.fail(f"{len(self.events)} of {count} events, still open")
                self._changed.wait(left)
            return list(self.events)

    def close(self) -> None:
        self.socket.close()
        self._thread.join(WAIT_S)


def types(events: list[Event]) -> list[str]:
    return [e["type"] for e in events]


def in_order(events: list[Event], run_id: str) -> list[int]:
    return [e["seq"] for e in events if e["run_id"] == run_id]


@pytest.fixture
def nodes(cli: Cli, fresh_postgres_url: str, tmp_path: Path) -> Iterator[tuple[Node, Node, str]]:
    """Servers A and B (homes of their own) on one fresh database; alice's token."""
    admin = Admin(fresh_postgres_url)
    admin.user("alice")
    token = admin.api_token("alice")
    a = Node(cli, fresh_postgres_url, token, tmp_path / "home-a")
    b = Node(cli, fresh_postgres_url, token, tmp_path / "home-b")
    try:
        yield a, b, fresh_postgres_url
    finally:
        a.http.close()
        b.http.close()


def test_a_run_driven_through_one_server_streams_live_from_another(
    nodes: tuple[Node, Node, str], model_server: MockModelServer, cli: Cli
) -> None:
    a, b, _db = nodes
    everything = Collector(b.ws("/stream"))  # the all-runs stream: from now on
    listing = {"name": "list_files", "args": {}}
    play(
        model_server,
        {"text": "Checking.", "tool_calls": [{"name": "run_command", "args": {"command": "true"}}]},
        *({"text": f"Step {i}.", "tool_calls": [listing]} for i in range(5)),
        {"text": "All done."},
    )
    run_id = a.http.post("/runs", json={"objective": "build", "model": MODEL}).json()["id"]
    wait_for_event(a.http, run_id, "approval.requested")  # the run waits here, on A

    socket = Collector(b.ws(f"/runs/{run_id}/stream"), run_id)
    sdk: list[Event] = []
    sdk_done = threading.Event()

    def follow() -> None:
        with Client(b.url, token=b.token) as client:
            for event in client.events(run_id, follow=True):
                sdk.append(event.model_dump(mode="json"))
        sdk_done.set()

    threading.Thread(target=follow, daemon=True).start()
    # A client with no store of its own: everything it prints comes from B.
    env = {**cli.env, "HELIX_SERVER": b.url, "HELIX_TOKEN": b.token}
    env["HELIX_HOME"] = str(cli.tmp / "home-client")
    logs = subprocess.Popen(
        [sys.executable, "-m", "helix", "logs", run_id, "--follow", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    socket.wait_for("approval.requested")

    # Decided through B: A's driver, waiting on the log, goes on; the rest arrives live.
    (pending,) = b.http.get(f"/runs/{run_id}/approvals").json()["approvals"]
    decided = b.http.post(
        f"/runs/{run_id}/approvals/{pending['request_id']}", json={"decision": "allow"}
    )
    assert decided.status_code == 200, decided.text
    streamed = socket.wait_for("run.completed")
    logged = a.http.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
    assert [(e["seq"], e["type"]) for e in streamed] == [(e["seq"], e["type"]) for e in logged]
    assert in_order(streamed, run_id) == list(range(len(logged)))
    assert types(streamed).count("tool.completed") == 6
    # The approval's decision, appended through B, came after the socket opened: live.
    assert types(streamed).index("approval.decided") > types(streamed).index("approval.requested")

    seen_all = everything.wait_for("run.completed", run_id)
    assert in_order(seen_all, run_id) == list(range(len(logged)))

    assert sdk_done.wait(WAIT_S), f"the SDK's stream did not end: {types(sdk)}"
    assert [e["seq"] for e in sdk] == list(range(len(logged)))
    out, err = logs.communicate(timeout=WAIT_S)
    assert logs.returncode == 0, err
    followed = [json.loads(line) for line in out.splitlines()]
    assert [(e["seq"], e["type"]) for e in followed] == [(e["seq"], e["type"]) for e in logged]
    socket.close()
    everything.close()


async def _append_burst(db_url: str, run_id: str, head: int, batches: list[int]) -> int:
    """Append from this process (a third one): a batch per entry, back to back."""
    async with await open_store(db_url) as store:
        for size in batches:
            events = [
                NewEvent(SteerReceived(message=f"burst {head + i}"), actor="user:alice")
                for i in range(size)
            ]
            head = await store.append(run_id, events, expected_seq=head)
    return head


async def _create(db_url: str) -> str:
    async with await open_store(db_url) as store:
        return (await store.create_run(run_created("burst"), workspace="alice")).id


def test_a_burst_from_another_process_reaches_every_server_in_order(
    nodes: tuple[Node, Node, str],
) -> None:
    a, b, db = nodes
    everything = Collector(b.ws("/stream"))
    run_id = asyncio.run(_create(db))
    path = f"/runs/{run_id}/stream"

    def again(node: Node) -> Callable[[int], ClientConnection]:
        return lambda after: node.ws(f"{path}?after={after}")

    sockets = [Collector(node.ws(path), run_id, again(node)) for node in (a, b, b)]
    for socket in sockets:
        socket.wait_for("run.created")
    sdk: list[int] = []

    def follow() -> None:
        with Client(b.url, token=b.token) as client:
            for event in client.events(run_id, follow=True):
                sdk.append(event.seq)
                if event.seq == head_wanted:
                    return

    head_wanted = 1500 + 500 + 3000
    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    # 1,500 single appends as fast as one writer goes, then batches of 500 and 3,000
    # (past a client's queue of 2,048 in one commit): notices pile up and are read
    # together. A client that falls behind by a queue is dropped with 4008 and
    # reconnects after its last seq, as the SDK does; none misses or repeats an event.
    batches = [1] * 1500 + [500, 3000]
    head = asyncio.run(_append_burst(db, run_id, 1, batches))
    assert head == 1 + sum(batches) == head_wanted + 1
    for socket in sockets:
        got = socket.wait_for_count(head)
        assert in_order(got, run_id) == list(range(head))
        assert socket.closed is None
        socket.close()
    follower.join(WAIT_S)
    assert sdk == list(range(head))
    # The all-runs stream holds the events it was sent in order, each once, up to the
    # end or to its drop for being slow (4008, "read missed events").
    seqs = in_order(everything.settle(head - 1), run_id)
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert seqs[0] <= 1  # run.created may have come before it subscribed
    if everything.closed:
        assert isinstance(everything.closed, ConnectionClosed)
        assert everything.closed.rcvd is not None
        assert everything.closed.rcvd.code == 4008
    else:
        assert seqs[-1] == head - 1
        everything.close()


_LISTENERS = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'"
)


async def _listeners(db_url: str) -> set[int]:
    import asyncpg

    connection = await asyncpg.connect(db_url)
    try:
        return {row[0] for row in await connection.fetch(_LISTENERS)}
    finally:
        await connection.close()


async def _append_unheard(db_url: str, run_id: str, head: int, count: int) -> int:
    """Drop every server's LISTEN connection and append while none can listen again.

    New connections to the database are refused meanwhile (``ALLOW_CONNECTIONS false``
    holds superusers out too); the writer appends on the connection it already has.
    """
    import asyncpg

    name = db_url.rsplit("/", 1)[1]
    admin = await asyncpg.connect(db_url.rsplit("/", 1)[0] + "/postgres")
    try:
        async with await open_store(db_url) as store:
            await store.get_run(run_id)  # the pool's connection is open
            await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
            try:
                killed = await admin.fetch(
                    "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = $1 AND query LIKE 'LISTEN %'",
                    name,
                )
                assert len(killed) == 2, f"not both servers listened: {killed}"
                for _ in range(count):
                    head = await store.append(
                        run_id,
                        [NewEvent(SteerReceived(message="unheard"), actor="user:alice")],
                        expected_seq=head,
                    )
            finally:
                await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
    finally:
        await admin.close()
    return head


def test_a_dropped_listening_connection_recovers_and_reads_the_gap(
    nodes: tuple[Node, Node, str],
) -> None:
    _a, b, db = nodes
    run_id = asyncio.run(_create(db))
    everything = Collector(b.ws("/stream"))
    socket = Collector(b.ws(f"/runs/{run_id}/stream"), run_id)
    socket.wait_for("run.created")
    before = asyncio.run(_listeners(db))
    head = asyncio.run(_append_burst(db, run_id, 1, [1] * 5))
    socket.wait_for_count(head)
    everything.wait_for_count(head - 1)
    for _ in range(2):
        # The run's last events land while nobody listens: no later notice shows the
        # gap, so the server must read it from the log once it listens again.
        head = asyncio.run(_append_unheard(db, run_id, head, 20))
        got = socket.wait_for_count(head)
        assert in_order(got, run_id) == list(range(head))
        assert socket.closed is None
    # Both servers listen again, on new connections.
    deadline = time.monotonic() + WAIT_S
    while len(now := asyncio.run(_listeners(db))) < 2 or now & before:
        assert time.monotonic() < deadline, "the servers did not listen again"
        time.sleep(0.05)
    # The every-run stream cannot read a gap from one run's log: it is told, and a
    # client reconnects and reads what it missed over REST.
    assert isinstance(everything.closed, ConnectionClosed)
    assert everything.closed.rcvd is not None
    assert (everything.closed.rcvd.code, everything.closed.rcvd.reason) == (
        4008,
        "events missed: reconnect and read missed events",
    )
    assert in_order(everything.events, run_id) == list(range(1, 6))
    socket.close()
