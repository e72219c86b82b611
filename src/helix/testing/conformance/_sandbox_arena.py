"""What ``SandboxConformance`` attacks: the arena each test builds, the attack ids, scripts."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

ATTACKS: dict[str, str] = {
    "write_outside_world": "write outside the world (absolute and `../`)",
    "write_through_planted_symlink": "write through a symlink planted in the world",
    "write_world_parent_through_proc": "write the world's parent through `/proc/self/cwd/..`",
    "write_system_location": "write a system location (`/var/tmp`)",
    "read_file_outside_world": "read a file outside the world",
    "read_host_root_through_proc": "read a host file through `/proc/PID/root` (PID 1, a host's)",
    "read_helix_data_in_world": "read the Helix data directory placed inside the world",
    "read_private_system_file": "read `/etc/shadow`",
    "read_host_process_environment": "read a host process's environment (`/proc/PID/environ`)",
    "signal_host_process": "signal (kill) a host process",
    "reach_host_tcp_service": "connect to a host TCP service on 127.0.0.1",
    "reach_postgresql": "connect to PostgreSQL (127.0.0.1:5432 by default)",
    "fork_bomb": "fork 300 processes",
    "memory_exhaustion": "allocate 2 GiB",
    "outlive_the_run": "outlive the run (`setsid`, `nohup`)",
    "create_namespaces": "create namespaces (`unshare --user`)",
}
"""Every attack of the suite: its stable id (``test_<id>`` tries it) and what it does."""

TOOLS = (
    "sh", "cat", "echo", "env", "head", "tr", "ln", "kill", "sleep", "setsid", "nohup",
    "unshare", "python3",
)  # fmt: skip
"""What the attacks run inside the sandbox: without one, an attack proves nothing."""


FORK_BOMB = """\
import os, time
n = 0
for _ in range(300):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    n += 1
print('forked', n)
"""
"""The fork bomb attack's script: it prints how many of 300 forks succeeded."""


NONBLOCKING_PROBE = (
    "import fcntl, os; print([fcntl.fcntl(f, fcntl.F_GETFL) & os.O_NONBLOCK for f in (1, 2)])"
)
"""Python that prints ``[0, 0]`` when the command's stdout and stderr are blocking."""


def sleep_marker() -> str:
    """A ``sleep`` argument no other process on the host mentions."""
    return f"1000.{uuid.uuid4().int % 10**6}"


@dataclass(frozen=True)
class SandboxArena:
    """The host-side scene of one test: a world, and things outside it to protect.

    ``root`` holds ``world`` (the command's working directory, writable) and
    ``outside`` (a sibling with ``secret_file`` in it). ``helix_data`` is a Helix data
    directory inside the world (holding the secret in ``helix.db``) that the sandbox
    must hide: the ``sandbox`` fixture is given the arena to know what to hide.
    """

    root: Path
    world: Path
    outside: Path
    secret: str
    secret_file: Path
    helix_data: Path

    @classmethod
    def build(cls, root: Path) -> SandboxArena:
        """Make the arena's folders and files under ``root`` (an empty directory)."""
        secret = f"s3cr3t-{uuid.uuid4().hex}"
        world, outside = root / "world", root / "outside"
        world.mkdir()
        outside.mkdir()
        secret_file = outside / "secret.txt"
        secret_file.write_text(secret)
        helix_data = world / "helix-data"
        helix_data.mkdir()
        (helix_data / "helix.db").write_text(secret)
        return cls(root, world, outside, secret, secret_file, helix_data)
