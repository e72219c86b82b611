"""The OCI bundle the gVisor tier hands to ``runsc``: a skeleton root and a hardened spec.

The root filesystem is a tiny directory Helix writes once per sandbox (mount points,
``/etc/passwd`` and ``/etc/group`` naming root and nobody, the merged-usr links), shown
read-only. On it: the host's ``/usr`` read-only, the few ``/etc`` files programs need
(the loader's cache, ``alternatives``, the CA certificates, Python's site files; never
``shadow`` nor any file other users may not read), a private ``/tmp`` (a tmpfs of
``tmp_bytes``, in the sandbox's memory), and the world read-write at its own path. The
process has no capabilities at all, cannot gain privileges, and runs under rlimits
enforced by gVisor's own kernel; its user is the world's owner (see ``box_user``).
"""

from __future__ import annotations

import os
import resource
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._seccomp import NAMESPACE_FLAGS, REFUSED

SANDBOX_HOSTNAME = "helix-sandbox"
HOME = "/tmp/home"
HELPERS = "/.helix"
"""Where Helix's own files are shown inside (the egress bridge, the proxy's socket)."""
PROXY_SOCKET = f"{HELPERS}/proxy.sock"
BRIDGE = f"{HELPERS}/bridge.py"

_NOBODY = 65534
_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_ETC = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl/certs",
    "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf", "nsswitch.conf",
    "localtime", "timezone", "python3", "python3.11", "python3.12", "python3.13",
    "mime.types", "os-release", "debian_version", "protocols", "services", "profile",
    "bash.bashrc", "inputrc", "magic", "gitconfig", "mailcap",
)  # fmt: skip
"""Host ``/etc`` entries shown read-only when present, world-readable and not links."""
_RLIMITS = {
    resource.RLIMIT_CPU: "RLIMIT_CPU",
    resource.RLIMIT_FSIZE: "RLIMIT_FSIZE",
    resource.RLIMIT_NOFILE: "RLIMIT_NOFILE",
    resource.RLIMIT_NPROC: "RLIMIT_NPROC",
    resource.RLIMIT_AS: "RLIMIT_AS",
}


def seccomp() -> dict[str, Any]:
    """The OCI seccomp filter gVisor's kernel applies to the command (``--oci-seccomp``).

    Helix's refused system calls (``_seccomp.REFUSED``), and ``clone`` with any
    namespace flag: inside gVisor a namespace is gVisor's own, but no command needs
    one and an escape would start there. This build answers ``EPERM`` to each (it
    ignores ``errnoRet``).
    """
    clone = [
        {
            "names": ["clone"],
            "action": "SCMP_ACT_ERRNO",
            "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}],
        }
        for flag in _flags(NAMESPACE_FLAGS)
    ]
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64"],
        "syscalls": [{"names": sorted(REFUSED), "action": "SCMP_ACT_ERRNO"}, *clone],
    }


def _flags(mask: int) -> list[int]:
    return [1 << bit for bit in range(32) if mask & (1 << bit)]


def box_user(world: Path) -> tuple[int, int]:
    """The ids commands run as: the caller's, or, for root, the world's owner.

    Helix running as root makes worlds root owns; a command as ``nobody`` could not
    write them. So under root the command takes the world's owner's ids (``nobody``
    when the world is not there yet): uid 0 only for a world root owns, and then with
    an empty capability set, no new privileges, inside gVisor's own kernel.
    """
    if os.geteuid() != 0:
        return os.getuid(), os.getgid()
    try:
        info = os.stat(world)
    except OSError:
        return _NOBODY, _NOBODY
    return info.st_uid, info.st_gid


def write_rootfs(rootfs: Path) -> None:
    """Write the skeleton root: mount points, users, the merged-usr links."""
    for name in ("usr", "etc", "tmp", "proc", "dev", "sys", HELPERS.strip("/")):
        (rootfs / name).mkdir(parents=True, exist_ok=True)
    for name in _LINKS:
        host = Path("/") / name
        if host.is_symlink() and not (rootfs / name).is_symlink():
            (rootfs / name).symlink_to(os.readlink(host))
        elif host.is_dir() and not host.is_symlink():
            (rootfs / name).mkdir(exist_ok=True)
    etc = rootfs / "etc"
    (etc / "passwd").write_text(
        "root:x:0:0:root:/tmp/home:/bin/sh\nnobody:x:65534:65534:nobody:/tmp/home:/bin/sh\n"
    )
    (etc / "group").write_text("root:x:0:\nnogroup:x:65534:\n")
    (etc / "hostname").write_text(SANDBOX_HOSTNAME + "\n")
    (etc / "hosts").write_text(f"127.0.0.1 localhost {SANDBOX_HOSTNAME}\n::1 localhost\n")
    for name in _ETC:
        host = Path("/etc") / name
        if host.is_symlink() and "/" not in name:
            target = os.readlink(host)
            if not (etc / name).is_symlink() and target.startswith("/usr/"):
                (etc / name).symlink_to(target)  # resolved inside, in the read-only /usr
        elif _shown(host):
            place = etc / name
            place.parent.mkdir(parents=True, exist_ok=True)
            if host.is_dir():
                place.mkdir(exist_ok=True)
            else:
                place.touch(exist_ok=True)


