"""The pack's gate: a person approves what pushes or publishes, and what acts outside for good.

Stricter defaults than Helix's own approval gate, read from facets and command text,
never from tool names:

- a command (a tool declaring a ``command`` facet) that pushes or publishes (``git
  push``, ``npm publish``, ``twine upload``, ``cargo publish``, ``docker push``…) is
  asked about, even where the blueprint allows commands in general;
- a tool whose effect is ``external`` (done for good, like ``deliver``'s push) is
  asked about.

The blueprint's approval rules still decide when they say so for the call: the first
rule that matches it (as the approval gate matches them) decides, if it names the
tool (not ``*``) and, for a command, has a ``when`` pattern (a rule written for those
commands, not a blanket ``allow``). Otherwise this gate asks; an unattended run's ask
is a deny.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from helix.gates import ApprovalRule, Decision, GateCall, GateContext

_SPLIT = re.compile(r"&&|\|\||[;&|\n()`]|\$\(")
_WRAPPERS = frozenset({"sudo", "env", "command", "exec", "nohup", "time", "nice", "xargs"})
_GIT_OPTIONS_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_PUBLISHING: Mapping[str, tuple[frozenset[str], str]] = {
    "npm": (frozenset({"publish"}), "publishes an npm package"),
    "pnpm": (frozenset({"publish"}), "publishes an npm package"),
    "yarn": (frozenset({"publish"}), "publishes an npm package"),
    "twine": (frozenset({"upload"}), "uploads a Python package"),
    "poetry": (frozenset({"publish"}), "publishes a Python package"),
    "flit": (frozenset({"publish"}), "publishes a Python package"),
    "hatch": (frozenset({"publish"}), "publishes a Python package"),
    "uv": (frozenset({"publish"}), "publishes a Python package"),
    "cargo": (frozenset({"publish"}), "publishes a crate"),
    "gem": (frozenset({"push"}), "publishes a gem"),
    "docker": (frozenset({"push"}), "pushes an image"),
    "podman": (frozenset({"push"}), "pushes an image"),
    "helm": (frozenset({"push"}), "pushes a chart"),
    "dotnet": (frozenset({"push"}), "publishes a package"),
    "mvn": (frozenset({"deploy"}), "deploys artifacts"),
    "gh": (frozenset({"release"}), "publishes a release"),
}
_GIT = {
    "push": "pushes with git",
    "send-email": "sends patches by email",
    "dcommit": "pushes with git svn",
}
_WORDS = re.compile(r"(?<![\w-])(push|publish|upload|dcommit|send-email|deploy)(?![\w-])")
_OPAQUE = re.compile(r"[$`\\]|(?<![\w-])eval(?![\w-])")
_PROGRAMS = re.compile(r"(?<![\w-])(git|" + "|".join(_PUBLISHING) + r")(?![\w-])")


def publishes(command: str) -> str | None:
    """What ``command`` pushes or publishes (``"pushes with git"``), or ``None``.

    Each simple command is read (past ``sudo``/``env``, variable assignments, git's
    global options); a command whose program is only known when it runs (``$g push``,
    ``eval``) counts when it names a publishing program and a publishing verb. A
    tripwire, not a proof: ``eval 'git pu''sh'`` is not seen (the approval gate still
    asks about every command that is not read-only).
    """
    for part in _SPLIT.split(command):
        try:
            words = shlex.split(part, comments=False)
        except ValueError:
            words = part.split()
        found = _simple(words)
        if found is not None:
            return found
    opaque = _OPAQUE.search(command) is not None  # what runs is decided when it runs
    if opaque and _WORDS.search(command) and _PROGRAMS.search(command):
        return "may push or publish (it names a publishing program and verb)"
    return None


def _simple(words: list[str]) -> str | None:
    while words and ("=" in words[0].split("/")[0] or words[0].rsplit("/", 1)[-1] in _WRAPPERS):
        words = words[1:]
        while words and words[0].startswith("-"):  # sudo -u x, env -i
            words = words[1:]
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if re.fullmatch(r"python[\d.]*", program) and args[:2] == ["-m", "twine"]:
        program, args = "twine", args[2:]
    if program == "git":
        return _git(args)
    rule = _PUBLISHING.get(program)
    if rule is not None and rule[0] & set(args):
        return rule[1]
    return None


def _git(args: list[str]) -> str | None:
    at = 0
    while at < len(args) and args[at].startswith("-"):
        at += 2 if args[at] in _GIT_OPTIONS_WITH_VALUE else 1
    rest = args[at:]
    if not rest:
        return None
    if rest[0] in _GIT:
        return _GIT[rest[0]]
    if rest[0] == "svn" and "dcommit" in rest[1:2]:
        return _GIT["dcommit"]
    return None


def _arguments(call: GateCall) -> dict[str, Any]:
    if call.parsed is not None:
        return call.parsed.model_dump()
    if call.tool is not None:
        try:
            return call.tool.validate(call.args).model_dump()
        except ValueError:
            pass
    return dict(call.args)


def _deciding_rule(
    call: GateCall, ctx: GateContext, args: Mapping[str, Any], *, needs_when: bool
) -> tuple[int, ApprovalRule] | None:
    for number, rule in enumerate(ctx.approvals, start=1):
        if rule.matches(call.name, args):
            if rule.tool == "*" or (needs_when and not rule.when):
                return None
            return number, rule
    return None


class PublishGate:
    """Asks a person about pushing, publishing and external effects (see the module)."""

    name = "engineering.publish"

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        """Decide on ``call``."""
        tool = call.tool
        if tool is None:
            return Decision("allow", "no such tool: the other gates decide")
        args = _arguments(call)
        facets = tool.facets
        if facets.command is not None:
            command = args.get(facets.command)
            what = publishes(command) if isinstance(command, str) else None
            if what is None:
                return Decision("allow", "the command neither pushes nor publishes")
            ruled = _deciding_rule(call, ctx, args, needs_when=True)
            if ruled is not None:
                return Decision("allow", f"the command {what}; approval rule {ruled[0]} decides")
            return Decision("ask", f"the command {what}: a person approves that first")
        if facets.effect == "external":
            ruled = _deciding_rule(call, ctx, args, needs_when=False)
            if ruled is not None:
                return Decision("allow", f"approval rule {ruled[0]} decides on {call.name}")
            return Decision(
                "ask", f"{call.name} acts outside the world for good: a person approves it first"
            )
        return Decision("allow", "no push, no publishing, no lasting external effect")
