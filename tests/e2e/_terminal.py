"""``helix`` in a real pseudo-terminal: what a person sees, and keys typed at it.

The process gets a pty as its stdin, stdout and stderr, and (with ``setsid -c``, where
the system has it) as its controlling terminal, so Ctrl-C typed at it is the SIGINT a
terminal sends. What it writes is kept as text with the terminal's escape sequences
taken out (colours, the spinner's redraws), one line per line it printed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Sequence

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erasing
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, links
    r"|\x1b[@-Z\\-_]"  # the rest of the two-character ones
)
CTRL_C = b"\x03"
CTRL_D = b"\x04"


def plain(raw: str) -> str:
    """Terminal output as the lines it leaves: escapes out, carriage returns resolved."""
    text = _ESCAPES.sub("", raw).replace("\r\n", "\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


class Terminal:
    """A ``helix`` command running in a pseudo-terminal of ``columns`` by ``rows``."""

    def __init__(
        self, args: Sequence[str], env: dict[str, str], *, columns: int = 120, rows: int = 50
    ) -> None:
        self._master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        argv = [sys.executable, "-m", "helix", *args]
        setsid = shutil.which("setsid")
        self.controlling = setsid is not None
        """Whether the pty is the process's controlling terminal (Ctrl-C typed works)."""
        if setsid is not None:
            argv = [setsid, "--ctty", "--wait", *argv]
        env = {**env, "TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": str(rows)}
        env.pop("NO_COLOR", None)
        self.process = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
        )
        os.close(slave)
        self._raw = bytearray()
        self._changed = threading.Condition()
        self._closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:  # EIO: every end of the slave is closed
                chunk = b""
            with self._changed:
                if not chunk:
                    self._closed = True
                    self._changed.notify_all()
                    return
                self._raw += chunk
                self._changed.notify_all()

    @property
    def raw(self) -> str:
        """Everything written, escape sequences and all."""
        with self._changed:
            return self._raw.decode(errors="replace")

    @property
    def text(self) -> str:
        """Everything written, as plain lines."""
        return plain(self.raw)

    def wait_for(self, needle: str, timeout: float, *, after: str = "") -> str:
        """Wait until ``needle`` was written (after ``after``, if given); the text so far.

        Fails after ``timeout``.
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                text = plain(self._raw.decode(errors="replace"))
                if needle in (text.partition(after)[2] if after else text):
                    return text
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    raise AssertionError(f"{needle!r} never appeared; the terminal shows:\n{text}")
                self._changed.wait(left)

    def type(self, keys: bytes) -> None:
        """Type ``keys`` (``b"y\\r"``: y then Enter)."""
        os.write(self._master, keys)

    def interrupt(self) -> None:
        """Ctrl-C: typed, when the pty is the controlling terminal; else the same signal."""
        if self.controlling:
            self.type(CTRL_C)
        else:
            self.process.send_signal(signal.SIGINT)

    def finish(self, timeout: float) -> int:
        """Wait for the process to exit; its exit code."""
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.close()
            raise AssertionError(f"helix did not exit; the terminal shows:\n{self.text}") from None
        self._reader.join(10)
        return code

    def close(self) -> None:
        """Kill the process if it still runs; close the terminal."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            self.process.wait(10)
        self._reader.join(10)
        with contextlib.suppress(OSError):
            os.close(self._master)
