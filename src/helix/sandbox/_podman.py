"""The podman tier: each command in a hardened, throwaway container run by ``runc``.

The profile (``PodmanSandbox.profile``): a private user namespace in which the command
runs as ``nobody`` (65534) with every capability dropped and ``no-new-privileges``;
that one user is mapped to Helix's own user, so what the command writes in the world
is Helix's on the host, and nothing in the container is root of anything. The
``bwrap`` tier's seccomp filter (no new namespaces, no tracing, no mounts…). A
read-only root: a skeleton image, the host's ``/usr`` read-only (as ``bwrap`` shows
it), a short list of ``/etc`` files (``ETC_SHOWN``; not ``/etc/shadow``); a private
``/tmp`` (a tmpfs of ``tmp_bytes``) that is also ``HOME``. The world is the only
writable mount, at its own path, and the working directory; the Helix data
directory and credential files inside it are masked. Memory (swap included), PID
and CPU limits are the container's cgroup's. No network (``--network=none``): when
the run may reach hosts, the filtering proxy's Unix socket is mounted in and the
in-sandbox bridge listens on ``127.0.0.1:3128`` (as in ``bwrap``), never podman's
bridge network (which edits the host's firewall).

A command's container is removed with it; a command that times out or is cancelled
has its container killed (``podman rm -f``), everything in it with it. A box
(``open_box``) is one such container kept running, commands ``podman exec``-ed into
it. Podman's own configuration and image are Helix's (``_podman_home``).
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import os
import resource
import shutil
import stat
import tempfile
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from helix._util import close_fully, process_mark
from helix.errors import ConfigError

from ._bridge import BRIDGE_PORT, BRIDGE_SCRIPT
from ._bwrap import default_hidden_paths
from ._egress import EgressHook
from ._podman_box import BOX_STATE, BOX_STATE_BYTES, PodmanBox, podman_output, remove
from ._podman_home import (
    LABEL,
    OWNER_LABEL,
    PodmanHome,
    default_podman_dir,
    prepare,
    reap_orphans,
    system_dirs,
)
from ._process import ProcessSandbox
from ._proxy import proxy_environment
from ._sandbox import DEFAULT_TMP_BYTES, CommandResult, Sandbox
from ._supervise import Launch, _require_directory

ETC_SHOWN = (
    "alternatives", "ca-certificates", "ca-certificates.conf", "debian_version", "gai.conf",
    "gitconfig", "host.conf", "inputrc", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
    "locale.alias", "localtime", "magic", "magic.mime", "mime.types", "nsswitch.conf",
    "os-release", "perl", "protocols", "python3", "python3.11", "python3.12", "python3.13",
    "services", "ssl", "timezone",
)  # fmt: skip
"""The host's ``/etc`` entries a container sees (read-only, where they exist and others
may read them; unreadable entries inside them, such as ``ssl/private``, masked)."""
NO_CHECKPOINT = (
    "the podman tier cannot checkpoint a live world: podman checkpoints with CRIU, and"
    " CRIU does not work on every kernel (`criu check` fails on a vDSO it cannot map,"
    " as on microVM hosts); use the gvisor tier for a blueprint that pauses live worlds"
)
SANDBOX_USER = "65534:65534"
_USERNS_BASE = 0x70000000
"""Where the container's other users (root included) land on the host: an unused range."""
_HELPERS = "/.helix"
_BRIDGE, _SOCKET = f"{_HELPERS}/bridge.py", f"{_HELPERS}/proxy.sock"
_SHOWN_PATHS = ("/usr/", "/bin", "/sbin")
"""``PATH`` entries kept inside (the host's others are not there)."""


@cache
def _home(folder: Path) -> PodmanHome:
    home = prepare(folder)
    reap_orphans(home)  # once per process: what a killed Helix left running
    return home


@cache
def probe() -> str | None:
    """``None`` if podman and runc run a container here, else why the tier is unavailable."""
    try:
        sandbox = PodmanSandbox()
        home = _home(sandbox.folder)
        with tempfile.TemporaryDirectory(prefix="helix-podman-probe-") as world:
            argv = sandbox.profile(home, Path(world), name=f"helix-probe-{uuid.uuid4().hex[:8]}")
            home.command(*argv[1:], "/bin/sh", "-c", "exit 0", timeout_s=60)
    except ConfigError as error:
        return str(error)
    return None


