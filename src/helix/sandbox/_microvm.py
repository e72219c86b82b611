"""The microvm tier: each box a QEMU ``microvm`` with its own kernel; the strongest tier.

The profile (``MicrovmSandbox.qemu_argv``): a ``microvm`` machine (no PCI, no
firmware, no network card: ``-nic none``), booting Debian's kernel directly into
Helix's initramfs (``_microvm_image``), its memory (``-m``) and CPUs (``-smp``) the
box's limits, QEMU itself under its seccomp filter (``-sandbox on``, no spawning, no
privilege changes). Two 9p shares: the host's ``/usr``, read-only, for the guest's
programs; and the world, read-write, mounted in the guest at its own path. QEMU has
no 9p device: the guest's kernel speaks 9P2000.L over a virtio-serial port per share,
and Helix answers on the host (``_microvm_shares``, ``_ninep``), opening every path
component itself relative to the share with ``O_NOFOLLOW``: a symlink in the world is
resolved by the guest's kernel, inside the guest, never by the host (files are
created as Helix's user; inode numbers of other file systems are kept apart).
Inside, Helix's agent runs each command as Helix's own uid with no capabilities and
``no_new_privs``, in a ``pids`` cgroup, with the hidden paths masked and a private
``/tmp`` (``_microvm_guest``). The guest has no network device: only its loopback.
When the box has egress, the agent listens on ``127.0.0.1:3128`` inside (the proxy's
variables point clients there) and carries each connection over its port to the
filtering proxy's Unix socket on the host (``_microvm_agent``), which decides it.

Acceleration (``accel()``): KVM when ``/dev/kvm`` is usable and a guest kernel boots
under it (tried once, remembered in the microVM folder), else TCG emulation
(``-accel tcg -cpu max``, ``tsc_early_khz`` on the kernel's command line, without
which it hangs calibrating its clock; ``_microvm_accel``). Under TCG a guest boots in
seconds and its agent's ``python3`` reads itself cold over the ``/usr`` share, so boxes
start from a template (``_microvm_template``: a guest frozen once its agent waits for
its setup, about half a second to go on from); the one-shot ``run`` (a box per command)
is still slow, and the tier is never chosen unasked.

Checkpoints (``MicrovmBox.checkpoint``): the agent freezes the box's commands (their
cgroup: none is then inside a system call, so no 9p request is in flight), QEMU is
stopped and migrated into the image's ``memory`` over a Unix socket, and the shares'
state (the guest's open fids) goes beside it in ``box.json`` with the machine's shape.
A restore is a QEMU of the same shape with ``-incoming`` of that memory, the shares
loaded back and served, the guest continued and its commands thawed (its clock set
again first): processes, their memory and ``/tmp`` go on where they were.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import math
import os
import resource
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any

from helix._util import close_fully
from helix.errors import ConfigError

from ._box import Box
from ._bridge import BRIDGE_PORT
from ._bwrap import default_hidden_paths
from ._egress import EgressHook
from ._microvm_accel import accel, guest_image, launcher, qemu_binary, tsc_khz
from ._microvm_agent import Agent, Start
from ._microvm_box import MEMORY, MicrovmBox, Saved, end_console, stop_qemu
from ._microvm_guest import BOX_STATE, USR_PORT, WORLD_PORT
from ._microvm_image import GuestImage, default_microvm_dir
from ._microvm_qmp import continue_loaded
from ._microvm_shares import Shares
from ._microvm_template import ensure_template, forget, template_key, usr_state
from ._process import ProcessSandbox
from ._proxy import proxy_environment
from ._sandbox import DEFAULT_MAX_OUTPUT, DEFAULT_TMP_BYTES, CommandResult, Sandbox
from ._supervise import _require_directory

SOCKETS = ("agent", "usr", "world", "qmp")
"""The Unix sockets QEMU listens on in a box's folder (``NAME.sock``)."""
BOOT_TIMEOUT_S = 180.0
"""How long a guest may take to boot and answer (minutes under a loaded emulator)."""
_SHOWN_PATHS = ("/usr/", "/bin", "/sbin")
_CONSOLE_TAIL = 4096


def _escape(value: str) -> str:
    """A value inside a QEMU option list (commas doubled)."""
    return value.replace(",", ",,")


@cache
def probe() -> str | None:
    """``None`` if a microVM boots and runs a command here, else why the tier is unavailable."""
    try:
        qemu_binary()
        guest_image(default_microvm_dir())

        async def boot() -> None:
            with tempfile.TemporaryDirectory(prefix="helix-microvm-probe-") as world:
                box = await MicrovmSandbox().open_box(cwd=Path(world))
                try:
                    result = await box.exec(["true"], timeout_s=60)
                finally:
                    await box.close()
                if result.exit_code != 0:
                    raise ConfigError(f"a command failed in the microvm: {result.output[:200]}")

        with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a loop of its own
            pool.submit(asyncio.run, boot()).result()
    except ConfigError as error:
        return str(error)
    except (OSError, TimeoutError) as error:
        return f"the microvm did not start: {error}"
    return None


