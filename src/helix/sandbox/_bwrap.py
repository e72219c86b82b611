"""The bubblewrap sandbox: the command sees a read-only system and its world, nothing else.

Each command runs in fresh namespaces (mount, PID, IPC, UTS, network, cgroup; user
where the host allows): ``/usr`` and ``/etc`` read-only (``/etc`` files that are not
world-readable, such as ``/etc/shadow``, masked), the run's world the only writable
bind, a private ``/tmp`` (a tmpfs of ``tmp_bytes``, 512 MiB unless a call asks for
another) with a synthetic ``HOME`` in it, its own ``/proc`` and a
minimal ``/dev``. ``/root``, ``/home``, ``/var``, ``/opt``, ``/srv`` and ``/run`` are
not there at all; the Helix data directory, its database and known credential files
are masked even when they lie inside the world. All capabilities are dropped, no new
privileges can be gained, a seccomp filter refuses dangerous system calls, and when
the command exits (or Helix dies) its PID namespace, and everything in it, is gone.

The network namespace has only its own loopback. When the run may reach some hosts,
the filtering proxy's Unix socket is bound in and a small bridge listens on
``127.0.0.1:3128`` inside, with ``http_proxy``/``https_proxy`` pointing at it.

When the command's shell exits, a wrapper inside the sandbox reports how much of
``/tmp`` is free through a pipe only Helix reads, so the result can say that the cap
was reached (``CommandResult.tmp_full``). A command killed (timeout, cancel) reports
nothing. As that wrapper is a shell waiting on the command, a command that dies of a
signal is announced as a shell would (``Killed``, ``Segmentation fault``).
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import stat
import subprocess
import weakref
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ._bridge import BRIDGE_PORT, BRIDGE_SCRIPT
from ._cgroup import CgroupPool, PidsCgroup, pids_parent
from ._egress import EgressHook
from ._process import Launch, ProcessSandbox
from ._proxy import proxy_environment
from ._sandbox import DEFAULT_TMP_BYTES, CommandResult, Sandbox
from ._seccomp import program_fd

SANDBOX_HOME = "/tmp/home"
_HELPERS = "/.helix"
_TMP_FULL_BELOW = 64 * 1024
"""``/tmp`` counts as full (its cap reached) with less than this free: a write that
fails with ``ENOSPC`` leaves less than a page."""
_TMP_REPORT = '"$@"; code=$?; stat -f -c "%a %S" /tmp >/proc/self/fd/{fd} 2>/dev/null; exit $code'
"""Runs the command as its child, then writes ``/tmp``'s free blocks and block size to
the report pipe (``dash`` redirects only fds 0-9, hence ``/proc/self/fd``)."""
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_CREDENTIALS = (
    ".ssh", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".gnupg", ".netrc",
    ".pgpass", ".git-credentials", ".npmrc", ".pypirc", ".config/gh",
)  # fmt: skip


def default_hidden_paths(env: Mapping[str, str] | None = None) -> list[Path]:
    """Host paths no command may see: Helix's data directory, database, credentials.

    Reads ``HELIX_HOME`` and ``HELIX_DB`` as Helix's settings do (the sandbox layer
    sits below the configuration layer).
    """
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    helix_home = Path(env.get("HELIX_HOME") or home / ".local" / "share" / "helix")
    hidden = [helix_home, *(home / name for name in _CREDENTIALS)]
    db = urlsplit(env.get("HELIX_DB", ""))
    if db.scheme.lower() == "sqlite" and db.path.strip("/"):
        database = Path("/" + db.path.lstrip("/"))  # as the store reads sqlite:////abs
        hidden += [database, Path(f"{database}-wal"), Path(f"{database}-shm")]
    return hidden


@cache
def probe() -> str | None:
    """``None`` if bubblewrap can make its namespaces here, else why it cannot."""
    binary = shutil.which("bwrap")
    if binary is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    argv = [binary, *_system_binds(), "--unshare-all", "--die-with-parent", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap could not start: {error}"
    if done.returncode != 0:
        return f"bubblewrap could not create namespaces: {done.stderr.strip()[:300]}"
    return None


class BwrapSandbox(ProcessSandbox):
    """Runs each command in its own bubblewrap namespaces (see the module's notes).

    Takes the process tier's limits (applied to ``bwrap`` and inherited by all it
    starts); ``max_processes`` is also the command's ``pids.max`` cgroup budget where
    Helix may make cgroups, which holds for root too.

    Args:
        hidden: Host paths to mask if they fall inside what the command sees; by
            default ``default_hidden_paths()``.
        read_only: More host paths bound read-only at the same place (a toolchain
            under ``/opt``, say); the system is ``/usr`` and ``/etc`` only.
        seccomp: Install the seccomp filter (x86-64 only).
        shown_at: Where the command sees its world (default: at the world's own path);
            a node running a private copy shows it at the host world's path.
        **limits: The process tier's options (``cpu_seconds``, ``max_processes``…).
    """

    tier = "bwrap"
    can_keep_live = False
    open_box = Sandbox.open_box  # one-shot namespaces only: no box to keep

    def __init__(
        self,
        *,
        hidden: Iterable[Path] | None = None,
        read_only: Iterable[Path] = (),
        seccomp: bool = True,
        shown_at: Path | None = None,
        **limits: Any,
    ) -> None:
        limits.setdefault("max_processes", 1024)
        super().__init__(**limits)
        self._max_processes: int | None = limits["max_processes"]
        self._hidden = [
            Path(os.path.abspath(p)) for p in (default_hidden_paths() if hidden is None else hidden)
        ]
        self._read_only = [os.path.abspath(p) for p in read_only]
        self._seccomp = seccomp
        self._shown_at = shown_at
        self._bridge: Path | None = None
        parent = pids_parent() if self._max_processes else None
        self._groups = CgroupPool(parent, self._max_processes or 0) if parent else None
        if self._groups is not None:  # kept cgroups go with the sandbox, or at exit
            weakref.finalize(self, self._groups.close)

    def environment(self) -> dict[str, str]:
        """The command's environment: the process tier's, with the synthetic home."""
        env = super().environment()
        env["HOME"] = SANDBOX_HOME
        env["TMPDIR"] = "/tmp"
        return env

    def argv(
        self,
        command: str,
        cwd: Path,
        *,
        seccomp_fd: int | None = None,
        proxy: Path | None = None,
        tmp_bytes: int = DEFAULT_TMP_BYTES,
        report_fd: int | None = None,
        read_only: Sequence[Path] = (),
    ) -> list[str]:
        """The full ``bwrap`` command line for ``command`` run in the world ``cwd``.

        ``/tmp`` is a tmpfs of ``tmp_bytes`` (uncapped where bubblewrap is older than
        0.8, which has no ``--size``); ``report_fd`` is the pipe the wrapper reports
        ``/tmp``'s free space to after the command (no wrapper without it).
        ``read_only`` are more host folders bound read-only for this command alone
        (an MCP server's installation), hidden paths inside them masked.
        """
        binary = shutil.which("bwrap") or "bwrap"
        world = Path(os.path.abspath(cwd))
        args = [binary, "--die-with-parent", "--new-session", "--unshare-all"]
        args += ["--hostname", "helix-sandbox"]
        if os.geteuid() == 0:
            args += ["--cap-drop", "ALL"]
        args += _system_binds()
        if tmpfs_size_supported():
            args += ["--size", str(tmp_bytes)]
        args += ["--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
        for path in [*self._read_only, *(os.path.abspath(p) for p in read_only)]:
            args += ["--ro-bind-try", path, path]
        inside = self._shown_at or world
        args += ["--bind", str(world), str(inside)]
        args += _masks(self._hidden, world)
        for mount in read_only:
            args += _masks(self._hidden, Path(os.path.abspath(mount)))
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        args += ["--chdir", str(inside)]
        inner = ["/bin/sh", "-c", command]
        if proxy is not None:
            bridge = self._bridge_script()
            args += ["--ro-bind", str(bridge), f"{_HELPERS}/bridge.py"]
            args += ["--bind", str(proxy), f"{_HELPERS}/proxy.sock"]
            python = shutil.which("python3", path="/usr/bin:/bin") or "/usr/bin/python3"
            inner = [python, "-S", "-I", f"{_HELPERS}/bridge.py", str(BRIDGE_PORT)]
            inner += [f"{_HELPERS}/proxy.sock", "/bin/sh", "-c", command]
        if report_fd is not None:
            inner = ["/bin/sh", "-c", _TMP_REPORT.format(fd=report_fd), "helix-tmp", *inner]
        return [*args, "--", *inner]

    def _bridge_script(self) -> Path:
        if self._bridge is None:
            path = self._proxy().folder() / "bridge.py"
            path.write_text(BRIDGE_SCRIPT)
            self._bridge = path
        return self._bridge

    def close(self) -> None:
        """Remove the private directories and the kept cgroups."""
        super().close()
        if self._groups is not None:
            self._groups.close()

    @contextlib.asynccontextmanager
    async def _launch(
        self,
        command: str,
        cwd: Path,
        egress: EgressHook | None,
        tmp_bytes: int,
        read_only: Sequence[Path] = (),
    ) -> AsyncIterator[Launch]:
        env = self.environment()
        seccomp_fd = program_fd() if self._seccomp else None
        group = self._groups.take() if self._groups is not None else None
        report, reported = os.pipe()
        os.set_blocking(report, False)
        try:
            fds = (reported,) if seccomp_fd is None else (seccomp_fd, reported)
            death = None if _setpriv() else self._limit_setter()  # else: the slow way
            options: dict[str, Any] = {
                "seccomp_fd": seccomp_fd,
                "tmp_bytes": tmp_bytes,
                "report_fd": reported,
                "read_only": read_only,
            }

            def finish(result: CommandResult) -> CommandResult:
                return replace(result, tmp_full=_tmp_full(report))

            if egress is None:
                argv = self.argv(command, cwd, **options)
                yield Launch(self._launcher(group, argv), env, death, fds, finish)
                return
            async with self._proxy().unix_channel(egress) as socket_path:
                env.update(proxy_environment(f"http://127.0.0.1:{BRIDGE_PORT}"))
                argv = self.argv(command, cwd, proxy=socket_path, **options)
                yield Launch(self._launcher(group, argv), env, death, fds, finish)
        finally:
            os.close(report)
            os.close(reported)
            if seccomp_fd is not None:
                os.close(seccomp_fd)
            if group is not None and self._groups is not None:
                self._groups.give_back(group)

    def _launcher(self, group: PidsCgroup | None, argv: list[str]) -> list[str]:
        """``argv`` behind a tiny shell that joins the cgroup and sets the rlimits.

        A ``preexec_fn`` would do the same in Python, but it forces a full ``fork`` of
        Helix for every command; the shell lets ``subprocess`` use ``vfork``. ``setpriv
        --pdeathsig`` gives ``bwrap`` the parent-death signal (``--die-with-parent``
        covers only what ``bwrap`` starts), so a ``kill -9`` of Helix ends it all.
        """
        steps = ['echo 0 > "$1" || exit 125'] if group is not None else []
        steps += [f"ulimit -{flag} {value} || exit 125" for flag, value in self._ulimits()]
        script = "; ".join([*steps, 'shift; exec "$@"'])
        procs = str(group.procs) if group is not None else "-"
        setpriv = _setpriv()
        death = [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []
        return ["/bin/sh", "-c", script, "helix-launch", procs, *death, *argv]

    def _ulimits(self) -> list[tuple[str, int]]:
        """The process tier's limits as ``ulimit`` flags and units, clamped to the hard ones."""
        units = {
            resource.RLIMIT_CPU: ("t", 1),
            resource.RLIMIT_FSIZE: ("f", 512),
            resource.RLIMIT_NOFILE: ("n", 1),
            resource.RLIMIT_NPROC: ("p", 1),
            resource.RLIMIT_AS: ("v", 1024),
        }
        flags = []
        for which, value in self._limits.items():
            if value is None or which not in units:
                continue
            _soft, hard = resource.getrlimit(which)
            target = value if hard == resource.RLIM_INFINITY else min(value, hard)
            flag, unit = units[which]
            flags.append((flag, max(target // unit, 1)))
        return flags


def _tmp_full(report: int) -> bool:
    """Whether the wrapper reported a full ``/tmp`` (nothing reported: not known full)."""
    try:
        free_blocks, block_size = os.read(report, 256).split()
        return int(free_blocks) * int(block_size) < _TMP_FULL_BELOW
    except (OSError, ValueError):
        return False


@cache
def tmpfs_size_supported() -> bool:
    """Whether this bubblewrap can size a tmpfs (``--size``, bubblewrap 0.8 and later)."""
    binary = shutil.which("bwrap")
    if binary is None:
        return False
    try:
        done = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in done.stdout + done.stderr


@cache
def _setpriv() -> str | None:
    """util-linux's ``setpriv`` if it can set a parent-death signal (2.33 and later)."""
    binary = shutil.which("setpriv")
    if binary is None:
        return None
    try:
        done = subprocess.run(
            [binary, "--pdeathsig", "KILL", "--", "/bin/true"], capture_output=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return binary if done.returncode == 0 else None


def _system_binds() -> list[str]:
    """The read-only system: ``/usr``, ``/etc`` (secrets masked), merged-usr links."""
    args = ["--ro-bind", "/usr", "/usr"]
    for link in _SYSTEM_LINKS:
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    args += ["--ro-bind", "/etc", "/etc", *_etc_masks()]
    return [*args, "--proc", "/proc", "--dev", "/dev"]


@cache
def _etc_masks() -> tuple[str, ...]:
    """Mask every entry of ``/etc`` that other users may not read (``shadow``, keys…)."""
    masks: list[str] = []
    for folder, dirs, files in os.walk("/etc"):
        for name in list(dirs):
            path = os.path.join(folder, name)
            if _private(path):
                masks += ["--tmpfs", path]
                dirs.remove(name)
        for name in files:
            path = os.path.join(folder, name)
            if _private(path):
                masks += ["--ro-bind", "/dev/null", path]
    return tuple(masks)


def _private(path: str) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode):
        return False
    return not info.st_mode & stat.S_IROTH


def _masks(hidden: Sequence[Path], world: Path) -> list[str]:
    """Mask hidden paths that lie inside the world (elsewhere they are not bound at all)."""
    args: list[str] = []
    for path in hidden:
        if path == world or not path.is_relative_to(world) or not os.path.lexists(path):
            continue
        if path.is_dir() and not path.is_symlink():
            args += ["--tmpfs", str(path)]
        elif not path.is_symlink():
            args += ["--ro-bind", "/dev/null", str(path)]
    return args
