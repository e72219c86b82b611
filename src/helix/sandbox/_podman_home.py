"""Podman as Helix runs it: its own configuration, storage, seccomp profile and image.

Helix never reads or changes the host's podman configuration. It writes its own into
a directory of its own (``default_podman_dir()``: ``$XDG_CACHE_HOME/helix/podman``,
by default ``~/.cache/helix/podman``) and points the podman client at it with
``CONTAINERS_CONF``, ``CONTAINERS_STORAGE_CONF`` and ``CONTAINERS_REGISTRIES_CONF`` in
the client's environment only:

* ``containers.conf``: the ``runc`` runtime and the ``cgroupfs`` cgroup manager (crun
  and systemd do not work on every host), ulimits a container may be given, no
  network by default, no event log, file locks of its own (not the host's shared
  memory locks), and the same settings handed to ``conmon``'s clean-up command.
* ``storage.conf``: the ``vfs`` driver (overlay cannot mount an image layer shifted
  into a user namespace on every kernel; the image is a few kilobytes, so a copy per
  container costs nothing) in ``storage/`` beside it, and podman's run-time state in
  ``/run/helix-podman`` (root) or ``$XDG_RUNTIME_DIR/helix-podman``, which a reboot
  clears.
* ``seccomp.json``: the filter of the ``bwrap`` tier (``_seccomp.REFUSED``, namespace
  flags of ``clone`` refused, ``clone3`` answered ``ENOSYS``) in the OCI format.

No image registry is needed: the image is a skeleton root filesystem Helix writes as
a tar (mount points, the merged-``/usr`` links, an ``/etc/passwd`` and ``/etc/group``
naming root and nobody) and ``podman import``s once per storage, named by the hash of
its content. The host's ``/usr`` and a short list of ``/etc`` files are mounted into
each container read-only (``PodmanSandbox``). A lock file keeps two processes that
both find the image missing from importing it twice.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import platform
import shutil
import stat
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from helix._util import process_gone
from helix.errors import ConfigError

from ._seccomp import NAMESPACE_FLAGS, REFUSED

LABEL = "io.helix.sandbox=podman"
"""The label of every container Helix runs (``podman ps -a --filter label=…`` finds them)."""
OWNER_LABEL = "io.helix.owner"
"""The label naming the Helix process a container belongs to (``process_mark``)."""

IMAGE_REPOSITORY = "localhost/helix-sandbox"
_SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_MOUNT_POINTS = ("usr", "etc", "tmp", "proc", "dev", "sys", "run", ".helix")
_PASSWD = (
    "root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/tmp:/usr/sbin/nologin\n"
)
_GROUP = "root:x:0:\nnogroup:x:65534:\n"
_ULIMITS = ("nofile=20000:20000", "nproc=32768:32768")
"""The default ulimits podman would set fail with ``EPERM`` on some hosts: these do not."""
_COMMAND_TIMEOUT_S = 120


def default_podman_dir(env: dict[str, str] | None = None) -> Path:
    """Where Helix keeps podman's configuration and storage: a per-user cache folder."""
    env = dict(os.environ) if env is None else env
    cache = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(cache) / "helix" / "podman"


def _run_dir() -> Path:
    """Podman's run-time state (locks, container state): somewhere a reboot clears."""
    if os.geteuid() == 0 and os.access("/run", os.W_OK):
        return Path("/run/helix-podman")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "helix-podman"
    return Path(tempfile.gettempdir()) / f"helix-podman-{os.geteuid()}"


