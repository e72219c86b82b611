"""The container tier: each command in a hardened, throwaway Docker container.

The profile: a non-root user, every capability dropped, ``no-new-privileges``, a
read-only root filesystem with a private ``/tmp``, memory, PID and CPU limits, the
world the only writable mount, and no network (``--network none``) unless the run may
reach hosts, in which case the container joins the filtering proxy through the host
gateway. No Docker engine runs on Helix's CI machines: the command line is built and
unit-tested here and runs for real only where an engine answers (``probe``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator, Sequence
from functools import cache
from pathlib import Path

from ._egress import EgressHook
from ._git_env import git_environment
from ._process import Launch, ProcessSandbox
from ._proxy import proxy_environment
from ._sandbox import DEFAULT_TMP_BYTES, Sandbox

DEFAULT_IMAGE = "debian:bookworm-slim"
_NOBODY = "65534:65534"


def _default_user() -> str:
    """The caller's own ids (so the world stays theirs), or ``nobody`` for root."""
    uid, gid = os.getuid(), os.getgid()
    return _NOBODY if uid == 0 else f"{uid}:{gid}"


@cache
def probe() -> str | None:
    """``None`` if a Docker engine answers here, else why the tier is unavailable."""
    binary = shutil.which("docker")
    if binary is None:
        return "the docker client is not installed"
    try:
        done = subprocess.run(
            [binary, "version", "--format", "{{.Server.Version}}"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"docker did not answer: {error}"
    if done.returncode != 0 or not done.stdout.strip():
        detail = (done.stderr or done.stdout).strip().splitlines()
        return f"no Docker engine answers: {detail[-1] if detail else 'no reason given'}"[:300]
    return None


class DockerSandbox(ProcessSandbox):
    """Runs each command in ``docker run --rm`` with the hardened profile above.

    Args:
        image: The image commands run in (it must hold ``/bin/sh``).
        memory_bytes: The container's memory limit (``--memory``, swap included).
        pids: The container's process limit (``--pids-limit``).
        cpus: CPU shares (``--cpus``).
        user: ``uid:gid`` inside the container: by default the caller's, or nobody
            (65534) when Helix runs as root; never root.
        **limits: The process tier's options, applied to the ``docker`` client.
    """

    tier = "docker"
    can_keep_live = False
    open_box = Sandbox.open_box  # one-shot namespaces only: no box to keep

    def __init__(
        self,
        *,
        image: str = DEFAULT_IMAGE,
        memory_bytes: int = 2 << 30,
        pids: int = 512,
        cpus: float = 2.0,
        user: str | None = None,
        **limits: int | None,
    ) -> None:
        super().__init__(**limits)  # type: ignore[arg-type]
        self.image = image
        self.memory_bytes = memory_bytes
        self.pids = pids
        self.cpus = cpus
        self.user = user or _default_user()
        if self.user.split(":")[0] in ("0", "root"):
            raise ValueError("the docker tier never runs commands as root")

    def argv(
        self,
        command: str,
        cwd: Path,
        *,
        name: str,
        proxy_port: int | None = None,
        tmp_bytes: int = DEFAULT_TMP_BYTES,
    ) -> list[str]:
        """The exact ``docker run`` command line for ``command`` in the world ``cwd``."""
        world = os.path.abspath(cwd)
        args = [shutil.which("docker") or "docker", "run", "--rm", "--init", "--name", name]
        args += ["--user", self.user, "--cap-drop", "ALL"]
        args += ["--security-opt", "no-new-privileges", "--read-only"]
        args += ["--tmpfs", f"/tmp:rw,nosuid,nodev,size={tmp_bytes}", "--env", "HOME=/tmp"]
        args += [f"--memory={self.memory_bytes}", f"--memory-swap={self.memory_bytes}"]
        args += [f"--pids-limit={self.pids}", f"--cpus={self.cpus:g}"]
        args += ["--mount", f"type=bind,source={world},target={world}", "--workdir", world]
        if proxy_port is None:
            args += ["--network", "none"]
        else:
            args += ["--add-host", "host.docker.internal:host-gateway"]
            for name, value in proxy_environment(
                f"http://host.docker.internal:{proxy_port}"
            ).items():
                args += ["--env", f"{name}={value}"]
        for variable, value in git_environment().items():  # git runs no repository's program
            args += ["--env", f"{variable}={value}"]
        args += ["--hostname", "helix-sandbox", self.image, "/bin/sh", "-c", command]
        return args

    serve = Sandbox.serve  # refused: no server is given its installation and stdin here

    @contextlib.asynccontextmanager
    async def _launch(
        self,
        command: str,
        cwd: Path,
        egress: EgressHook | None,
        tmp_bytes: int,
        read_only: Sequence[Path] = (),
    ) -> AsyncIterator[Launch]:
        env = self.environment()  # the client's own: nothing of it enters the container
        name = f"helix-{uuid.uuid4().hex[:16]}"
        try:
            if egress is None:
                argv = self.argv(command, cwd, name=name, tmp_bytes=tmp_bytes)
                yield Launch(argv, env, self._limit_setter())
                return
            async with self._proxy().tcp_channel(egress, host="0.0.0.0") as port:
                argv = self.argv(command, cwd, name=name, proxy_port=port, tmp_bytes=tmp_bytes)
                yield Launch(argv, env, self._limit_setter())
        finally:
            await _remove(name)


async def _remove(name: str) -> None:
    """Kill the container if it outlived its client (a timeout kills only the client)."""
    binary = shutil.which("docker")
    if binary is None:
        return
    with contextlib.suppress(OSError, TimeoutError):
        process = await asyncio.create_subprocess_exec(
            binary, "rm", "-f", name, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        await asyncio.wait_for(process.wait(), 30)