def _mount(*flags: str, **fields: str) -> str:
    """A ``--mount`` value, quoted as podman's CSV parser reads it (paths may hold commas)."""
    out = io.StringIO()
    pairs = [f"{key.replace('_', '-')}={value}" for key, value in fields.items()]
    csv.writer(out, lineterminator="").writerow([*pairs, *flags])
    return out.getvalue()


def _empty(path: str, size: int = 4096, mode: str = "0755") -> str:
    """An empty tmpfs over ``path``: never a copy of what lies beneath (``notmpcopyup``)."""
    return _mount(
        "notmpcopyup", type="tmpfs", destination=path, tmpfs_size=str(size), tmpfs_mode=mode
    )


def _readable(path: str) -> bool:
    try:
        return bool(os.stat(path).st_mode & stat.S_IROTH)
    except OSError:
        return False


@cache
def _system_mounts() -> tuple[tuple[str, str], ...]:
    """Where and what to mount of the host's system: ``/usr`` and ``ETC_SHOWN`` read-only.

    In ``/etc``, what others may not read is masked.
    """
    mounts = [(p, _mount(type="bind", source=p, destination=p, ro="true")) for p in system_dirs()]
    for name in ETC_SHOWN:
        path = f"/etc/{name}"
        if not _readable(path):
            continue
        mounts.append((path, _mount(type="bind", source=path, destination=path, ro="true")))
        if not os.path.isdir(path):
            continue
        for folder, dirs, files in os.walk(path):
            for entry in list(dirs):
                inner = os.path.join(folder, entry)
                if not os.path.islink(inner) and not _readable(inner):
                    mounts.append((inner, _empty(inner)))
                    dirs.remove(entry)
            for entry in files:
                inner = os.path.join(folder, entry)
                if not os.path.islink(inner) and not _readable(inner):
                    mounts.append((inner, _null(inner)))
    return tuple(mounts)


def _null(path: str) -> str:
    return _mount(type="bind", source="/dev/null", destination=path, ro="true")


_STATE_MOUNT = _empty(BOX_STATE, BOX_STATE_BYTES, "0700") + ",U=true"


