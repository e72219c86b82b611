"""Reading a shell command well enough to judge it: words, pipelines, wrapped commands.

This is not a shell parser. It errs towards seeing too much (a quoted string that
might be code is read as code too), which suits a gate that refuses: a false alarm
costs an approval, a miss costs a machine.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

_IFS = re.compile(r"\$(?:\{IFS\}|IFS)(?:\$\d|\$\{\d\})?")
"""``${IFS}`` (and ``$IFS$9``) spell a space to the shell: ``rm${IFS}-rf${IFS}/``."""
_INNER = re.compile(r"\$\(|<\(|>\(|`|\n")
"""Where a command runs inside another (substitutions) or after it (new lines)."""
_BRACES = re.compile(r"\{([^{},]*(?:,[^{},]*)+)\}")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_PUNCTUATION = frozenset("();<>|&")
_KEYWORDS = frozenset({"!", "{", "}", "if", "then", "else", "elif", "while", "until", "do", "time"})
_EXECUTORS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "su", "runuser"}
    | {"ssh", "parallel", "script", "tmux", "screen"}
)
_EXEC_FLAGS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})

Pipeline = list[list[str]]
"""The words of each command of a pipeline (``a | b``), redirections left out."""

_SUDO_VALUES = frozenset({
    "-u", "-g", "-p", "-C", "-D", "-h", "-r", "-t", "-T", "-U", "--user", "--group", "--chdir",
})  # fmt: skip
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    # program → (its options that take a value, positional arguments before the command)
    "sudo": (_SUDO_VALUES, 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p", "--class", "--classdata"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "xargs": (
        frozenset({"-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "--arg-file", "--delimiter"}),
        0,
    ),
    "watch": (frozenset({"-n", "--interval"}), 0),
    "flock": (frozenset({"-w", "-E", "--timeout"}), 1),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "strace": (frozenset({"-o", "-p", "-e", "-s", "-u"}), 0),
    **dict.fromkeys(
        ["nohup", "time", "command", "builtin", "exec", "setsid", "unbuffer", "busybox", "eval"],
        (frozenset[str](), 0),
    ),
}


def flatten(command: str) -> str:
    r"""The command with quotes and backslashes dropped and spaces collapsed.

    Patterns read this text, so ``'r''m' -rf "/"`` and ``r\\m -rf /`` look alike.
    """
    text = _IFS.sub(" ", command)
    return " ".join(text.replace('"', "").replace("'", "").replace("\\", "").split())


def words(text: str, *, lenient: bool = True) -> list[str]:
    """Split ``text`` as the shell would (quotes, escapes), operators apart.

    Unbalanced quotes raise ``ValueError``, unless ``lenient``: then the text is
    read without its quotes (judging it beats giving up on it).
    """
    text = _IFS.sub(" ", text)
    try:
        return _lex(text)
    except ValueError:
        if not lenient:
            raise
        return _lex(flatten(text))


def pipelines(command: str) -> list[Pipeline]:
    """The pipelines in ``command``, including those in substitutions and new lines.

    ``$(…)``, backticks and ``<(…)`` are cut out as commands of their own: what they
    run is judged like anything else.
    """
    found: list[Pipeline] = []
    stage: list[str] = []
    pipeline: Pipeline = []
    tokens = words(_INNER.sub(" ; ", command))
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not token or not set(token) <= _PUNCTUATION:
            stage.extend(_expand_braces(token))
            continue
        operator = token.replace("(", "").replace(")", "")
        if not operator:
            continue  # grouping only: (a; b) | c still pipes into c
        if "<" in operator or ">" in operator:
            if stage and stage[-1].isdigit():
                stage.pop()  # the descriptor of 2>&1
            index += 1  # the target, which is not a word of the command
        elif operator in ("|", "|&"):
            pipeline.append(stage)
            stage = []
        else:
            pipeline.append(stage)
            found.append([s for s in pipeline if s])
            stage, pipeline = [], []
    pipeline.append(stage)
    found.append([s for s in pipeline if s])
    return [p for p in found if p]


def commands_in(stage: list[str]) -> Iterator[tuple[str, list[str]]]:
    """Each program ``stage`` runs, with its arguments, wrapped ones included.

    ``sudo -u root rm …`` runs ``sudo`` and ``rm``; ``find … -exec rm`` runs both too.
    Programs are named by their base name, so ``/bin/rm`` is ``rm``.
    """
    pending = [stage]
    while pending:
        words = pending.pop()
        index = 0
        while index < len(words) and (words[index] in _KEYWORDS or _ASSIGNMENT.match(words[index])):
            index += 1
        if index >= len(words):
            continue
        program, args = basename(words[index]), words[index + 1 :]
        yield program, args
        if program in _WRAPPERS:
            takes_value, positional = _WRAPPERS[program]
            at = 0
            while at < len(args) and (args[at].startswith("-") or _ASSIGNMENT.match(args[at])):
                at += 2 if args[at] in takes_value else 1
            pending.append(args[at + positional :])  # its own -exec is found from there
            continue
        # Only the first -exec: the command after it is read in turn, and finds the next
        # (reading every one from here would take exponential time on a crafted chain).
        for at, arg in enumerate(args):
            if arg in _EXEC_FLAGS:
                pending.append(args[at + 1 :])
                break


def embedded(stage: list[str]) -> Iterator[tuple[str, bool]]:
    """Words of ``stage`` that may be commands themselves, and whether a shell runs them.

    Any word holding spaces or shell operators may be code (``eval "…"``,
    ``ssh host "…"``); one after a ``-c`` flag (``sh -c reboot``) is run for sure.
    """
    for at, word in enumerate(stage):
        after_c = bool(at) and re.fullmatch(r"-[a-zA-Z]*c", stage[at - 1]) is not None
        if after_c or any(c.isspace() or c in _PUNCTUATION or c == "`" for c in word):
            yield word, after_c


def runs_its_arguments(program: str) -> bool:
    """Whether ``program`` runs (some of) its arguments as commands."""
    return program in _WRAPPERS or program in _EXECUTORS


def basename(word: str) -> str:
    """The program a word names: ``/usr/bin/rm`` → ``rm``."""
    return word.rsplit("/", 1)[-1]


def short_flags(args: list[str]) -> str:
    """Every single-letter flag in ``args`` (``-rf -v`` → ``rfv``), up to ``--``."""
    flags = []
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and not arg.startswith("--"):
            flags.append(arg[1:])
    return "".join(flags)


def operands(args: list[str]) -> list[str]:
    """The arguments that are not options (everything after ``--`` is an operand)."""
    found: list[str] = []
    for at, arg in enumerate(args):
        if arg == "--":
            return found + args[at + 1 :]
        if not arg.startswith("-") or arg == "-":
            found.append(arg)
    return found


def _lex(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""  # read what follows a '#' too: better judged than skipped
    return list(lexer)


def _expand_braces(word: str) -> list[str]:
    """``{rm,-rf,/}`` → three words and ``/{etc,usr}`` → two, as the shell expands them.

    Capped, since ``{a,b}`` repeated thirty times would be a billion words.
    """
    results = [word]
    for _ in range(8):
        expanded: list[str] = []
        for item in results:
            match = _BRACES.search(item)
            if match is None:
                expanded.append(item)
                continue
            head, tail = item[: match.start()], item[match.end() :]
            expanded += [head + alt + tail for alt in match.group(1).split(",")]
        if expanded == results or len(expanded) > 256:
            break
        results = expanded
    return results
