"""How a microVM runs here: QEMU's binary, the guest image, KVM or TCG and why.

KVM is used when ``/dev/kvm`` is usable and the guest kernel boots under it (tried
once, with ``-cpu host``, into a busybox that powers off at once; the answer is
remembered in the microVM folder's ``accel.json``, keyed by the host's kernel, QEMU and
the guest image); else TCG emulation. ``HELIX_MICROVM_ACCEL=kvm|tcg`` forces one.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import subprocess
from functools import cache
from pathlib import Path

from helix.errors import ConfigError

from ._microvm_image import GuestImage, default_microvm_dir, prepare

_KVM_TRIAL_S = 20.0


def qemu_binary() -> str:
    """QEMU's x86-64 system emulator, or ``ConfigError`` naming the package."""
    found = shutil.which("qemu-system-x86_64", path=f"{os.environ.get('PATH', '')}:/usr/bin")
    if found is None or platform.machine() not in ("x86_64", "AMD64"):
        raise ConfigError("QEMU is not installed (apt-get install qemu-system-x86)")
    return found


@cache
def launcher() -> tuple[str, ...]:
    """What QEMU is started under: ``setpriv --pdeathsig KILL`` (util-linux), if there.

    So a QEMU outlives no Helix that dies without closing its boxes.
    """
    found = shutil.which("setpriv", path="/usr/bin:/bin")
    return (found, "--pdeathsig", "KILL", "--") if found else ()


@cache
def guest_image(folder: Path) -> GuestImage:
    return prepare(folder)


def tsc_khz() -> int:
    """The host's TSC rate in kHz (``/proc/cpuinfo``), for the emulated guest's clock."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("cpu MHz"):
                return int(float(line.split(":")[1]) * 1000)
    return 2_000_000


@cache
def accel(folder: Path | None = None) -> tuple[str, str]:
    """``("kvm" | "tcg", why)``: how guests are run here."""
    folder = folder or default_microvm_dir()
    forced = os.environ.get("HELIX_MICROVM_ACCEL", "")
    if forced in ("kvm", "tcg"):
        return forced, "asked for (HELIX_MICROVM_ACCEL)"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg", "no usable /dev/kvm: emulated (TCG)"
    key = f"{platform.release()} {qemu_binary()} {guest_image(folder).kernel}"
    remembered = folder / "accel.json"
    with contextlib.suppress(OSError, ValueError, KeyError):
        known = json.loads(remembered.read_text())
        if known["key"] == key:
            return str(known["accel"]), str(known["reason"])
    chosen = _try_kvm(folder)
    with contextlib.suppress(OSError):
        remembered.write_text(json.dumps({"key": key, "accel": chosen[0], "reason": chosen[1]}))
    return chosen


def detail() -> str:
    """How guests run here, for ``helix doctor``: the acceleration and why."""
    how, why = accel()
    return f"accel {how} ({why})" if how != "tcg" or "TCG" not in why else why


def _try_kvm(folder: Path) -> tuple[str, str]:
    """Boot the guest kernel under KVM into a busybox that powers off at once."""
    image = guest_image(folder)
    argv = [qemu_binary(), "-M", "microvm", "-accel", "kvm", "-cpu", "host", "-m", "256M"]
    argv += ["-nodefaults", "-no-user-config", "-display", "none", "-no-reboot", "-nic", "none"]
    argv += ["-kernel", str(image.kernel), "-initrd", str(image.initramfs)]
    argv += ["-append", "console=ttyS0 quiet panic=-1 rdinit=/helix/busybox -- poweroff -f"]
    try:
        done = subprocess.run(
            argv, capture_output=True, timeout=_KVM_TRIAL_S, check=False, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        return "tcg", "/dev/kvm is there but the guest kernel hangs under it: emulated (TCG)"
    if done.returncode != 0:
        last = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
        why = last[-1][:200] if last else f"exit {done.returncode}"
        return "tcg", f"/dev/kvm is there but QEMU fails under it ({why}): emulated (TCG)"
    return "kvm", "KVM runs the guest kernel"
