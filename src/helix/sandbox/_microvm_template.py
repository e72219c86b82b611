"""A booted guest frozen once, so a box starts where the boot ended instead of booting.

Under emulation most of a box's start is the guest kernel's boot, the same every
time. So the first box of a shape (the guest image, memory, CPUs, acceleration)
boots a guest that runs nothing but Helix's init up to the point where it waits for
the host (``_microvm_guest.WAITING``: modules loaded, nothing mounted, nothing of a
run's inside), and QEMU's migration writes that guest out (QMP ``migrate`` to a
file, the guest idle; QEMU stops it at the end): the template. Every later box of
that shape is a QEMU started with the same machine and devices and ``-incoming
fd:N`` reading the template, which goes on from the wait: the host's go-ahead,
``/usr`` mounted, the agent started.

The template holds no secret and nothing of any world (no share is mounted at that
point). Boxes from one template share its memory
as it was, the kernel's random state included (the emulated ``RDRAND`` and timing
already make their bytes differ), so the agent also reseeds the guest's random
generator from the host, and sets its clock from the RTC, before anything of a run
starts (``_microvm_guest``). A template that fails to load (QEMU updated, a
damaged file) is removed and the box boots afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from helix.errors import ConfigError

from ._microvm_guest import WAITING
from ._microvm_qmp import Qmp, until_migrated

_FORMAT = "2"
"""Part of every template's key: changed when what a template holds changes."""
_BUILD_TIMEOUT_S = 240.0


def template_key(argv: Sequence[str], qemu: str) -> str:
    """A template's name: the machine's shape (paths of the box's own left out) and QEMU's."""
    info = os.stat(qemu)
    shape = [a for a in argv if ".sock" not in a]  # the box's own sockets
    text = json.dumps([_FORMAT, shape, qemu, info.st_size, info.st_mtime_ns])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


async def ensure_template(folder: Path, key: str, argv: Sequence[str]) -> Path | None:
    """The template ``key`` in ``folder``, built with ``argv`` if missing; ``None`` if not."""
    state = folder / f"{key}.state"
    if state.is_file():
        return state
    lock = await asyncio.to_thread(_lock, folder / f"{key}.lock")
    try:
        if state.is_file():  # another process built it while this one waited
            return state
        with tempfile.TemporaryDirectory(prefix="helix-microvm-template-") as work:
            partial = folder / f".{key}.{os.getpid()}"
            try:
                await _build(list(argv), Path(work), partial)
                partial.replace(state)
            except (ConfigError, OSError, TimeoutError):
                return None
            finally:
                partial.unlink(missing_ok=True)  # gone once renamed; left by a failure or a cancel
        return state
    finally:
        lock.close()


def _lock(path: Path) -> Any:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "w")  # noqa: SIM115 - held until the template is built
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def forget(state: Path) -> None:
    """Remove a template that failed to load."""
    with contextlib.suppress(OSError):
        state.unlink()


async def _build(argv: list[str], work: Path, target: Path) -> None:
    """Boot a guest to its init's wait and migrate it into ``target``."""
    argv = [_template_arg(a, work) for a in argv]
    qmp_path = work / "qmp.sock"
    qemu = await asyncio.create_subprocess_exec(
        *argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        async with asyncio.timeout(_BUILD_TIMEOUT_S):
            reader, writer = await _connect(work / "agent.sock", qemu)
            while (line := await reader.readline()) != WAITING:
                if not line:
                    raise ConfigError("the template's guest closed its port")
            qmp = await Qmp.connect(qmp_path)
            # Not stopped first: the guest idles in its wait, the migration converges at
            # once, and a guest migrated running starts running where it is loaded.
            await qmp.run("migrate", uri=f"exec:cat > {shlex.quote(str(target))}")
            status = await until_migrated(qmp, _BUILD_TIMEOUT_S)
            if status != "completed":
                raise ConfigError(f"the template's migration ended {status}")
            writer.close()
            qmp.close()
    finally:
        with contextlib.suppress(ProcessLookupError):
            qemu.kill()
        await qemu.wait()


def _template_arg(arg: str, work: Path) -> str:
    """A box's argument as the template's QEMU has it: its sockets in ``work``, spawning.

    The box's arguments are made with the folder ``/``: its sockets are ``/NAME.sock``.
    """
    if ".sock" in arg:
        return arg.replace("path=/", f"path={work}/").replace("unix:/", f"unix:{work}/")
    return arg.replace("spawn=deny,", "")  # its migration runs ``cat``


async def _connect(
    path: Path, qemu: asyncio.subprocess.Process
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    while True:
        try:
            return await asyncio.open_unix_connection(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            if qemu.returncode is not None:
                raise ConfigError("the template's QEMU exited") from None
            await asyncio.sleep(0.02)


def remove_templates(folder: Path) -> None:
    """Remove every template (they are rebuilt on first use)."""
    shutil.rmtree(folder, ignore_errors=True)