def mount_point(rootfs: Path, path: Path, *, directory: bool = True) -> None:
    """Make ``path``'s mount point in the skeleton (the root is read-only inside)."""
    place = rootfs / str(path).lstrip("/")
    if str(path).startswith("/tmp/") or str(path) == "/tmp":
        return  # made inside the /tmp tmpfs by gVisor itself
    if directory:
        place.mkdir(parents=True, exist_ok=True)
    else:
        place.parent.mkdir(parents=True, exist_ok=True)
        place.touch(exist_ok=True)


def _shown(path: Path) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return not stat.S_ISLNK(info.st_mode) and bool(info.st_mode & stat.S_IROTH)


def _bind(source: Path | str, destination: Path | str, *, writable: bool = False) -> dict[str, Any]:
    options = ["rbind", "rw" if writable else "ro", "nosuid", "nodev"]
    return {
        "destination": str(destination),
        "type": "bind",
        "source": str(source),
        "options": options,
    }


def spec(
    *,
    rootfs: Path,
    args: Sequence[str],
    env: Mapping[str, str],
    world: Path,
    tmp_bytes: int,
    memory_bytes: int,
    host_pids: int,
    limits: Mapping[int, int | None],
    hidden: Iterable[Path] = (),
    read_only: Iterable[Path] = (),
    helpers: Mapping[str, Path] | None = None,
) -> dict[str, Any]:
    """The ``config.json`` of a bundle running ``args`` in the world ``world``.

    ``helpers`` maps places under ``/.helix`` to host files bound there (the bridge
    read-only, the proxy's socket read-write); ``hidden`` are paths inside the world
    masked by an empty tmpfs (directories) or ``/dev/null`` (files).
    """
    mounts: list[dict[str, Any]] = [
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {
            "destination": "/tmp",
            "type": "tmpfs",
            "source": "tmpfs",
            "options": ["nosuid", "nodev", f"size={tmp_bytes}", "mode=1777"],
        },
        _bind("/usr", "/usr"),
    ]
    for name in _ETC:
        host = Path("/etc") / name
        if _shown(host):
            mounts.append(_bind(host, host))
    for path in read_only:
        mount_point(rootfs, path)
        mounts.append(_bind(path, path))
    mount_point(rootfs, world)
    mounts.append(_bind(world, world, writable=True))
    for path in hidden:
        if path == world or not path.is_relative_to(world) or not os.path.lexists(path):
            continue
        if path.is_symlink():
            continue
        if path.is_dir():
            mounts.append({"destination": str(path), "type": "tmpfs", "source": "tmpfs",
                           "options": ["ro", "size=4096", "mode=0555"]})  # fmt: skip
        else:
            mounts.append(_bind("/dev/null", path))
    for place, source in (helpers or {}).items():
        mount_point(rootfs, Path(place), directory=False)
        mounts.append(_bind(source, place, writable=place == PROXY_SOCKET))
    uid, gid = box_user(world)
    return {
        "ociVersion": "1.0.2",
        "process": process(args, env, cwd=world, user=(uid, gid), limits=limits),
        "root": {"path": str(rootfs), "readonly": True},
        "hostname": SANDBOX_HOSTNAME,
        "mounts": mounts,
        "linux": {
            "namespaces": [{"type": kind} for kind in ("pid", "network", "ipc", "uts", "mount")],
            "resources": {
                "memory": {"limit": memory_bytes},
                "pids": {"limit": host_pids},
            },
            "seccomp": seccomp(),
        },
    }


def process(
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: Path,
    user: tuple[int, int],
    limits: Mapping[int, int | None],
) -> dict[str, Any]:
    """The OCI process: no capabilities, no new privileges, the tier's rlimits."""
    rlimits = [
        {"type": _RLIMITS[which], "hard": value, "soft": value}
        for which, value in limits.items()
        if value is not None and which in _RLIMITS
    ]
    return {
        "terminal": False,
        "user": {"uid": user[0], "gid": user[1]},
        "args": list(args),
        "env": [f"{name}={value}" for name, value in env.items()],
        "cwd": str(cwd),
        "capabilities": {
            "bounding": [],
            "effective": [],
            "inheritable": [],
            "permitted": [],
            "ambient": [],
        },
        "noNewPrivileges": True,
        "rlimits": rlimits,
    }
