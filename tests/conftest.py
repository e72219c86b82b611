"""Shared fixtures: real PostgreSQL databases made and dropped per test session, bubblewrap.

The suite runs on several pytest-xdist workers (``-n auto --dist loadgroup``, the
pyproject's addopts): each worker is a process with its own session, so its session
fixtures (a PostgreSQL database, the Ray cluster) are its own. Every test that starts a
Ray cluster is put in one xdist group, so that one worker runs them all, on one cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

RAY_GROUP = "ray"
"""The xdist group of the tests that start Ray (``ray_cluster``, ``ray start``)."""
ray_tier = pytest.mark.xdist_group(RAY_GROUP)
"""For a test that starts Ray without the ``ray_cluster`` fixture."""
GVISOR_GROUP = "gvisor"
"""The xdist group of the gVisor tier's tests: one worker, so their sandboxes (each a
Sentry, a gofer and ptrace stubs) do not crowd the machine's cores at once."""
gvisor_tier = pytest.mark.xdist_group(GVISOR_GROUP)

PODMAN_GROUP = "podman"
"""The xdist group of the podman tier's tests: one worker imports its image, once."""
podman_tier = pytest.mark.xdist_group(PODMAN_GROUP)

MICROVM_GROUP = "microvm"
"""The xdist group of the microvm tier's tests: one worker boots their (slow) guests."""
microvm_tier = pytest.mark.xdist_group(MICROVM_GROUP)

WORKERS_ENV = "HELIX_TEST_WORKERS"
"""How many xdist workers ``-n auto`` starts; default: twice the CPUs (most tests wait)."""

POSTGRES_ADMIN_URL = os.environ.get(
    "HELIX_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: ``HELIX_TEST_WORKERS``, else twice the CPUs (tests mostly wait on I/O)."""
    wanted = os.environ.get(WORKERS_ENV, "").strip()
    if wanted:
        return int(wanted)
    return 2 * (os.cpu_count() or 1)


def pytest_configure(config: pytest.Config) -> None:
    """Tests of one xdist group on one worker, whatever pytest-xdist makes of pytest 9."""
    from tests._xdist_groups import XdistGroups

    config.pluginmanager.register(XdistGroups(), "helix-xdist-groups")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test using the ``ray_cluster`` fixture joins the Ray group: one cluster, one worker."""
    for item in items:
        if "ray_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(ray_tier)


async def _admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(POSTGRES_ADMIN_URL, timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@contextlib.contextmanager
def _scratch_database() -> Iterator[str]:
    """A new PostgreSQL database's URL, dropped afterwards."""
    name = f"helix_test_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session, dropped afterwards.

    Without a server, the tests that need it fail in CI and skip elsewhere.
    """
    with contextlib.ExitStack() as stack:
        try:
            url = stack.enter_context(_scratch_database())
        except Exception as error:  # any failure to reach the server lands here
            message = f"PostgreSQL is not reachable at {POSTGRES_ADMIN_URL}: {error}"
            if _in_ci():
                pytest.fail(message)
            pytest.skip(message)
        yield url


@pytest.fixture
def fresh_postgres_url(postgres_url: str) -> Iterator[str]:
    """A PostgreSQL database of this test's own (several processes share it), dropped after."""
    with _scratch_database() as url:
        yield url


@pytest.fixture
def helix_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Helix home beside the test's ``tmp_path``, never inside it.

    Tests often make ``tmp_path`` a run's world, and ``Engine.create`` refuses a world
    that holds Helix's own data (its home, its SQLite store): the home lives apart.
    """
    return tmp_path_factory.mktemp("home")


def _require_tier(tier: str) -> None:
    """Fail (in CI) or skip unless ``tier`` works here; only that tier is probed."""
    from helix.sandbox import tier_status

    status = tier_status(tier)
    if not status.available:
        message = f"the {tier} sandbox tier is not available: {status.reason}"
        if _in_ci():
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def bwrap_available() -> None:
    """Bubblewrap works on this host; without it, the tests that need it fail in CI."""
    _require_tier("bwrap")


@pytest.fixture(scope="session")
def podman_available() -> None:
    """Podman and runc run a container here; without them, the tests fail in CI."""
    _require_tier("podman")


@pytest.fixture(scope="session")
def gvisor_available() -> None:
    """gVisor's ``runsc`` works on this host; without it, its tests fail in CI."""
    _require_tier("gvisor")


@pytest.fixture(scope="session")
def microvm_available() -> None:
    """QEMU and the guest kernel boot a microVM here; without them, the tests fail in CI."""
    _require_tier("microvm")


HELLO = b"hello from the host\n"
"""What the ``web`` fixture's server answers to every GET."""


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(HELLO)))
        self.end_headers()
        self.wfile.write(HELLO)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def web() -> Iterator[int]:
    """A plain HTTP server on the host's loopback (its port): what egress tests reach."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
