"""The gVisor tier: each command in its own gVisor sandbox, a kernel of its own.

Helix drives ``runsc`` directly with a bundle it writes (``_gvisor_spec``): podman can
run ``runsc`` but refuses to checkpoint with it, and ``runsc`` alone checkpoints and
restores. The command's system calls are served by gVisor's kernel (the Sentry, itself
confined by a seccomp filter on the host); files reach it through gVisor's gofer,
which only opens what the spec binds. A command is a fresh ``runsc run`` of a fresh
container; a live world is a box (``GvisorBox``) commands are ``runsc exec``'d into,
which can be checkpointed to an image and restored from it, processes and memory and
``/tmp`` as they were.

The flags (``runsc_argv``), each for a reason found on Debian 12's build (2022-12):

* ``--root``: a state directory Helix owns, never ``/var/run/runsc`` shared with others.
* ``--network=none``: only a loopback inside. gVisor's own network stack would need a
  host bridge; a run that may reach hosts goes through the filtering proxy instead.
* ``--platform=ptrace``: the KVM platform hangs on hosts that are themselves VMs.
* ``--host-uds=open``: lets the sandbox connect to a host Unix socket bound into it,
  which is how the egress bridge reaches the proxy (it can create or serve none).
* ``--oci-seccomp``: applies the spec's seccomp filter inside (``_gvisor_spec.seccomp``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import shutil
import subprocess
import tempfile
import uuid
import weakref
from collections.abc import AsyncIterator, Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from helix._util import close_fully

from ._box import Box
from ._bridge import BRIDGE_PORT, BRIDGE_SCRIPT
from ._bwrap import default_hidden_paths
from ._egress import EgressHook
from ._gvisor_box import GvisorBox
from ._gvisor_spec import BRIDGE, HOME, PROXY_SOCKET, spec, write_rootfs
from ._orphans import mark_owner, reap_once
from ._process import Launch, ProcessSandbox
from ._proxy import proxy_environment

_RUNSC_TIMEOUT_S = 30.0
_HOST_PIDS_FLOOR = 1000
_FLAGS = ("--network=none", "--platform=ptrace", "--host-uds=open", "--oci-seccomp")
"""``runsc``'s global flags besides ``--root`` (the module's notes say why each)."""
STATE_PREFIX = "helix-gvisor-"
"""A gVisor sandbox object's private folder in the temporary directory starts so."""


