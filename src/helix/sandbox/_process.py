"""The process sandbox: a plain child process with a scrubbed environment and rlimits.

This is the weakest tier. It keeps secrets out of the command's environment, bounds
its CPU time, address space, file sizes, open files and process count, and kills everything the
command started (its whole process group) when it ends, times out or is cancelled.
It does not confine the filesystem or the network: a command can still read or write
anything the Helix process can. Use a stronger tier for untrusted work.

Known limits of process-group cleanup: a command that deliberately leaves its group
(``setsid``, ``nohup … &`` with a new session) escapes the kill.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import re
import resource
import shlex
import shutil
import signal
import tempfile
import time
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import cast

from helix.errors import ConfigError

from ._box import Box
from ._egress import EgressHook
from ._git_env import protect
from ._proxy import EgressProxy, proxy_environment
from ._sandbox import DEFAULT_MAX_OUTPUT, DEFAULT_TMP_BYTES, CommandResult, Sandbox
from ._serve import running
from ._supervise import Launch as Launch
from ._supervise import _require_directory, _supervise
from ._supervise import decode_capped as decode_capped
from ._supervise import truncation_marker as truncation_marker

PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ")
"""Variables copied from Helix's own environment when set (nothing else is)."""

_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
_SECRET_NAME = re.compile(
    r"KEY$|TOKEN|SECRET|PASSWORD|PASSWD|_PASS$|CREDENTIAL|^HELIX_", re.IGNORECASE
)


def looks_secret(name: str) -> bool:
    """Whether an environment variable's name suggests a secret or Helix's own settings."""
    return bool(_SECRET_NAME.search(name))