class _Console:
    """QEMU's console, read to its end; the last few kilobytes kept (for errors)."""

    def __init__(self, stream: asyncio.StreamReader | None) -> None:
        self.kept = b""
        self.task = asyncio.create_task(self._read(stream))

    async def _read(self, stream: asyncio.StreamReader | None) -> bytes:
        while stream is not None and (chunk := await stream.read(65536)):
            self.kept = (self.kept + chunk)[-_CONSOLE_TAIL:]
        return self.kept

    def said(self) -> str:
        """What QEMU and the guest printed last, for an error message."""
        text = self.kept.decode(errors="replace").strip()
        return f": {text[-600:]}" if text else ""


async def _abandon(
    qemu: asyncio.subprocess.Process | None,
    agent: Agent | None,
    shares: Shares,
    console: _Console | None,
    folder: Path,
) -> None:
    """Undo a box that did not start: its agent, QEMU, shares, console and folder."""
    if agent is not None:
        await agent.close()
    if qemu is not None:
        await stop_qemu(qemu)
    await shares.close()
    if console is not None:
        await end_console(console.task)
    shutil.rmtree(folder, ignore_errors=True)


class _NotStarted(ConfigError):
    """QEMU or the guest never reached the agent (a template may be at fault)."""


class MicrovmSandbox(ProcessSandbox):
    """Runs commands in QEMU microVMs with the profile above.

    Args:
        memory_bytes: The guest's memory (``-m``); its ``/tmp`` lives in it.
        pids: The guest's process limit for commands (a ``pids`` cgroup).
        cpus: The guest's CPUs (``-smp``).
        hidden: Host paths to mask where they lie inside the world (by default
            ``default_hidden_paths()``).
        folder: Where the guest image is built (``default_microvm_dir()``).
        templates: Start boxes from a template (a guest frozen once its agent runs,
            built on first use: ``_microvm_template``) instead of booting each afresh.
        **limits: The process tier's options; ``cpu_seconds``, ``max_file_bytes`` and
            ``max_open_files`` become each command's limits in the guest.
    """

    tier = "microvm"
    can_keep_live = True
    can_checkpoint = True

    def __init__(
        self,
        *,
        memory_bytes: int = 1 << 30,
        pids: int = 1024,
        cpus: int = 1,
        hidden: Iterable[Path] | None = None,
        folder: Path | None = None,
        templates: bool = True,
        **limits: Any,
    ) -> None:
        super().__init__(**limits)
        self.templates = templates
        self.memory_bytes = memory_bytes
        self.pids = pids
        self.cpus = max(1, min(cpus, os.cpu_count() or 1))
        self.folder = folder or default_microvm_dir()
        hidden = default_hidden_paths() if hidden is None else hidden
        self._hidden = [Path(os.path.abspath(p)) for p in hidden]

    def accel(self) -> tuple[str, str]:
        """``("kvm" | "tcg", why)``: how this sandbox's guests run here."""
        return accel(self.folder)

    def guest_env(self, proxy: bool = False) -> dict[str, str]:
        """What commands see: the scrubbed environment, ``HOME`` and ``TMPDIR`` ``/tmp``.

        With ``proxy``, also the variables that point clients at the agent's bridge port.
        """
        env = self.environment()
        env["HOME"] = env["TMPDIR"] = "/tmp"
        shown = [p for p in env["PATH"].split(":") if p.startswith(_SHOWN_PATHS)]
        env["PATH"] = ":".join(shown) or "/usr/local/bin:/usr/bin:/bin"
        if proxy:
            env.update(proxy_environment(f"http://127.0.0.1:{BRIDGE_PORT}"))
        return env

    def qemu_argv(self, image: GuestImage, folder: Path) -> list[str]:
        """The whole QEMU command line of a box (its sockets in ``folder``)."""
        how, _ = accel(self.folder)
        cpu = ["-accel", how, "-cpu", "host" if how == "kvm" else "max"]
        memory = math.ceil(self.memory_bytes / (1 << 20))
        append = "console=ttyS0 quiet loglevel=1 panic=-1 pci=off i8042.noaux i8042.nokbd"
        if how == "tcg":
            append += f" tsc_early_khz={tsc_khz()}"
        socket = {name: _escape(str(folder / f"{name}.sock")) for name in SOCKETS}
        return [
            *launcher(), qemu_binary(), "-M", "microvm", *cpu,
            "-m", f"{memory}M", "-smp", str(self.cpus),
            "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot", "-nic", "none",
            "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
            "-kernel", str(image.kernel), "-initrd", str(image.initramfs), "-append", append,
            "-serial", "stdio", "-monitor", "none",
            "-qmp", f"unix:{socket['qmp']},server=on,wait=off",
            "-device", "virtio-serial-device",
            "-chardev", f"socket,id=agent,path={socket['agent']},server=on,wait=off",
            "-device", "virtserialport,chardev=agent,name=helix.agent",
            "-chardev", f"socket,id=usr,path={socket['usr']},server=on,wait=off",
            "-device", f"virtserialport,chardev=usr,name={USR_PORT}",
            "-chardev", f"socket,id=world,path={socket['world']},server=on,wait=off",
            "-device", f"virtserialport,chardev=world,name={WORLD_PORT}",
        ]  # fmt: skip

    def _setup(self, world: str, tmp_bytes: int, proxy: bool) -> dict[str, Any]:
        hidden = [
            str(p)
            for p in self._hidden
            if p != Path(world) and p.is_relative_to(world) and os.path.lexists(p)
        ]
        kept = (resource.RLIMIT_CPU, resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE)
        rlimits = [[which, value] for which in kept if (value := self._limits.get(which))]
        return {
            "world": world,
            "hidden": hidden,
            "uid": os.getuid(),
            "gid": os.getgid(),
            "pids": self.pids,
            "tmp_bytes": tmp_bytes,
            "state": BOX_STATE,
            "env": self.guest_env(proxy),
            "bridge": BRIDGE_PORT if proxy else 0,
            "rlimits": rlimits,
            "seed": secrets.token_hex(32),
        }

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
        """A box for one command: booted, the command sent in, the box killed."""
        started = time.monotonic()
        box = await self.open_box(cwd=cwd, egress=egress, tmp_bytes=tmp_bytes)
        try:
            result = await box.exec(
                ["/bin/sh", "-c", command], timeout_s=timeout_s, max_output=max_output
            )
        finally:
            await close_fully(box.close())
        return CommandResult(
            exit_code=result.exit_code,
            output=result.output,
            truncated=result.truncated,
            timed_out=result.timed_out,
            duration_ms=(time.monotonic() - started) * 1000,
        )

    serve = Sandbox.serve  # refused: no server is given its installation and stdin here

    async def open_box(
        self,
        *,
        cwd: Path,
        egress: EgressHook | None = None,
        tmp_bytes: int | None = None,
        restore: Path | None = None,
    ) -> Box:
        """A microVM kept running (``MicrovmBox``), or the one checkpointed into ``restore``.

        A restore needs a sandbox of the checkpoint's shape (memory, CPUs, guest image,
        QEMU); ``ConfigError`` if it is not, or if the image is damaged.
        """
        _require_directory(cwd)
        world = os.path.abspath(cwd)  # noqa: ASYNC240 - no I/O: a path's text
        if world == "/":
            raise ConfigError("the microvm sandbox cannot show the host's root as a world")
        image = await asyncio.to_thread(guest_image, self.folder)
        await asyncio.to_thread(accel, self.folder)
        tmp = DEFAULT_TMP_BYTES if tmp_bytes is None else tmp_bytes
        shape = self.qemu_argv(image, Path("/"))
        key = template_key(shape, qemu_binary())
        saved = None
        if restore is not None:
            saved = await asyncio.to_thread(Saved.read, restore)
            if saved.shape != key:
                raise ConfigError(
                    "the checkpoint was made by a microVM of another shape (memory, CPUs,"
                    " guest kernel or QEMU): restore it with the sandbox that made it"
                )
        state = None
        if self.templates and saved is None:
            state = await ensure_template(self.folder / "templates", key, shape)
        stack = contextlib.AsyncExitStack()
        try:
            proxy = None
            if egress is not None:
                proxy = await stack.enter_async_context(self._proxy().unix_channel(egress))
            start = _Start(image, world, key, tmp, proxy)
            if saved is not None:
                assert restore is not None
                return await self._start(start, restore / MEMORY, saved, stack)
            if state is not None:
                try:
                    return await self._start(start, state, None, stack)
                except _NotStarted:
                    forget(state)  # it does not load (any more): boot afresh, build it anew
            return await self._start(start, None, None, stack)
        except BaseException:
            await close_fully(stack.aclose())
            raise

    async def _start(
        self,
        start: _Start,
        memory: Path | None,
        saved: Saved | None,
        stack: contextlib.AsyncExitStack,
    ) -> MicrovmBox:
        """Start QEMU (booting afresh, from a template's or a checkpoint's ``memory``).

        A guest booted or from a template is then set up; a checkpoint's goes on.
        """
        how: Start = "resumed" if saved is not None else "template" if memory else "boot"
        world = Path(start.world)
        # Loaded before QEMU starts: a checkpoint's forged share state starts nothing.
        if saved is not None:
            shares = Shares.load(world, saved.shares)
        elif memory is not None:
            try:
                shares = Shares.template(world, await asyncio.to_thread(usr_state, memory))
            except (KeyError, TypeError, ValueError) as error:
                raise _NotStarted(f"the template cannot be used: {error}") from None
        else:
            shares = Shares.fresh(world)
        folder = Path(tempfile.mkdtemp(prefix="helix-microvm-"))
        qemu: asyncio.subprocess.Process | None = None
        console: _Console | None = None
        agent: Agent | None = None
        try:
            qemu = await self._spawn(self.qemu_argv(start.image, folder), memory)
            console = _Console(qemu.stdout)
            await shares.connect(folder, partial(self._open, qemu=qemu, console=console))
            reader, writer = await self._open(folder / "agent.sock", qemu, console)
            agent = Agent(reader, writer, start=how)
            agent.proxy = start.proxy
            if saved is not None:
                await self._go_on(folder, agent, console)
            else:
                if how == "template":
                    await self._continue(folder, console)
                await self._set_up(agent, start, console)
            return MicrovmBox(qemu, agent, world, folder, stack, console.task, shares, start.key)
        except BaseException:
            # To its end even if cancelled again: a QEMU left running outlives its loop.
            await close_fully(_abandon(qemu, agent, shares, console, folder))
            raise

    async def _spawn(self, argv: list[str], memory: Path | None) -> asyncio.subprocess.Process:
        """Start QEMU, given ``memory`` (a template's or checkpoint's) to load if any."""
        with contextlib.ExitStack() as files:
            fds: tuple[int, ...] = ()
            if memory is not None:
                fds = (files.enter_context(open(memory, "rb")).fileno(),)  # noqa: ASYNC230
                argv = [*argv, "-incoming", f"fd:{fds[0]}"]
            return await asyncio.create_subprocess_exec(
                *argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=self.environment(),
                pass_fds=fds,
            )

    async def _set_up(self, agent: Agent, start: _Start, console: _Console) -> None:
        """Wait for a new guest's agent, then send it the box's setup."""
        try:
            await asyncio.wait_for(asyncio.shield(agent.hello), BOOT_TIMEOUT_S)
        except (TimeoutError, ConfigError) as error:
            await asyncio.wait({console.task}, timeout=1)
            raise _NotStarted(f"the microvm did not start: {error}{console.said()}") from None
        setup = self._setup(start.world, start.tmp, start.proxy is not None)
        agent.send(b"S", 0, json.dumps(setup).encode())
        try:
            answer = await asyncio.wait_for(asyncio.shield(agent.ready), BOOT_TIMEOUT_S)
        except (TimeoutError, ConfigError) as error:
            raise ConfigError(f"the microvm did not set up: {error}{console.said()}") from None
        if answer.get("error"):
            raise ConfigError(f"the microvm's agent could not set up: {answer['error']}")

    async def _continue(self, folder: Path, console: _Console) -> None:
        """Let a template's guest run once QEMU has loaded it (it was stopped when saved)."""
        try:
            async with asyncio.timeout(BOOT_TIMEOUT_S):
                await continue_loaded(folder / "qmp.sock")
        except (TimeoutError, ConfigError, OSError) as error:
            await asyncio.wait({console.task}, timeout=1)
            raise _NotStarted(f"the template did not load: {error}{console.said()}") from None

    async def _go_on(self, folder: Path, agent: Agent, console: _Console) -> None:
        """Continue a checkpoint's guest once QEMU has loaded it; thaw its commands."""
        try:
            async with asyncio.timeout(BOOT_TIMEOUT_S):
                await continue_loaded(folder / "qmp.sock")
                thawed = await agent.ask(b"T")
        except (TimeoutError, ConfigError) as error:
            await asyncio.wait({console.task}, timeout=1)
            raise ConfigError(f"the microvm did not restore: {error}{console.said()}") from None
        if thawed.get("error"):
            raise ConfigError(f"the restored microvm's commands did not thaw: {thawed['error']}")

    async def _open(
        self, path: Path, qemu: asyncio.subprocess.Process, console: _Console
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Connect to one of QEMU's sockets in a box's folder once QEMU has made it."""
        deadline = time.monotonic() + 60
        while True:
            try:
                return await asyncio.open_unix_connection(str(path))
            except (FileNotFoundError, ConnectionRefusedError):
                if qemu.returncode is not None or time.monotonic() > deadline:
                    await asyncio.wait({console.task}, timeout=2)
                    raise _NotStarted(f"QEMU did not start{console.said()}") from None
                await asyncio.sleep(0.02)


@dataclass(frozen=True, slots=True)
class _Start:
    """What every way of starting a box needs."""

    image: GuestImage
    world: str
    key: str
    """The machine's shape (``template_key``): a checkpoint loads only into its own."""
    tmp: int
    proxy: Path | None