@cache
def probe() -> str | None:
    """``None`` if ``runsc`` can start a sandbox here, else why not (once per process)."""
    binary = shutil.which("runsc")
    if binary is None:
        return "gVisor is not installed (apt-get install runsc)"
    if os.geteuid() != 0:
        return "runsc needs root here (Helix runs it without --rootless)"
    sandbox = GvisorSandbox()
    world = Path(tempfile.mkdtemp(prefix="helix-gvisor-probe-"))
    try:
        name, bundle = sandbox.bundle(["/bin/sh", "-c", "echo ok"], world)
        try:
            done = subprocess.run(
                [*sandbox.runsc_argv(), "run", "--bundle", str(bundle), name],
                capture_output=True,
                text=True,
                timeout=_RUNSC_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"runsc could not start a sandbox: {error}"
        finally:
            sandbox.forget(name)
        if done.returncode != 0 or done.stdout.strip() != "ok":
            detail = (done.stderr or done.stdout).strip().splitlines()
            return f"runsc could not start a sandbox: {detail[-1] if detail else done.returncode}"
        return None
    finally:
        sandbox.close()
        shutil.rmtree(world, ignore_errors=True)


class GvisorSandbox(ProcessSandbox):
    """Runs each command in a fresh gVisor sandbox with the hardened spec (module notes).

    Args:
        memory_bytes: The sandbox's memory (gVisor's total memory and its cgroup).
        hidden: Host paths to mask when they lie inside the world; by default
            ``default_hidden_paths()``.
        read_only: More host folders shown read-only at their own path.
        **limits: The process tier's options, enforced by gVisor's kernel as rlimits
            of the command: ``max_processes`` (``RLIMIT_NPROC``, 1024 by default) is a
            real budget there, as the sandbox's users are its own.
    """

    tier = "gvisor"
    can_keep_live = True
    can_checkpoint = True

    def __init__(
        self,
        *,
        memory_bytes: int = 2 << 30,
        hidden: Iterable[Path] | None = None,
        read_only: Iterable[Path] = (),
        **limits: Any,
    ) -> None:
        limits.setdefault("max_processes", 1024)
        super().__init__(**limits)
        self.memory_bytes = memory_bytes
        self._hidden = [
            Path(os.path.abspath(p)) for p in (default_hidden_paths() if hidden is None else hidden)
        ]
        self._read_only = [Path(os.path.abspath(p)) for p in read_only]
        self._state: Path | None = None

    @property
    def host_pids(self) -> int:
        """The sandbox's host pids limit, which counts gVisor's own threads too.

        Under ``ptrace`` each task has a host thread besides the Sentry's and the gofer's
        (64 and 300 failed a 100-process job here; 1000 worked): the command's budget
        is ``RLIMIT_NPROC`` inside, this one only bounds the sandbox on the host.
        """
        nproc = self._limits.get(resource.RLIMIT_NPROC) or 0
        return max(_HOST_PIDS_FLOOR, 3 * nproc)

    def state(self) -> Path:
        """The private directory holding ``runsc``'s state, the skeleton root, bundles."""
        if self._state is None:
            reap_once(STATE_PREFIX, _delete_sandboxes)
            self._state = Path(tempfile.mkdtemp(prefix=STATE_PREFIX))
            self._state.chmod(0o711)  # the gofer reads the rootfs as the sandbox's user
            mark_owner(self._state)
            (self._state / "root").mkdir(mode=0o700)
            (self._state / "bundles").mkdir(mode=0o711)
            write_rootfs(self._state / "rootfs")
            weakref.finalize(self, shutil.rmtree, self._state, ignore_errors=True)
        return self._state

    def close(self) -> None:
        """Remove the private directories (a box left open keeps its own bundle)."""
        super().close()
        if self._state is not None:
            shutil.rmtree(self._state, ignore_errors=True)
            self._state = None

    def runsc_argv(self) -> list[str]:
        """``runsc`` and its global flags (the module's notes say why each)."""
        return _runsc(self.state() / "root")

    def environment(self) -> dict[str, str]:
        """The process tier's scrubbed environment, with a home inside the sandbox."""
        env = super().environment()
        env["HOME"] = HOME
        env["TMPDIR"] = "/tmp"
        return env

    def bundle(
        self,
        args: Sequence[str],
        world: Path,
        *,
        tmp_bytes: int = 512 << 20,
        proxy: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> tuple[str, Path]:
        """A fresh container id and its bundle directory, running ``args`` in ``world``."""
        name = f"helix-{uuid.uuid4().hex[:16]}"
        folder = self.state() / "bundles" / name
        folder.mkdir(mode=0o711)
        helpers: dict[str, Path] = {}
        environment = self.environment() if env is None else env
        if proxy is not None:
            bridge = folder / "bridge.py"
            bridge.write_text(BRIDGE_SCRIPT)
            bridge.chmod(0o644)
            helpers = {BRIDGE: bridge, PROXY_SOCKET: proxy}
            environment.update(proxy_environment(f"http://127.0.0.1:{BRIDGE_PORT}"))
        config = spec(
            rootfs=self.state() / "rootfs",
            args=args,
            env=environment,
            world=Path(os.path.abspath(world)),
            tmp_bytes=tmp_bytes,
            memory_bytes=self.memory_bytes,
            host_pids=self.host_pids,
            limits=self._limits,
            hidden=self._hidden,
            read_only=self._read_only,
            helpers=helpers,
        )
        (folder / "config.json").write_text(json.dumps(config))
        return name, folder

    def forget(self, name: str) -> None:
        """Remove a container (``runsc delete -force``) and its bundle; blocking."""
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(
                [*self.runsc_argv(), "delete", "-force", name],
                capture_output=True,
                timeout=_RUNSC_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        shutil.rmtree(self.state() / "bundles" / name, ignore_errors=True)

    async def remove(self, name: str) -> None:
        """``forget`` without blocking the loop, to its end even if the caller is cancelled."""
        await close_fully(asyncio.to_thread(self.forget, name))

    def command_args(self, command: str, *, bridged: bool) -> list[str]:
        """``/bin/sh -c command``, behind the egress bridge when the run has a proxy."""
        shell = ["/bin/sh", "-c", command]
        if not bridged:
            return shell
        return ["/usr/bin/python3", "-S", "-I", BRIDGE, str(BRIDGE_PORT), PROXY_SOCKET, *shell]

    @contextlib.asynccontextmanager
    async def _launch(
        self,
        command: str,
        cwd: Path,
        egress: EgressHook | None,
        tmp_bytes: int,
        read_only: Sequence[Path] = (),
    ) -> AsyncIterator[Launch]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}  # runsc's own: none enters
        async with self.proxy_socket(egress) as socket_path:
            args = self.command_args(command, bridged=socket_path is not None)
            name, folder = self.bundle(args, cwd, tmp_bytes=tmp_bytes, proxy=socket_path)
            try:
                argv = [*self.runsc_argv(), "run", "--bundle", str(folder), name]
                yield Launch(argv, env, None)
            finally:
                await self.remove(name)

    @contextlib.asynccontextmanager
    async def proxy_socket(self, egress: EgressHook | None) -> AsyncIterator[Path | None]:
        """The proxy's Unix socket for one command or box (``None`` without egress).

        The socket is made connectable by every user (the sandbox's user is not
        Helix's); it lies in the proxy's private directory, which only Helix enters.
        """
        if egress is None:
            yield None
            return
        async with self._proxy().unix_channel(egress) as path:
            path.chmod(0o666)
            yield path

    async def open_box(
        self,
        *,
        cwd: Path,
        egress: EgressHook | None = None,
        tmp_bytes: int | None = None,
        restore: Path | None = None,
    ) -> Box:
        """A live gVisor sandbox for the world ``cwd`` (``GvisorBox``), or one restored."""
        return await GvisorBox.open(
            self, cwd=cwd, egress=egress, tmp_bytes=tmp_bytes, restore=restore
        )


def _runsc(root: Path) -> list[str]:
    return [shutil.which("runsc") or "runsc", f"--root={root}", *_FLAGS]


def _delete_sandboxes(state: Path) -> None:
    """Delete every sandbox of a state folder a Helix that ended left (``reap_once``).

    A Helix killed with ``kill -9`` leaves its gVisor sandboxes running and their
    folders in the temporary directory; a later Helix's first use of the tier deletes
    them (``runsc delete -force``).
    """
    root = state / "root"
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        listed = subprocess.run(
            [*_runsc(root), "list", "-quiet"],
            capture_output=True,
            text=True,
            timeout=_RUNSC_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        for name in listed.stdout.split():
            subprocess.run(
                [*_runsc(root), "delete", "-force", name],
                capture_output=True,
                timeout=_RUNSC_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
