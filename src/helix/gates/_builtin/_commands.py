"""The commands gate: shell commands too dangerous to run, whatever the sandbox.

A tripwire, not the boundary: shell is too rich to judge completely from its text
(``a=rm; $a -rf /``), so the sandbox confines what a command can reach. This gate
refuses what is plainly catastrophic or hostile, and says which commands only read.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from helix.gates._gate import Decision, GateCall, GateContext

from ._arguments import arguments_with_defaults
from ._command_rules import ARGUMENT_RULES, TEXT_RULES
from ._git_repo import repository_problem
from ._read_only import readers, reads_only
from ._shell import (
    Pipeline,
    basename,
    commands_in,
    embedded,
    flatten,
    operands,
    pipelines,
    runs_its_arguments,
    short_flags,
)

_MAX_DEPTH = 6
"""Commands quoted inside commands this deep are refused rather than half-read."""

_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff", "telinit"})
_POWER_VERBS = frozenset({"poweroff", "reboot", "halt", "kexec", "suspend", "hibernate"})
_FORMATTERS = frozenset({"mke2fs", "mkswap", "wipefs"})
_FETCHERS = frozenset({"curl", "wget", "fetch"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
_INTERPRETER = re.compile(r"(?:python|perl|ruby|node|php|lua)[\d.]*")
_NETWORK = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "openssl"})


class CommandsGate:
    """Refuses catastrophic command lines: those of tools declaring a ``command``.

    Refused: deleting or opening up ``/`` or a home directory, formatting or writing
    disks, fork bombs, reverse shells, piping downloads into a shell, reading
    credential files, shutting the machine down.
    """

    name: str = "commands"

    facets = frozenset({"command"})
    """The only tools this gate rules on (see ``Gate.facets``)."""

    async def __call__(self, call: GateCall, ctx: GateContext) -> Decision:
        """Decide on ``call``."""
        argument = call.tool.facets.command if call.tool is not None else None
        if argument is None:
            return Decision("allow", "not a shell command")
        command = arguments_with_defaults(call).get(argument)
        if not isinstance(command, str):
            return Decision("deny", f"{argument} must be a string")
        problem = dangerous(command)
        if problem is not None:
            return Decision("deny", f"refused: the command {problem}")
        if not reads_only(command):
            return Decision("allow", "no dangerous pattern; the command may change the world")
        doubt = git_doubt(command, ctx.world)
        if doubt is not None:
            reason = f"no dangerous pattern; {doubt}: the command may change the world"
            return Decision("allow", reason)
        return Decision("allow", "no dangerous pattern; the command only reads")


def is_read_only_command(command: str, world: Path | None = None) -> bool:
    """Whether ``command`` only reads: approval can let it run without asking.

    Conservative: only ``ls``, ``cat``, ``head``, ``tail``, ``wc``, ``grep``, ``rg``
    (without ``--pre``/``--hostname-bin``), ``find`` (without ``-exec``, ``-execdir``,
    ``-ok``, ``-okdir``, ``-delete``, ``-fprint*``, ``-fls``), ``pwd``, ``echo``,
    ``git status|log|diff|show|branch`` (``branch`` only listing), ``stat``, ``file``
    (without ``-C``), ``du``, ``tree`` (without ``-o``) and ``which``, by their bare
    names, chained with ``;``, ``&&``, ``||`` or ``|`` only to each other, with no
    redirection (but to ``/dev/null``), no substitution and no variable assignment.
    Anything else is "may write", and asks.

    ``git`` counts only with no global option but ``--no-pager``/``-P`` (so no ``-c``,
    ``--config-env``, ``-C``, ``--exec-path``, ``--git-dir``, ``--work-tree``,
    ``-p``/``--paginate``), no ``--output``, ``--ext-diff``, ``--textconv`` or
    ``--exec…`` option, and only when ``world``'s repository names no program git
    could run (``repository_problem``: a real ``.git`` folder, no executing key in its
    configuration, no hook, no nested repository). The repository is read on every
    call, since the world changes; without a ``world``, ``git`` never counts.

    Args:
        command: The shell command line, as a command tool would receive it.
        world: The run's world (absolute, resolved), where the command would run.

    Returns:
        ``True`` if the command is on the read-only list and refused by no rule.
    """
    return reads_only(command) and dangerous(command) is None and git_doubt(command, world) is None


def git_doubt(command: str, world: Path | None) -> str | None:
    """Why the ``git`` in read-only ``command`` may run a program, or ``None``."""
    programs = readers(command)
    if programs is None or "git" not in programs:
        return None
    if world is None:
        return "git reads a repository and no world was given to check"
    return repository_problem(world)


@lru_cache(maxsize=256)  # the commands and approval gates both ask about each command
def dangerous(command: str) -> str | None:
    """Why ``command`` must not run, or ``None`` if no rule here refuses it."""
    flat = flatten(command)
    for pattern, reason in TEXT_RULES:
        if pattern.search(flat):
            return reason
    return _structure(command, 0, strict=True)


def _structure(command: str, depth: int, strict: bool) -> str | None:
    """Rules on the commands ``command`` runs.

    ``strict`` is false for text that is only maybe code (a quoted phrase given to
    ``echo`` or ``git commit -m``): there, rules that need just a program's name
    ("reboot", "halt") would mistake prose for commands, so only rules that need
    telling arguments or pipes apply.
    """
    if depth > _MAX_DEPTH:
        return "nests commands too deeply to check"
    for pipeline in pipelines(command):
        problem = _pipeline(pipeline, strict)
        if problem is not None:
            return problem
        piped_to_shell = len(pipeline) > 1 and any(
            _runs_code(program) for stage in pipeline[1:] for program, _ in commands_in(stage)
        )
        for stage in pipeline:
            if piped_to_shell and stage is not pipeline[-1]:
                # `echo reboot | sh`: what the stage prints is what the shell runs.
                problem = _structure(" ".join(stage[1:]), depth + 1, strict)
                if problem is not None:
                    return problem
            runs = piped_to_shell or any(runs_its_arguments(p) for p, _ in commands_in(stage))
            for inner, after_c in embedded(stage):
                problem = _structure(inner, depth + 1, strict and (runs or after_c))
                if problem is not None:
                    return problem
    return None


def _pipeline(pipeline: Pipeline, strict: bool) -> str | None:
    programs: list[set[str]] = []
    for stage in pipeline:
        for at, word in enumerate(stage):
            rule = ARGUMENT_RULES.get(basename(word))
            problem = rule(stage[at + 1 :]) if rule is not None else None
            if problem is not None:
                return problem
        ran = set()
        for program, args in commands_in(stage):
            problem = _program(program, args) if strict else None
            if problem is not None:
                return problem
            ran.add(program)
        programs.append(ran)
    stdin_code = [any(_runs_stdin(p, a) for p, a in commands_in(stage)) for stage in pipeline]
    names = [{basename(w) for w in stage} for stage in pipeline]
    if any(names[i] & _FETCHERS and any(stdin_code[i + 1 :]) for i in range(len(pipeline))):
        return "pipes a download into a shell"
    if any(n & _NETWORK for n in names) and any(r & _SHELLS for r in programs):
        return "connects a shell to the network"
    return None


def _program(program: str, args: list[str]) -> str | None:
    """Rules on the program a command runs (not on words that merely mention it)."""
    if program in _POWER or (program == "init" and args[:1] in (["0"], ["6"])):
        return "shuts down or reboots the machine"
    if program == "systemctl" and _POWER_VERBS & set(args):
        return "shuts down or reboots the machine"
    if program.startswith("mkfs") or program in _FORMATTERS:
        return "formats a disk"
    if program == "kill" and "-1" in args[1:]:
        return "kills every process"
    return None


def _runs_code(program: str) -> bool:
    return program in _SHELLS or _INTERPRETER.fullmatch(program) is not None


def _runs_stdin(program: str, args: list[str]) -> bool:
    """Whether ``program`` runs code read from its input (``sh``, ``bash -s``, ``python3 -``).

    With a script or module to run (``python3 -m json.tool``), the input is data.
    """
    if not _runs_code(program):
        return False
    return "s" in short_flags(args) or "-" in args or not operands(args)
