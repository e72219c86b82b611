"""A booted guest frozen once, its agent running, so a box starts where that left off.

Under emulation most of a box's start is the guest kernel's boot and the agent's
``python3`` starting (read from the host's ``/usr`` over Helix's 9P share), the same
every time. So the first box of a shape (the guest image, memory, CPUs, acceleration,
and the host's ``/usr`` as its folders' times say) boots a guest up to the point where
its agent waits for its setup (``/usr`` mounted, the agent said hello; nothing of a
run's inside), stops it, and has QEMU's migration write it out: the template, and
beside it the ``/usr`` share's state (``NAME.usr.json``, the guest's fids, as a
checkpoint keeps them). Every later box of that shape is a QEMU started with the same
machine and devices and ``-incoming fd:N`` reading the template, its ``/usr`` share
loaded from that state, continued: the agent takes its setup at once.

The template holds no secret and nothing of any world (the world is mounted by the
setup, after it): the host's ``/usr``, which every guest reads anyway, is all it
has seen. Boxes from one template share its memory as it was, the kernel's random
state included (the emulated ``RDRAND`` and timing already make their bytes differ),
so the agent also reseeds the guest's random generator from the host, and sets its
clock from the RTC, before anything of a run starts (``_microvm_guest``). A template
that fails to load (QEMU updated, a damaged file) is removed and the box boots afresh;
one of a ``/usr`` changed since (a package upgraded) has another name and is rebuilt.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import glob
import hashlib
import json
import os
import shlex
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from helix.errors import ConfigError

from ._microvm_guest import FRAME, MAX_FRAME, WAITING
from ._microvm_qmp import Qmp, until_migrated
from ._ninep import NinepShare

_FORMAT = "3"
"""Part of every template's key: changed when what a template holds changes."""
_BUILD_TIMEOUT_S = 240.0


def template_key(argv: Sequence[str], qemu: str) -> str:
    """A template's name: the machine's shape, QEMU's, and the host's ``/usr``.

    The box's own paths are left out; ``/usr`` is in because the template's guest has
    read from it: a changed one needs another.
    """
    info = os.stat(qemu)
    shape = [a for a in argv if ".sock" not in a]  # the box's own sockets
    text = json.dumps([_FORMAT, shape, qemu, info.st_size, info.st_mtime_ns, _usr_times()])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _usr_times() -> list[int]:
    """The times of the host's ``/usr`` folders a package changes when it changes a file.

    Its programs, its libraries and Python's: adding, replacing or removing a file in
    one changes that folder's time.
    """
    folders = ["/usr/bin", "/usr/lib", *glob.glob("/usr/lib/python3*"),
               *glob.glob("/usr/lib/*-linux-gnu")]  # fmt: skip
    times = []
    for folder in sorted(folders):
        with contextlib.suppress(OSError):
            times.append(os.stat(folder).st_mtime_ns)
    return times


def usr_state(state: Path) -> dict[str, Any]:
    """The ``/usr`` share's state saved beside template ``state``; ``ValueError`` if none."""
    try:
        descriptor = os.open(state.with_suffix(".usr.json"), os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(descriptor, "rb") as saved:
            found = json.loads(saved.read(1 << 20))
    except (OSError, ValueError) as error:
        raise ValueError(f"the template's share state cannot be read: {error}") from None
    if not isinstance(found, dict):
        raise ValueError("the template's share state is not an object")
    return found


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
            shares = partial.with_suffix(".usr.json")
            try:
                await _build(list(argv), Path(work), partial)
                shares.replace(state.with_suffix(".usr.json"))
                partial.replace(state)
            except (ConfigError, OSError, TimeoutError):
                return None
            finally:
                partial.unlink(missing_ok=True)  # gone once renamed; left by a failure or a cancel
                shares.unlink(missing_ok=True)
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
    for path in (state, state.with_suffix(".usr.json")):
        with contextlib.suppress(OSError):
            path.unlink()


async def _build(argv: list[str], work: Path, target: Path) -> None:
    """Boot a guest until its agent waits for its setup; migrate it into ``target``.

    The ``/usr`` share is served meanwhile; its state goes beside ``target`` once the
    guest is stopped (``TARGET.usr.json``).
    """
    argv = [_template_arg(a, work) for a in argv]
    qemu = await asyncio.create_subprocess_exec(
        *argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    usr = NinepShare(Path("/usr"), read_only=True)
    serving: asyncio.Task[None] | None = None
    try:
        async with asyncio.timeout(_BUILD_TIMEOUT_S):
            reader, writer = await _connect(work / "agent.sock", qemu)
            while (line := await reader.readline()) != WAITING:
                if not line:
                    raise ConfigError("the template's guest closed its port")
            usr_reader, usr_writer = await _connect(work / "usr.sock", qemu)
            serving = asyncio.create_task(usr.serve(usr_reader, usr_writer))
            writer.write(b"go\n")
            await _hello(reader)
            qmp = await Qmp.connect(work / "qmp.sock")
            try:
                await qmp.run("stop")
                while usr.busy:  # noqa: ASYNC110 - the share is asked, not told
                    await asyncio.sleep(0.005)
                await qmp.run("migrate", uri=f"exec:cat > {shlex.quote(str(target))}")
                status = await until_migrated(qmp, _BUILD_TIMEOUT_S)
            finally:
                qmp.close()
            if status != "completed":
                raise ConfigError(f"the template's migration ended {status}")
            target.with_suffix(".usr.json").write_text(json.dumps(usr.dump()))
            writer.close()
            usr_writer.close()
    finally:
        with contextlib.suppress(ProcessLookupError):
            qemu.kill()
        await qemu.wait()
        if serving is not None:
            serving.cancel()
            with contextlib.suppress(BaseException):
                await serving
        usr.close()


async def _hello(reader: asyncio.StreamReader) -> None:
    """Read the agent's frames until its hello (``H``): it runs, and waits for its setup."""
    head = struct.calcsize(FRAME)
    while True:
        kind, _, size = struct.unpack(FRAME, await reader.readexactly(head))
        if size > MAX_FRAME:
            raise ConfigError("the template's agent sent a frame too large")
        await reader.readexactly(size)
        if kind == b"H":
            return


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