def _own_dir(path: Path) -> Path:
    """``path`` made private to this user, refusing one another user made (or a link)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.geteuid():
        raise ConfigError(f"{path} is not a directory of this user's: podman cannot use it")
    return path


@dataclass(frozen=True, slots=True)
class PodmanHome:
    """Helix's podman directory, written and ready: the client's environment, the image."""

    folder: Path
    binary: str
    image: str
    seccomp: Path | None

    def client_env(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` (a scrubbed environment) plus the variables naming Helix's config."""
        env = dict(base)
        env["CONTAINERS_CONF"] = str(self.folder / "containers.conf")
        env["CONTAINERS_STORAGE_CONF"] = str(self.folder / "storage.conf")
        env["CONTAINERS_REGISTRIES_CONF"] = str(self.folder / "registries.conf")
        if "XDG_RUNTIME_DIR" in os.environ:  # a rootless podman finds its session by it
            env["XDG_RUNTIME_DIR"] = os.environ["XDG_RUNTIME_DIR"]
        return env

    def command(self, *args: str, timeout_s: float = _COMMAND_TIMEOUT_S) -> str:
        """Run ``podman ARGS`` with Helix's configuration; its output, or ``ConfigError``."""
        env = self.client_env({"PATH": os.environ.get("PATH") or "/usr/bin:/bin"})
        try:
            done = subprocess.run(
                [self.binary, *args],
                capture_output=True,
                text=True,
                env=env,
                timeout=timeout_s,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ConfigError(f"podman {args[0]} failed: {error}") from error
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise ConfigError(f"podman {args[0]} failed: {detail[-1] if detail else done}"[:400])
        return done.stdout


def reap_orphans(home: PodmanHome) -> list[str]:
    """Remove the containers of Helix processes that ended without closing them.

    A Helix killed with ``kill -9`` (or crashed) leaves its boxes running: a container
    whose ``OWNER_LABEL`` names a process that has ended is removed here, on a later
    Helix's first use of podman. A container of a live process, or without the label,
    is left alone. The names removed.
    """
    owner = "{{index .Labels " + f'"{OWNER_LABEL}"' + "}}"
    try:
        listing = home.command(
            "ps", "--all", "--filter", f"label={LABEL}", "--format", "{{.Names}} " + owner
        )
    except ConfigError:
        return []
    removed = []
    for line in listing.splitlines():
        name, _, mark = line.partition(" ")
        if name and process_gone(mark):
            try:
                home.command("rm", "--force", "--time", "0", name)
            except ConfigError:
                continue
            removed.append(name)
    return removed


def prepare(folder: Path) -> PodmanHome:
    """Write Helix's podman configuration in ``folder`` and import the image if missing."""
    binary = shutil.which("podman")
    if binary is None:
        raise ConfigError("podman is not installed (apt-get install podman runc)")
    search = f"{os.environ.get('PATH', '')}:/usr/sbin:/usr/bin:/sbin:/bin"
    if shutil.which("runc", path=search) is None:
        raise ConfigError("runc is not installed (apt-get install runc)")
    folder = _own_dir(folder)
    run = _own_dir(_run_dir())
    seccomp = _seccomp_profile()
    files = {
        "containers.conf": _containers_conf(folder, run),
        "storage.conf": _storage_conf(folder, run),
        "registries.conf": "unqualified-search-registries = []\n",
    }
    if seccomp is not None:
        files["seccomp.json"] = seccomp
    for name, text in files.items():
        _write_if_changed(folder / name, text)
    skeleton = skeleton_tar()
    tag = f"{IMAGE_REPOSITORY}:{hashlib.sha256(skeleton).hexdigest()[:16]}"
    home = PodmanHome(folder, binary, tag, folder / "seccomp.json" if seccomp else None)
    with open(folder / "image.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be importing it now
        if not home.command("images", "--quiet", "--filter", f"reference={tag}").strip():
            tar = folder / "skeleton.tar"
            tar.write_bytes(skeleton)
            home.command("import", "--quiet", str(tar), tag)
            tar.unlink()
    return home


def _write_if_changed(path: Path, text: str) -> None:
    """Write ``path`` atomically, only when its content differs (several processes read it)."""
    try:
        if path.read_text() == text:
            return
    except OSError:
        pass
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(text)
    partial.replace(path)


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def _containers_conf(folder: Path, run: Path) -> str:
    path = os.environ.get("PATH") or "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    conmon_env = [
        f"PATH={path}",
        f"CONTAINERS_CONF={folder / 'containers.conf'}",
        f"CONTAINERS_STORAGE_CONF={folder / 'storage.conf'}",
        f"CONTAINERS_REGISTRIES_CONF={folder / 'registries.conf'}",
    ]
    return (
        "# Written by Helix for its podman sandbox tier; rewritten when it differs.\n"
        "[containers]\n"
        f"default_ulimits = {_toml_list(list(_ULIMITS))}\n"
        'netns = "none"\n'
        'log_driver = "none"\n'
        "[engine]\n"
        'runtime = "runc"\n'
        'cgroup_manager = "cgroupfs"\n'
        'events_logger = "none"\n'
        'lock_type = "file"\n'
        f"tmp_dir = {json.dumps(str(run / 'libpod'))}\n"
        f"volume_path = {json.dumps(str(folder / 'volumes'))}\n"
        f"conmon_env_vars = {_toml_list(conmon_env)}\n"
        "[network]\n"
        f"network_config_dir = {json.dumps(str(folder / 'networks'))}\n"
    )


def _storage_conf(folder: Path, run: Path) -> str:
    return (
        "# Written by Helix for its podman sandbox tier; rewritten when it differs.\n"
        "[storage]\n"
        'driver = "vfs"\n'
        f"graphroot = {json.dumps(str(folder / 'storage'))}\n"
        f"runroot = {json.dumps(str(run / 'storage'))}\n"
    )


def _seccomp_profile() -> str | None:
    """The ``bwrap`` tier's seccomp filter as an OCI profile (x86-64 only, else ``None``)."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    refused = sorted(REFUSED, key=REFUSED.__getitem__)
    rules: list[dict[str, object]] = [
        {"names": refused, "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},  # ENOSYS
    ]
    for bit in range(32):
        flag = 1 << bit
        if NAMESPACE_FLAGS & flag:  # one rule per flag: any of them set is refused
            rules.append(
                {
                    "names": ["clone"],
                    "action": "SCMP_ACT_ERRNO",
                    "errnoRet": 1,
                    "args": [
                        {"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}
                    ],
                }
            )
    profile = {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64"],
        "syscalls": rules,
    }
    return json.dumps(profile, indent=1) + "\n"


def skeleton_tar() -> bytes:
    """The image's root filesystem: mount points, the system links, passwd and group.

    Deterministic (fixed times and owners), so its hash names the image.
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:

        def add(name: str, kind: bytes, mode: int, data: bytes = b"", link: str = "") -> None:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.linkname, info.size = kind, mode, link, len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)

        for name in _MOUNT_POINTS:
            add(name, tarfile.DIRTYPE, 0o755)
        for name in _SYSTEM_LINKS:
            host = f"/{name}"
            if os.path.islink(host):
                add(name, tarfile.SYMTYPE, 0o777, link=os.readlink(host))
            elif os.path.isdir(host):
                add(name, tarfile.DIRTYPE, 0o755)  # not merged: mounted from the host
        add("etc/passwd", tarfile.REGTYPE, 0o644, _PASSWD.encode())
        add("etc/group", tarfile.REGTYPE, 0o644, _GROUP.encode())
    return buffer.getvalue()


def system_dirs() -> list[str]:
    """Host system folders mounted read-only: ``/usr``, and ``/bin``, ``/lib`` if not links."""
    dirs = ["/usr"]
    for name in _SYSTEM_LINKS:
        host = f"/{name}"
        if os.path.isdir(host) and not os.path.islink(host):
            dirs.append(host)
    return dirs
