"""The microVM's guest image: a Debian kernel and an initramfs Helix builds from the host.

The kernel is Debian's own package, extracted (``dpkg-deb -x``) into
``kernel_dir()``: ``$HELIX_MICROVM_KERNEL`` if set, else ``kernel/`` in Helix's
microVM folder (``default_microvm_dir()``: ``$XDG_CACHE_HOME/helix/microvm``). Helix
never downloads it; ``KERNEL_HELP`` says how to put it there (``.ci/run`` does).
From the package Helix takes the compressed kernel, whose ELF payload it unpacks
(QEMU boots an uncompressed kernel directly, by PVH: no decompression under
emulation), and the few modules the guest needs (``MODULES`` and what they depend on,
in dependency order). The initramfs (an uncompressed ``newc`` archive, written here)
holds a static busybox, the init and the guest agent (``_microvm_guest``), those
modules, the merged-``/usr`` links and a small ``/etc``: everything else the guest
runs is the host's ``/usr``, shared read-only. Both files are built once per content
(their hash names the folder) under a lock, so concurrent first uses build them once.
"""

from __future__ import annotations

import fcntl
import hashlib
import lzma
import os
import shutil
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from helix.errors import ConfigError

from ._microvm_guest import AGENT, INIT

MODULES = ("virtio_mmio", "virtio_console", "9pnet_fd", "9p")
"""The modules the guest loads (with their dependencies): its devices and file system."""
KERNEL_HELP = (
    "put an extracted Debian kernel package there: apt-get download"
    " linux-image-6.1.0-NN-amd64 (the release's newest; `apt-cache depends"
    " linux-image-amd64` names it) and dpkg-deb -x linux-image-*.deb DIR"
)
_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_XZ_MAGIC = b"\xfd7zXZ\x00"


def default_microvm_dir(env: dict[str, str] | None = None) -> Path:
    """Where Helix keeps the microVM tier's files: a per-user cache folder."""
    env = dict(os.environ) if env is None else env
    cache = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(cache) / "helix" / "microvm"


def kernel_dir(folder: Path) -> Path:
    """Where the extracted kernel package is looked for."""
    override = os.environ.get("HELIX_MICROVM_KERNEL")
    return Path(override) if override else folder / "kernel"


@dataclass(frozen=True, slots=True)
class GuestImage:
    """A built guest: the uncompressed kernel and the initramfs, and the kernel's release."""

    kernel: Path
    initramfs: Path
    release: str


def _find_kernel(package: Path) -> tuple[Path, Path, str]:
    """The compressed kernel, its modules folder and its release, in an extracted package."""
    kernels = sorted((package / "boot").glob("vmlinuz-*")) if (package / "boot").is_dir() else []
    for vmlinuz in reversed(kernels):
        release = vmlinuz.name.removeprefix("vmlinuz-")
        for base in (package / "lib" / "modules", package / "usr" / "lib" / "modules"):
            if (base / release / "kernel").is_dir():
                return vmlinuz, base / release, release
    raise ConfigError(f"no guest kernel in {package}: {KERNEL_HELP}")


def _busybox() -> Path:
    """The host's static busybox (``busybox-static``): the guest runs it before ``/usr``."""
    found = shutil.which("busybox", path="/usr/bin:/bin:/usr/sbin:/sbin")
    if found is None or not _is_static(Path(found)):
        raise ConfigError("a static busybox is not installed (apt-get install busybox-static)")
    return Path(found)


