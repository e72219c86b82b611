"""``helix init`` at a real terminal (a pty): its questions, re-asking, EOF and Ctrl-C."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helix.runtime import Blueprint
from helix.testing import MockModelServer

_WAIT_S = 60.0
"""A safety limit: every wait ends as soon as the text it waits for appears."""


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class Terminal:
    """``helix init`` with a pty as its terminal; ``expect`` reads until a text appears."""

    def __init__(self, cwd: Path, home: Path, *args: str) -> None:
        master, slave = os.openpty()
        inherited = {
            k: v for k, v in os.environ.items() if not k.startswith(("HELIX_", "LLAMACPP_"))
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "helix", "init", *args],
            cwd=cwd,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**inherited, "HELIX_HOME": str(home), "COLUMNS": "200"},
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self.seen = ""
        self._read_to = 0

    def expect(self, text: str) -> str:
        """Wait until ``text`` is printed after what was last expected; return what came."""
        deadline = time.monotonic() + _WAIT_S
        while text not in self.seen[self._read_to :]:
            left = deadline - time.monotonic()
            assert left > 0, f"never printed {text!r}; printed:\n{self.seen}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the process ended and closed the terminal
                    chunk = b""
                assert chunk, f"ended before printing {text!r}; printed:\n{self.seen}"
                self.seen += chunk.decode(errors="replace").replace("\r\n", "\n")
        start = self._read_to
        self._read_to = self.seen.index(text, start) + len(text)
        return self.seen[start : self._read_to]

    def send(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def send_eof(self) -> None:
        os.write(self.master, b"\x04")

    def interrupt(self) -> None:
        os.killpg(self.process.pid, signal.SIGINT)

    def finish(self) -> int:
        """Read what is left and wait for the exit code."""
        while True:
            ready, _, _ = select.select([self.master], [], [], _WAIT_S)
            assert ready, "the process neither printed nor ended"
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                break
            if not chunk:
                break
            self.seen += chunk.decode(errors="replace").replace("\r\n", "\n")
        return self.process.wait(timeout=_WAIT_S)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "myproj"
    folder.mkdir()
    return folder


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for terminal in opened:
        terminal.close()


def test_questions_re_ask_on_bad_answers_and_write_the_choices(
    home: Path, project: Path, terminals: list[Terminal]
) -> None:
    models = [{"name": "qwen-a"}, {"name": "qwen-b"}]
    with MockModelServer(local_models=models) as server:
        term = Terminal(project, home)
        terminals.append(term)
        term.expect("Workspace [myproj]: ")
        term.send("not a name!")
        term.expect("invalid workspace name")
        term.expect("Workspace [myproj]: ")
        term.send("team-b")
        listing = term.expect("Provider [openai]: ")
        assert "llamacpp    a local server at http://localhost:8080/v1" in listing
        term.send("nope")
        term.expect("answer with a number")
        term.expect("Provider [openai]: ")
        term.send("llamacpp")
        term.expect("The llamacpp server's address [http://localhost:8080/v1]: ")
        term.send(server.openai_base_url)
        term.expect("serves: qwen-a, qwen-b")
        term.expect("Model [qwen-a]: ")
        term.send("2")
        tiers = term.expect("Tier [")
        assert "process  yes  always available" in tiers
        term.expect("]: ")
        term.send("banana")
        term.expect("unknown sandbox tier 'banana'")
        term.expect("]: ")
        term.send("process")
        term.expect("USD cap ('none': no cap) [2]: ")
        term.send("-1")
        term.expect("a USD cap is 0 or more")
        term.expect("[2]: ")
        term.send("0.5")
        term.expect("turn cap ('none': no cap) [40]: ")
        term.send("many")
        term.expect("a turn cap is a whole number")
        term.expect("[40]: ")
        term.send("9")
        term.expect("Tools runs may never use (comma-separated) []: ")
        term.send("http_fetch, nope")
        term.expect("unknown tool 'nope'")
        term.expect("[]: ")
        term.send("http_fetch")
        preview = term.expect("Write ")
        assert "model: llamacpp:qwen-b" in preview
        term.expect("[y]: ")
        term.send("maybe")
        term.expect("answer y or n")
        term.expect("[y]: ")
        term.send("")
        term.expect("wrote ")
        assert term.finish() == 0, term.seen
    blueprint = Blueprint.load(project / "helix.yaml")
    assert blueprint.model == "llamacpp:qwen-b"
    assert blueprint.sandbox.kind == "process"
    assert blueprint.budget.usd == 0.5
    assert blueprint.budget.max_turns == 9
    assert blueprint.policy.deny_tools == frozenset({"http_fetch"})
    assert "team-b" in (home / "projects.json").read_text()


def test_an_unreachable_server_asks_again(
    home: Path, project: Path, terminals: list[Terminal]
) -> None:
    term = Terminal(project, home, "--workspace", "w")
    terminals.append(term)
    term.expect("Provider [openai]: ")
    term.send("llamacpp")
    term.expect("address [")
    term.send(f"http://127.0.0.1:{_closed_port()}/v1")
    term.expect("does not answer")
    term.expect("Provider [openai]: ")  # from the provider again
    term.send_eof()
    assert term.finish() == 1
    assert "init cancelled: nothing was written" in term.seen


def test_eof_at_a_question_cancels_without_a_trace(
    home: Path, project: Path, terminals: list[Terminal]
) -> None:
    term = Terminal(project, home)
    terminals.append(term)
    term.expect("Workspace [myproj]: ")
    term.send_eof()
    assert term.finish() == 1
    assert "init cancelled: nothing was written" in term.seen
    assert "Traceback" not in term.seen
    assert not (project / "helix.yaml").exists()
    assert not home.exists()


def test_ctrl_c_at_a_question_cancels_without_a_trace(
    home: Path, project: Path, terminals: list[Terminal]
) -> None:
    term = Terminal(project, home, "--workspace", "w")
    terminals.append(term)
    term.expect("Provider [openai]: ")
    term.interrupt()
    assert term.finish() == 130
    assert "init cancelled: nothing was written" in term.seen
    assert "Traceback" not in term.seen
    assert not (project / "helix.yaml").exists()


def test_a_terminal_with_yes_asks_nothing(
    home: Path, project: Path, terminals: list[Terminal]
) -> None:
    script = project.parent / "s.yaml"
    script.write_text("steps: [{text: hi}]\n")
    term = Terminal(project, home, "--yes", "--model", f"scripted:{script}")
    terminals.append(term)
    term.expect("wrote ")
    assert term.finish() == 0
    assert "Workspace" not in term.seen