class ProcessSandbox(Sandbox):
    """Runs commands as child processes of Helix, in their own process group.

    The environment is rebuilt from an allowlist: ``PATH``, ``LANG``, ``LC_ALL``,
    ``LC_CTYPE``, ``TERM`` and ``TZ`` are copied when set; ``HOME`` and ``TMPDIR`` point
    into a private directory made for this sandbox (removed when it is closed or
    garbage-collected). Nothing else from Helix's environment reaches the command:
    no provider keys, no ``HELIX_*`` settings. ``PATH`` loses its empty and relative
    entries (a bare ``ls`` never runs the world's ``./ls``), and fixed git settings are
    added last, over ``extra_env`` too, so git runs no program the world's repository
    names where a setting can prevent it (``sandbox/_git_env.py``, docs/security.md).

    Resource limits are set in the child before it runs the shell, as both soft and
    hard limits so the command cannot lift them again (``None`` leaves a limit as
    inherited; a value above the inherited hard limit is clamped to it; root, with
    ``CAP_SYS_RESOURCE``, can still raise them):

    * ``cpu_seconds``: CPU time per process (``RLIMIT_CPU``); the wall-clock bound is
      the ``timeout_s`` of each call.
    * ``max_file_bytes``: the largest file a process may write (``RLIMIT_FSIZE``).
    * ``max_open_files``: open descriptors per process (``RLIMIT_NOFILE``).
    * ``max_processes``: processes *and threads* of the user (``RLIMIT_NPROC``). The
      kernel counts all of the user's processes, not just the command's, and ignores
      the limit for root: it is a brake on fork bombs, not a budget.
    * ``max_memory_bytes``: address space per process (``RLIMIT_AS``), so one process
      cannot take the machine's memory; it is virtual memory, so keep it generous.

    Args:
        extra_env: Variables to add to the command's environment. Names that look
            like secrets (``*KEY``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``…) or
            Helix settings (``HELIX_*``) are refused with ``ConfigError``.
        home: The ``HOME`` of commands (``TMPDIR`` is then the system's); when
            ``None``, both point into a private temporary directory.
        cpu_seconds: See above.
        max_file_bytes: See above.
        max_open_files: See above.
        max_processes: See above.
        max_memory_bytes: See above.
    """

    tier = "process"

    def __init__(
        self,
        *,
        extra_env: Mapping[str, str] | None = None,
        home: Path | None = None,
        cpu_seconds: int | None = 600,
        max_file_bytes: int | None = 1 << 30,
        max_open_files: int | None = 1024,
        max_processes: int | None = 4096,
        max_memory_bytes: int | None = 8 << 30,
    ) -> None:
        refused = sorted(name for name in (extra_env or {}) if looks_secret(name))
        if refused:
            raise ConfigError(
                f"the process sandbox refuses secret-looking variables: {', '.join(refused)}"
            )
        self._extra_env = dict(extra_env or {})
        self._egress_proxy: EgressProxy | None = None
        self._home = home
        self._private: Path | None = None
        self._cleanup: Callable[[], object] | None = None
        self._limits = {
            resource.RLIMIT_CPU: cpu_seconds,
            resource.RLIMIT_FSIZE: max_file_bytes,
            resource.RLIMIT_NOFILE: max_open_files,
            resource.RLIMIT_NPROC: max_processes,
            resource.RLIMIT_AS: max_memory_bytes,
        }

    def close(self) -> None:
        """Remove the private home directory, if one was made."""
        if self._cleanup is not None:
            self._cleanup()
        self._private = self._cleanup = None

    def environment(self) -> dict[str, str]:
        """The environment commands run with (made fresh for each command)."""
        env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
        env.setdefault("PATH", _DEFAULT_PATH)
        home = self._home if self._home is not None else self._private_dir()
        tmp = home / ".tmp" if self._home is None else Path(tempfile.gettempdir())
        tmp.mkdir(parents=True, exist_ok=True)
        env["HOME"] = str(home)
        env["TMPDIR"] = str(tmp)
        env.update(self._extra_env)
        env = protect(env)
        if not env["PATH"]:
            env["PATH"] = _DEFAULT_PATH
        return env

    def _private_dir(self) -> Path:
        if self._private is None:
            self._private = Path(tempfile.mkdtemp(prefix="helix-sandbox-"))
            self._cleanup = weakref.finalize(self, shutil.rmtree, self._private, ignore_errors=True)
        return self._private

    def _limit_setter(self) -> Callable[[], None]:
        """A ``preexec_fn`` applying the limits, clamped in the parent.

        Everything is computed before the fork, so the child only loops over ready
        tuples calling ``setrlimit``: no imports, no allocation-heavy work, no locks,
        which is what makes ``preexec_fn`` risky in a process with threads.
        """
        plan: list[tuple[int, tuple[int, int]]] = []
        for which, value in self._limits.items():
            if value is None:
                continue
            _soft, hard = resource.getrlimit(which)
            target = value if hard == resource.RLIM_INFINITY else min(value, hard)
            plan.append((which, (target, target)))

        prctl = _prctl()

        def apply() -> None:
            for which, limits in plan:
                resource.setrlimit(which, limits)
            if prctl is not None:
                # If Helix dies (kill -9 included), the shell dies with it instead of
                # running on unsupervised while the resumed run calls it interrupted.
                prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

        return apply

    @contextlib.asynccontextmanager
    async def _launch(
        self,
        command: str,
        cwd: Path,
        egress: EgressHook | None,
        tmp_bytes: int,
        read_only: Sequence[Path] = (),
    ) -> AsyncIterator[Launch]:
        """How to start ``command``; stronger tiers wrap it and clean up after it.

        The process tier routes ``http(s)_proxy`` through the filtering proxy when the
        run has an egress policy, but it cannot force a command to use it. It has no
        private ``/tmp`` (``TMPDIR`` is a directory on the host), so ``tmp_bytes`` does
        not apply to it, and it hides nothing, so neither does ``read_only``.
        """
        env = self.environment()
        if egress is None:
            yield Launch(["/bin/sh", "-c", command], env, self._limit_setter())
            return
        async with self._proxy().tcp_channel(egress) as port:
            env.update(proxy_environment(f"http://127.0.0.1:{port}"))
            yield Launch(["/bin/sh", "-c", command], env, self._limit_setter())

    can_keep_live = True

    async def open_box(
        self,
        *,
        cwd: Path,
        egress: EgressHook | None = None,
        tmp_bytes: int | None = None,
        restore: Path | None = None,
    ) -> Box:
        """A live world on the host (``ProcessBox``); it cannot be restored from an image."""
        from ._process_box import ProcessBox

        if restore is not None:
            raise ConfigError("the process sandbox cannot restore a checkpointed live world")
        return await ProcessBox.open(self, cwd, egress)

    def _proxy(self) -> EgressProxy:
        if self._egress_proxy is None:
            self._egress_proxy = EgressProxy()
        return self._egress_proxy

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        timeout_s: float,
        max_output: int = DEFAULT_MAX_OUTPUT,
        egress: EgressHook | None = None,
        tmp_bytes: int | None = None,
    ) -> CommandResult:
        """Run ``command`` with ``/bin/sh -c`` in ``cwd``; kill its group after ``timeout_s``.

        Output (stdout and stderr merged) beyond ``max_output`` bytes is read and
        discarded, so the command never blocks on a full pipe, and replaced by a
        marker line. When the shell exits, anything it left running in its process
        group is killed. Cancelling the awaiting task kills the group and re-raises.
        """
        started = time.monotonic()
        _require_directory(cwd)
        tmp = DEFAULT_TMP_BYTES if tmp_bytes is None else tmp_bytes
        async with self._launch(command, cwd, egress, tmp) as launch:
            result = await _supervise(launch, cwd, timeout_s, max_output)
            if launch.finish is not None:
                result = launch.finish(result)
        return replace(result, duration_ms=(time.monotonic() - started) * 1000)

    def serve(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        egress: EgressHook | None = None,
        read_only: Sequence[Path] = (),
        tmp_bytes: int | None = None,
    ) -> contextlib.AbstractAsyncContextManager[asyncio.subprocess.Process]:
        """Start a long-lived program as this tier starts a command (see ``Sandbox.serve``).

        Its environment is the tier's (``environment()``) with ``env`` over it; the
        program is ``exec``-ed by the tier's shell, so its exit code is the process's.
        """
        return self._serve(list(argv), cwd, dict(env), egress, tuple(read_only), tmp_bytes)

    @contextlib.asynccontextmanager
    async def _serve(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        egress: EgressHook | None,
        read_only: tuple[Path, ...],
        tmp_bytes: int | None,
    ) -> AsyncIterator[asyncio.subprocess.Process]:
        _require_directory(cwd)
        tmp = DEFAULT_TMP_BYTES if tmp_bytes is None else tmp_bytes
        command = "exec " + shlex.join(argv)
        async with self._launch(command, cwd, egress, tmp, read_only) as launch:
            environment = {**launch.env, **env}
            async with running(
                launch.argv,
                cwd=cwd,
                env=environment,
                preexec=launch.preexec,
                pass_fds=launch.pass_fds,
            ) as process:
                yield process


_PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    """Linux's ``prctl``, looked up before any fork; ``None`` where there is none."""
    try:
        return cast(Callable[..., int], ctypes.CDLL(None, use_errno=True).prctl)
    except (OSError, AttributeError):
        return None
