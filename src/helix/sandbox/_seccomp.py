"""A seccomp filter for sandboxed commands, compiled here to classic BPF.

It refuses (``EPERM``) the system calls a build or a test never needs and an escape
often does: loading kernel code, mounting, new namespaces, tracing other processes,
reading their memory, ``bpf``, ``userfaultfd``, ``io_uring``, keyrings, clocks and
``reboot``. ``clone3`` answers ``ENOSYS`` so the C library falls back to ``clone``,
whose namespace flags the filter can see. Other architectures than x86-64 get no
filter (``program()`` returns ``None``), and calls from a foreign ABI are killed.
"""

from __future__ import annotations

import errno
import os
import platform
import struct

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_LD_ABS_W = 0x20
_JEQ = 0x15
_JGE = 0x35
_JSET = 0x45
_RET = 0x06
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000

REFUSED = {
    "ptrace": 101, "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166,
    "pivot_root": 155, "chroot": 161, "swapon": 167, "swapoff": 168, "reboot": 169,
    "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173,
    "init_module": 175, "delete_module": 176, "quotactl": 179, "lookup_dcookie": 212,
    "clock_settime": 227, "kexec_load": 246, "add_key": 248, "request_key": 249,
    "keyctl": 250, "unshare": 272, "move_pages": 279, "perf_event_open": 298,
    "name_to_handle_at": 303, "open_by_handle_at": 304, "clock_adjtime": 305,
    "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
    "finit_module": 313, "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442, "adjtimex": 159, "vhangup": 153, "uselib": 134,
}  # fmt: skip
"""x86-64 system call numbers refused with ``EPERM``."""

_CLONE = 56
_CLONE3 = 435
NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
NAMESPACE_FLAGS |= 0x20000000 | 0x40000000 | 0x00000080
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME."""


def program() -> bytes | None:
    """The compiled filter (``struct sock_filter[]``), or ``None`` on other machines."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    eperm = _ERRNO | errno.EPERM
    code: list[tuple[int, int, int, int]] = [
        (_LD_ABS_W, 0, 0, 4),  # the architecture
        (_JEQ, 1, 0, _AUDIT_ARCH_X86_64),
        (_RET, 0, 0, _KILL_PROCESS),
        (_LD_ABS_W, 0, 0, 0),  # the system call number
        (_JGE, 0, 1, _X32_BIT),
        (_RET, 0, 0, _KILL_PROCESS),
    ]
    numbers = sorted(REFUSED.values())
    for index, number in enumerate(numbers):
        # Jump to the EPERM return placed right after the list.
        code.append((_JEQ, len(numbers) - index - 1 + 3, 0, number))
    code += [
        (_JEQ, 1, 0, _CLONE3),
        (_JEQ, 3, 2, _CLONE),  # clone: check its flags; anything else: allow
        (_RET, 0, 0, _ERRNO | errno.ENOSYS),
        (_RET, 0, 0, eperm),
        (_RET, 0, 0, _ALLOW),
        (_LD_ABS_W, 0, 0, 16),  # clone's flags (low word of the first argument)
        (_JSET, 0, 1, NAMESPACE_FLAGS),
        (_RET, 0, 0, eperm),
        (_RET, 0, 0, _ALLOW),
    ]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in code)


def program_fd() -> int | None:
    """A memory file holding the filter, positioned at its start, for ``bwrap --seccomp``."""
    compiled = program()
    if compiled is None:
        return None
    fd = os.memfd_create("helix-seccomp", 0)  # not CLOEXEC-free: passed by pass_fds
    os.write(fd, compiled)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
