"""End-to-end harness: the real ``helix`` command in subprocesses, against a mock model.

Each test gets a fresh ``HELIX_HOME``, a fresh world directory and a
``MockModelServer`` in this process; ``helix`` processes reach it through
``OPENAI_BASE_URL``. Long-running commands are started with ``--json`` so their events
can be read line by line; every wait is bounded, and every child is killed when the
test ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from helix.providers import Scenario
from helix.testing import MockModelServer

MODEL = "openai:gpt-4.1"
WAIT_S = 60.0
"""How long a wait for an event may take before the test fails: a safety net for a
busy machine, never a performance limit (those live in benchmarks)."""

Event = dict[str, Any]


class Running:
    """A ``helix`` process started in the background, its JSON events read as they come."""

    def __init__(self, process: subprocess.Popen[str], stderr_path: Path) -> None:
        self.process = process
        self.stderr_path = stderr_path
        self.events: list[Event] = []
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        with stdout:
            for line in stdout:
                with self._changed:
                    self.lines.append(line)
                    try:
                        parsed = json.loads(line)
                    except json.JSONDecodeError:
                        parsed = None
                    if isinstance(parsed, dict):
                        self.events.append(parsed)
                    self._changed.notify_all()
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text() if self.stderr_path.exists() else ""

    @property
    def run_id(self) -> str:
        return str(self.wait_for("run.created")["run_id"])

    def wait_for(
        self,
        event_type: str,
        where: Callable[[Event], bool] = lambda _e: True,
        timeout: float = WAIT_S,
    ) -> Event:
        """The first event of ``event_type`` (matching ``where``); fails after ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for event in self.events:
                    if event.get("type") == event_type and where(event):
                        return event
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    seen = [e.get("type") for e in self.events]
                    pytest.fail(
                        f"no {event_type} event within {timeout}s (process "
                        f"{'ended' if self._closed else 'still running'}); saw {seen};"
                        f" stderr: {self.stderr[-2000:]}"
                    )
                self._changed.wait(left)

    def finish(self, timeout: float = WAIT_S) -> int:
        """Wait for the process to exit; its exit code."""
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"the helix process did not exit within {timeout}s: {self.stderr[-2000:]}")
        self._reader.join(5)
        return code

    def kill(self) -> None:
        """SIGKILL the process (and anything it started in its group)."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        self._reader.join(10)


class Helix:
    """A ``HELIX_HOME``, a world, a mock model server, and the ``helix`` command."""

    def __init__(self, tmp_path: Path, server: MockModelServer, pycache: Path) -> None:
        self.home = tmp_path / "home"
        self.world = tmp_path / "world"
        self.world.mkdir()
        self.tmp = tmp_path
        self.server = server
        inherited = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("HELIX_", "OPENAI_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        self.env = {
            **inherited,
            # Children start faster with compiled modules, kept out of the source tree.
            "PYTHONPYCACHEPREFIX": str(pycache),
            "HELIX_HOME": str(self.home),
            "HELIX_USER": "tester",
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": server.openai_base_url,
        }
        self._children: list[Running] = []

    def play(self, *steps: dict[str, Any]) -> None:
        """Give the mock model its scenario."""
        self.server.play(Scenario.of(*steps))

    @property
    def model_requests(self) -> list[Any]:
        return [r for r in self.server.requests if r.api == "openai"]

    def wait_for_requests(self, count: int, timeout: float = WAIT_S) -> None:
        """Wait until the mock model has received ``count`` model requests."""
        deadline = time.monotonic() + timeout
        while len(self.model_requests) < count:
            if time.monotonic() > deadline:
                pytest.fail(f"the model got {len(self.model_requests)} requests, not {count}")
            time.sleep(0.02)

    def __call__(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = WAIT_S
    ) -> subprocess.CompletedProcess[str]:
        """Run ``helix ARGS`` to its end."""
        return subprocess.run(
            [sys.executable, "-m", "helix", *args],
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def start(self, *args: str, env: dict[str, str] | None = None) -> Running:
        """Start ``helix ARGS`` in the background (in its own process group)."""
        stderr_path = self.tmp / f"stderr-{len(self._children)}.txt"
        with open(stderr_path, "w") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-m", "helix", *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env={**self.env, **(env or {})},
                start_new_session=True,
            )
        running = Running(process, stderr_path)
        self._children.append(running)
        return running

    def start_run(self, objective: str, *extra: str, env: dict[str, str] | None = None) -> Running:
        """``helix run OBJECTIVE --model openai:gpt-4.1 --dir WORLD --json EXTRA``."""
        return self.start(
            "run", objective, "--model", MODEL, "--dir", str(self.world), "--json", *extra, env=env
        )

    def ok(self, *args: str) -> str:
        """Run ``helix ARGS``, which must succeed; its stdout."""
        result = self(*args)
        assert result.returncode == 0, f"helix {' '.join(args)}: {result.stderr}"
        return result.stdout

    def logs(self, run_id: str) -> list[Event]:
        """The run's log, as ``helix logs RUN --json`` prints it."""
        return [json.loads(line) for line in self.ok("logs", run_id, "--json").splitlines()]

    def show(self, run_id: str) -> dict[str, Any]:
        shown = json.loads(self.ok("show", run_id, "--json"))
        assert isinstance(shown, dict)
        return shown

    def close(self) -> None:
        for child in self._children:
            child.kill()


def processes_mentioning(marker: str) -> list[int]:
    """Pids of processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def of_type(events: list[Event], event_type: str) -> list[Event]:
    """The events of one type, in log order."""
    return [e for e in events if e["type"] == event_type]


def types(events: list[Event]) -> list[str]:
    return [str(e["type"]) for e in events]


@pytest.fixture(scope="session")
def pycache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pycache")


@pytest.fixture
def helix(tmp_path: Path, pycache: Path) -> Iterator[Helix]:
    with MockModelServer() as server:
        harness = Helix(tmp_path, server, pycache)
        try:
            yield harness
        finally:
            harness.close()