def _is_static(path: Path) -> bool:
    """Whether an ELF executable has no interpreter (no ``PT_INTERP`` program header)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:  # 64-bit only
            return False
        (phoff,) = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    return all(struct.unpack_from("<I", table, i * phentsize)[0] != 3 for i in range(phnum))


def unpack_kernel(vmlinuz: bytes) -> bytes:
    """The ELF kernel inside a bzImage compressed with xz (Debian's amd64 kernels)."""
    at = vmlinuz.find(_XZ_MAGIC)
    while at >= 0:
        try:
            elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(vmlinuz[at:])
        except lzma.LZMAError:
            elf = b""
        if elf[:4] == b"\x7fELF":
            return elf
        at = vmlinuz.find(_XZ_MAGIC, at + 1)
    raise ConfigError("the guest kernel is not an xz-compressed bzImage Helix can unpack")


def _module_files(modules: Path) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for path in (modules / "kernel").rglob("*.ko*"):
        name = path.name.split(".ko")[0].replace("-", "_")
        files.setdefault(name, path)
    return files


def _module_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return lzma.decompress(data) if path.name.endswith(".xz") else data


def _depends(module: bytes) -> list[str]:
    at = module.find(b"\0depends=")
    if at < 0:
        return []
    field = module[at + 9 : module.index(b"\0", at + 9)].decode()
    return [d.replace("-", "_") for d in field.split(",") if d]


def modules_in_order(modules: Path, wanted: tuple[str, ...] = MODULES) -> list[tuple[str, bytes]]:
    """``wanted`` and their dependencies, each after what it depends on."""
    files = _module_files(modules)
    done: dict[str, bytes] = {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in done or name in path:
            return
        if name not in files:
            raise ConfigError(f"the guest kernel has no module {name} ({modules})")
        data = _module_bytes(files[name])
        for dep in _depends(data):
            visit(dep, (*path, name))
        done[name] = data

    for name in wanted:
        visit(name, ())
    return list(done.items())


class _Cpio:
    """An uncompressed ``newc`` archive, the kernel's initramfs format."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.ino = 1

    def add(self, name: str, mode: int, data: bytes = b"", rdev: tuple[int, int] = (0, 0)) -> None:
        self.ino += 1
        encoded = name.encode() + b"\0"
        fields = (self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, *rdev, len(encoded), 0)
        head = b"070701" + b"".join(f"{v:08x}".encode() for v in fields) + encoded
        self.parts += [head, b"\0" * (-len(head) % 4), data, b"\0" * (-len(data) % 4)]

    def directory(self, name: str) -> None:
        self.add(name, 0o040755)

    def file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        self.add(name, 0o100000 | mode, data)

    def link(self, name: str, target: str) -> None:
        self.add(name, 0o120777, target.encode())

    def finish(self) -> bytes:
        self.add("TRAILER!!!", 0)
        return b"".join(self.parts)


def _etc_files() -> Iterator[tuple[str, bytes]]:
    uid, gid = os.getuid(), os.getgid()
    passwd = "root:x:0:0:root:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/tmp:/bin/sh\n"
    group = "root:x:0:\nnogroup:x:65534:\n"
    if uid not in (0, 65534):
        passwd += f"helix:x:{uid}:{gid}:helix:/tmp:/bin/sh\n"
        group += f"helix:x:{gid}:\n"
    yield "etc/passwd", passwd.encode()
    yield "etc/group", group.encode()
    yield "etc/hosts", b"127.0.0.1 localhost\n::1 localhost\n"
    yield "etc/hostname", b"helix-microvm\n"
    yield "etc/nsswitch.conf", b"passwd: files\ngroup: files\nhosts: files\n"


def initramfs(busybox: bytes, modules: list[tuple[str, bytes]]) -> bytes:
    """The guest's initramfs: busybox, init, agent, modules, links and ``/etc``."""
    cpio = _Cpio()
    for name in ("dev", "proc", "sys", "run", "tmp", "usr", "etc", "helix", "helix/modules.d"):
        cpio.directory(name)
    cpio.add("dev/console", 0o020600, rdev=(5, 1))
    cpio.add("dev/null", 0o020666, rdev=(1, 3))
    for name in _LINKS:
        host = f"/{name}"
        if os.path.islink(host):
            cpio.link(name, os.readlink(host))
        elif os.path.isdir(host):
            raise ConfigError(
                f"the microvm tier needs a merged /usr ({host} is a folder, not a link)"
            )
    cpio.file("init", INIT.encode(), 0o755)
    cpio.file("helix/busybox", busybox, 0o755)
    cpio.file("helix/agent.py", AGENT.encode())
    cpio.file("helix/modules", "".join(f"{n}.ko\n" for n, _ in modules).encode())
    for name, data in modules:
        cpio.file(f"helix/modules.d/{name}.ko", data)
    for name, data in _etc_files():
        cpio.file(name, data)
    return cpio.finish()


def prepare(folder: Path) -> GuestImage:
    """The guest image for the kernel in ``kernel_dir(folder)``, built if missing."""
    vmlinuz, modules_dir, release = _find_kernel(kernel_dir(folder))
    busybox = _busybox().read_bytes()
    modules = modules_in_order(modules_dir)
    digest = hashlib.sha256()
    for part in (vmlinuz.read_bytes(), busybox, INIT.encode(), AGENT.encode()):
        digest.update(hashlib.sha256(part).digest())
    for name, data in modules:
        digest.update(name.encode() + hashlib.sha256(data).digest())
    for name, data in _etc_files():
        digest.update(name.encode() + data)
    for name in _LINKS:
        digest.update(f"{name}:{os.path.islink(f'/{name}') and os.readlink(f'/{name}')}".encode())
    folder.mkdir(parents=True, exist_ok=True)
    built = folder / "images" / digest.hexdigest()[:16]
    image = GuestImage(built / "vmlinux", built / "initramfs.cpio", release)
    if image.kernel.is_file() and image.initramfs.is_file():
        return image
    with open(folder / "image.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building it now
        if image.kernel.is_file() and image.initramfs.is_file():
            return image
        partial = built.with_name(f".{built.name}.{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        (partial / "vmlinux").write_bytes(unpack_kernel(vmlinuz.read_bytes()))
        (partial / "initramfs.cpio").write_bytes(initramfs(busybox, modules))
        shutil.rmtree(built, ignore_errors=True)
        partial.rename(built)
    return image
