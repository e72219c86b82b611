"""The commands gate's rules on text and on arguments (see ``_commands``)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from ._shell import operands, short_flags

TEXT_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    # Read on the flattened text, so quoting cannot hide them; each is specific
    # enough that meeting it anywhere, even in an argument, is reason to refuse.
    (re.compile(pattern), reason)
    for pattern, reason in [
        (
            r"/dev/(?:sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|disk\d|dm-\d|md\d"
            r"|mapper/|loop\d|mem\b|kmem\b|port\b)",
            "touches a raw disk or memory device",
        ),
        (r"/dev/(?:tcp|udp)/|/inet/(?:tcp|udp)/", "opens a raw network connection"),
        (r"--no-preserve-root", "disables rm's protection of /"),
        (
            r"\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|/etc/g?shadow\b"
            r"|\.netrc\b|\.git-credentials\b|\.pgpass\b|\.docker/config\.json|\.kube/config\b"
            r"|\.gnupg\b",
            "reads credential files",
        ),
        (
            r"(?:\bfunction\s+([\w:.-]+)|(?<![\w:.-])([\w:.-]+)\s*\(\s*\))\s*\{[^}]{0,200}?"
            r"(?:\1|\2)\s*[|&]\s*(?:\1|\2)",
            "is a fork bomb",
        ),
        (r"\bfork\s+while\s+fork\b", "is a fork bomb"),
        (
            r"(?:^|[\s;&|(])(?:[\w./-]*/)?(?:sh|bash|zsh|dash|ksh|fish|eval|source|\.|python[\d.]*"
            r"|perl|ruby|node|php)\s[^;&|]{0,300}?(?:\$\(|`|<\()\s*(?:[\w./-]*/)?(?:curl|wget|fetch)\b",
            "runs a downloaded script",
        ),
        (
            r"(?i)(?:\bsocket\b|\bfsockopen\b|\btcpsocket\b).{0,1000}?(?:\bdup2\b|pty\.spawn"
            r"|\bsubprocess\b"
            r"|\bexec\b|\bpopen\b|/bin/(?:ba)?sh\b)",
            "connects a shell to the network",
        ),
    ]
)


def _rm(args: list[str]) -> str | None:
    recursive = "--recursive" in args or any(c in "rR" for c in short_flags(args))
    if recursive and any(_root_like(target) for target in operands(args)):
        return "deletes / or a top-level or home directory recursively"
    return None


def _chmod(args: list[str]) -> str | None:
    recursive = "--recursive" in args or "R" in short_flags(args)
    for target in operands(args):
        if _root_like(target) and (recursive or posixpath.normpath(target) == "/"):
            return "changes the permissions or owner of / or a top-level or home directory"
    return None


def _mv(args: list[str]) -> str | None:
    if any(_root_like(source) for source in operands(args)[:-1]):
        return "moves / or a top-level or home directory"
    return None


def _find(args: list[str]) -> str | None:
    starts = []
    for arg in args:
        if arg.startswith(("-", "(", "!")):
            break
        starts.append(arg)
    acts = {"-delete", "-exec", "-execdir", "-ok", "-okdir"} & set(args)
    if acts and any(_root_like(start) for start in starts):
        return "deletes or runs commands across / or a top-level or home directory"
    return None


def _netcat(args: list[str]) -> str | None:
    executes = {"--exec", "--sh-exec", "--lua-exec"} & set(args)
    if executes or any(c in "ec" for c in short_flags(args)):
        return "connects a shell to the network"
    return None


def _socat(args: list[str]) -> str | None:
    if any(word in arg.lower() for arg in args for word in ("exec:", "system:")):
        return "connects a shell to the network"
    return None


ARGUMENT_RULES: dict[str, Callable[[list[str]], str | None]] = {
    # Each needs telling arguments, so it applies wherever its program's name appears
    # (after sudo, env, xargs or an unknown wrapper alike) at little risk of false alarms.
    "rm": _rm,
    "chmod": _chmod,
    "chown": _chmod,
    "chgrp": _chmod,
    "mv": _mv,
    "find": _find,
    "nc": _netcat,
    "ncat": _netcat,
    "netcat": _netcat,
    "socat": _socat,
}


def _root_like(target: str) -> bool:
    """Whether ``target`` is /, a directory right under it, a home, or above the world."""
    target = target.replace("${HOME}", "~").replace("$HOME", "~")
    if target.startswith("~"):
        _, _, rest = target.partition("/")
        return all(re.fullmatch(r"[.*?]*", part) for part in rest.split("/"))
    if target.startswith("/"):
        parts = [p for p in posixpath.normpath("/" + target.lstrip("/")).split("/") if p]
        while parts and re.fullmatch(r"[.*?]*", parts[-1]):
            parts.pop()  # /* and /x/* reach as far as / and /x
        return len(parts) <= 1
    return posixpath.normpath(target).split("/")[0] == ".."