class PodmanSandbox(ProcessSandbox):
    """Runs each command in ``podman run --rm`` with the profile above.

    Args:
        memory_bytes: The container's memory limit (``--memory``, swap included).
        pids: The container's process limit (``--pids-limit``).
        cpus: CPU shares (``--cpus``).
        hidden: Host paths to mask where they lie inside the world (by default
            ``default_hidden_paths()``).
        folder: Where podman's configuration and storage live (``default_podman_dir()``).
        **limits: The process tier's options; ``cpu_seconds``, ``max_file_bytes`` and
            ``max_open_files`` become the container's ulimits (the others are the
            cgroup's: ``memory_bytes``, ``pids``).
    """

    tier = "podman"
    can_keep_live = True

    def __init__(
        self,
        *,
        memory_bytes: int = 2 << 30,
        pids: int = 1024,
        cpus: float = 2.0,
        hidden: Iterable[Path] | None = None,
        folder: Path | None = None,
        **limits: Any,
    ) -> None:
        super().__init__(**limits)
        self.memory_bytes = memory_bytes
        self.pids = pids
        self.cpus = min(cpus, float(os.cpu_count() or 1))
        self.folder = folder or default_podman_dir()
        hidden = default_hidden_paths() if hidden is None else hidden
        self._hidden = [Path(os.path.abspath(p)) for p in hidden]
        self._bridge: Path | None = None

    def container_env(self, proxy: bool = False) -> dict[str, str]:
        """What commands see: the scrubbed environment with ``HOME`` and ``TMPDIR`` ``/tmp``."""
        env = self.environment()
        env["HOME"] = env["TMPDIR"] = "/tmp"
        shown = [p for p in env["PATH"].split(":") if p.startswith(_SHOWN_PATHS)]
        env["PATH"] = ":".join(shown) or "/usr/local/bin:/usr/bin:/bin"
        if proxy:
            env.update(proxy_environment(f"http://127.0.0.1:{BRIDGE_PORT}"))
        return env

    def _userns(self) -> list[str]:
        """The command's user, mapped to Helix's (root: ``nobody`` inside)."""
        if os.geteuid() != 0:  # rootless podman: the caller's own ids, kept
            return ["--userns=keep-id", "--user", f"{os.getuid()}:{os.getgid()}"]
        args = ["--user", SANDBOX_USER]
        for kind, own in (("uidmap", os.getuid()), ("gidmap", os.getgid())):
            args += [f"--{kind}=0:{_USERNS_BASE}:65534", f"--{kind}=65534:{own}:1"]
        return args

    def profile(
        self,
        home: PodmanHome,
        cwd: Path,
        *,
        name: str,
        detach: bool = False,
        proxy: Path | None = None,
        tmp_bytes: int = DEFAULT_TMP_BYTES,
    ) -> list[str]:
        """``podman run …`` up to the image: the whole profile for a container in ``cwd``."""
        world = os.path.abspath(cwd)
        if world == "/":
            raise ConfigError("the podman sandbox cannot show the host's root as a world")
        args = [home.binary, "run", "--rm", "--init", "--name", name, "--label", LABEL]
        args += ["--label", f"{OWNER_LABEL}={process_mark()}"]
        args += ["--detach", "--log-driver=none"] if detach else ["--log-driver=none"]
        args += self._userns()
        args += ["--cap-drop=ALL", "--security-opt=no-new-privileges"]
        if home.seccomp is not None:
            args += [f"--security-opt=seccomp={home.seccomp}"]
        args += ["--read-only", "--read-only-tmpfs=false", "--network=none"]
        args += ["--hostname=helix-sandbox", "--shm-size=64m"]
        if world != "/tmp":  # else the world is its /tmp
            args += ["--tmpfs", f"/tmp:rw,nosuid,nodev,size={tmp_bytes},U,notmpcopyup"]
        args += [f"--memory={self.memory_bytes}", f"--memory-swap={self.memory_bytes}"]
        args += [f"--pids-limit={self.pids}", f"--cpus={self.cpus:g}"]
        args += [f"--ulimit={flag}" for flag in self._ulimit_flags()]
        for destination, mount in _system_mounts():
            if destination != world:  # a world at a system path is shown instead
                args += ["--mount", mount]
        args += ["--mount", _mount(type="bind", source=world, destination=world)]
        args += [arg for mount in self._masks(Path(world)) for arg in ("--mount", mount)]
        if proxy is not None:
            bridge = self._bridge_script()
            script = _mount(type="bind", source=str(bridge), destination=_BRIDGE, ro="true")
            socket = _mount(type="bind", source=str(proxy), destination=_SOCKET)
            args += ["--mount", script, "--mount", socket]
        for variable, value in self.container_env(proxy is not None).items():
            args += ["--env", f"{variable}={value}"]
        return [*args, "--workdir", world, home.image]

    def _ulimit_flags(self) -> list[str]:
        """The process tier's limits as the container's ulimits, clamped to the hard ones.

        Inside its user namespace a container cannot raise a hard limit, and podman
        replaces all of ``default_ulimits`` once one is given, so each is given here.
        """
        names = {resource.RLIMIT_CPU: "cpu", resource.RLIMIT_FSIZE: "fsize"}
        names |= {resource.RLIMIT_NOFILE: "nofile", resource.RLIMIT_NPROC: "nproc"}
        flags = []
        for which, name in names.items():
            value = self._limits.get(which)
            _soft, hard = resource.getrlimit(which)
            if value is None:
                value = hard
            elif hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            if value != resource.RLIM_INFINITY:
                flags.append(f"{name}={value}:{value}")
        return flags

    def _masks(self, world: Path) -> list[str]:
        """Hidden paths inside the world, masked (an empty tmpfs, or ``/dev/null``)."""
        mounts: list[str] = []
        for path in self._hidden:
            if path == world or not path.is_relative_to(world) or not os.path.lexists(path):
                continue
            if path.is_symlink():
                continue  # a link shows what it points to, which is masked or not there
            if path.is_dir():
                mounts.append(_empty(str(path)))
            else:
                mounts.append(_null(str(path)))
        return mounts

    def _bridge_script(self) -> Path:
        if self._bridge is None:
            path = self._proxy().folder() / "bridge.py"
            path.write_text(BRIDGE_SCRIPT)
            self._bridge = path
        return self._bridge

    def _inner(self, argv: Sequence[str], proxy: bool) -> list[str]:
        """``argv`` as run inside: behind the bridge when the container has the proxy."""
        if not proxy:
            return list(argv)
        python = shutil.which("python3", path="/usr/bin:/bin") or "/usr/bin/python3"
        return [python, "-S", "-I", _BRIDGE, str(BRIDGE_PORT), _SOCKET, *argv]

    async def home(self) -> PodmanHome:
        """Helix's podman configuration, written, and its image, imported (once per process)."""
        return await asyncio.to_thread(_home, self.folder)

    def client_env(self, home: PodmanHome) -> dict[str, str]:
        """The podman client's environment (nothing of it enters a container)."""
        return home.client_env(self.environment())

    @contextlib.asynccontextmanager
    async def _launch(
        self,
        command: str,
        cwd: Path,
        egress: EgressHook | None,
        tmp_bytes: int,
        read_only: Sequence[Path] = (),
    ) -> AsyncIterator[Launch]:
        home = await self.home()
        env = self.client_env(home)
        name = f"helix-{uuid.uuid4().hex[:16]}"
        ended = False  # the client exited by itself: it has removed the container

        def finish(result: CommandResult) -> CommandResult:
            nonlocal ended
            ended = not result.timed_out
            return result

        inner = ["/bin/sh", "-c", command]
        try:
            if egress is None:
                argv = self.profile(home, cwd, name=name, tmp_bytes=tmp_bytes)
                yield Launch([*argv, *inner], env, None, finish=finish)
                return
            async with self._proxy().unix_channel(egress) as socket_path:
                argv = self.profile(home, cwd, name=name, proxy=socket_path, tmp_bytes=tmp_bytes)
                yield Launch([*argv, *self._inner(inner, True)], env, None, finish=finish)
        finally:
            if not ended:  # timed out, cancelled: the container runs on without its client
                await close_fully(remove(home, env, name))

    serve = Sandbox.serve  # refused: no server is given its installation and stdin here

    async def open_box(
        self,
        *,
        cwd: Path,
        egress: EgressHook | None = None,
        tmp_bytes: int | None = None,
        restore: Path | None = None,
    ) -> PodmanBox:
        """One container kept running (``PodmanBox``); ``restore`` is refused (no CRIU)."""
        if restore is not None:
            raise ConfigError(NO_CHECKPOINT)
        _require_directory(cwd)
        home = await self.home()
        env = self.client_env(home)
        name = f"helix-box-{uuid.uuid4().hex[:16]}"
        stack = contextlib.AsyncExitStack()
        try:
            proxy = None
            if egress is not None:
                proxy = await stack.enter_async_context(self._proxy().unix_channel(egress))
            tmp = DEFAULT_TMP_BYTES if tmp_bytes is None else tmp_bytes
            argv = self.profile(home, cwd, name=name, detach=True, proxy=proxy, tmp_bytes=tmp)
            argv[-1:-1] = ["--mount", _STATE_MOUNT]  # before the image
            argv += self._inner(["/bin/sleep", "infinity"], proxy is not None)
            code, output = await podman_output(argv, env, 60)
            if code != 0:
                raise ConfigError(f"the podman box did not start: {output.strip()[-300:]}")
            return PodmanBox(home, env, name, Path(os.path.abspath(cwd)), stack)  # noqa: ASYNC240
        except BaseException:
            await close_fully(_undo(stack, remove(home, env, name)))
            raise


async def _undo(stack: contextlib.AsyncExitStack, removal: Awaitable[None]) -> None:
    """Undo a box that did not start: its egress channel, then its container."""
    try:
        await stack.aclose()
    finally:
        await removal
