"""Asking the person at the terminal about a tool call: a clear question, a clear answer.

The question names the call and why it is asked; ``y``/``yes`` allows, ``n``/``no``
denies, and anything else (a bare Enter too) asks again. An options card is answered
with an option's number (or its id); anything else asks again. The end of input (Ctrl-D, or
a closed stdin) is ``None``: nobody is there to answer. Lines are read on the event
loop (not in a thread), so a Ctrl-C or the run ending meanwhile leaves nothing blocked.

A tool source's question (``reply_to``) is answered the same way, then field by field:
each value is typed and checked against its schema as it is given (asked again if it
does not fit), an empty line skips a field that is not required, and the end of input
is still ``None`` (nothing is sent half-answered).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any, Literal, TextIO

if TYPE_CHECKING:
    from rich.console import Console

Answer = Literal["allow", "deny"]

YES = frozenset({"y", "yes"})
NO = frozenset({"n", "no"})
QUESTION = "Allow it? [y]es / [n]o: "
ANSWER_IT = "Answer it? [y]es / [n]o (decline): "
Reply = tuple[Answer, dict[str, Any] | None]
"""A decision, and a question's answer (``None`` for a call's decision or a decline)."""


class NoAnswer(Exception):
    """The input ended while a question waited for an answer."""


AGAIN = "Please answer y (allow) or n (deny); Ctrl-C leaves the run to be answered later."


async def read_line(stream: TextIO | None = None) -> str | None:
    """One line from ``stream`` (stdin by default), without its newline; ``None`` at its end."""
    stream = sys.stdin if stream is None else stream
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor (a test's StringIO)
        line = stream.readline()
        return line.rstrip("\r\n") if line else None
    loop = asyncio.get_running_loop()
    chunks: list[bytes] = []
    while True:
        ready: asyncio.Future[None] = loop.create_future()
        try:
            loop.add_reader(fd, _wake, ready)
        except (OSError, ValueError, NotImplementedError):  # a regular file: never blocks
            line = await asyncio.to_thread(stream.readline)
            return line.rstrip("\r\n") if line else None
        try:
            await ready
        finally:
            loop.remove_reader(fd)
        byte = os.read(fd, 1)  # one at a time: what follows the line stays unread
        if not byte:  # the end: Ctrl-D on an empty line, or a closed pipe
            return _decode(chunks) if chunks else None
        if byte == b"\n":
            return _decode(chunks)
        chunks.append(byte)


def _typed(stream: TextIO | None) -> bool:
    """Whether answers come from a terminal, which shows them as they are typed."""
    stream = sys.stdin if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, OSError, ValueError):
        return False


def _wake(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


def _decode(chunks: list[bytes]) -> str:
    return b"".join(chunks).decode(errors="replace").rstrip("\r\n")


def answer_of(text: str) -> Answer | None:
    """``allow`` for y/yes, ``deny`` for n/no (any case, spaces around); else ``None``."""
    word = text.strip().lower()
    if word in YES:
        return "allow"
    if word in NO:
        return "deny"
    return None


async def ask(
    console: Console, stream: TextIO | None = None, question: str = QUESTION
) -> Answer | None:
    """Ask until the answer is clear; ``None`` when the input ends first."""
    while True:
        line = await _line(console, question, stream)
        if line is None:
            return None
        answer = answer_of(line)
        if answer is not None:
            return answer
        console.print(AGAIN, style="yellow", markup=False, highlight=False)


async def ask_option(console: Console, ids: list[str], stream: TextIO | None = None) -> str | None:
    """Ask for one of an options card's options (its number, or its id); ``None`` at the end."""
    while True:
        console.print(f"Your choice [1-{len(ids)}]: ", end="", style="bold yellow",
                      markup=False, highlight=False)  # fmt: skip
        with contextlib.suppress(Exception):
            console.file.flush()
        line = await read_line(stream)
        if line is None:
            console.print()
            return None
        if not _typed(stream):
            console.print(line, markup=False, highlight=False)
        word = line.strip()
        if word in ids:
            return word
        if word.isdigit() and 1 <= int(word) <= len(ids):
            return ids[int(word) - 1]
        console.print(
            f"Please answer with a number from 1 to {len(ids)}; Ctrl-C leaves the choice to"
            " be made later.", style="yellow", markup=False, highlight=False,
        )  # fmt: skip


async def reply_to(
    console: Console, question: dict[str, Any] | None, stream: TextIO | None = None
) -> Reply | None:
    """A call's decision, or a source's ``question`` answered field by field; ``None``: EOF."""
    if question is None:
        answer = await ask(console, stream)
        return None if answer is None else (answer, None)
    answer = await ask(console, stream, ANSWER_IT)
    if answer != "allow":
        return None if answer is None else ("deny", None)
    schema = question.get("schema") or {}
    required = set(schema.get("required") or [])
    content: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        value = await _field(console, stream, schema, name, spec, name in required)
        if value is _ENDED:
            return None
        if value is not _SKIPPED:
            content[name] = value
    return "allow", content


_ENDED = object()
_SKIPPED = object()


async def _field(
    console: Console,
    stream: TextIO | None,
    schema: dict[str, Any],
    name: str,
    spec: dict[str, Any],
    required: bool,
) -> Any:
    """One field's value, asked until it fits; ``_SKIPPED`` (empty, optional) or ``_ENDED``."""
    from helix.kernel.events import answer_problem, parse_field

    kind = "/".join(spec["enum"]) if spec.get("enum") else spec["type"]
    label = f"  {name} ({kind}{'' if required else ', Enter to skip'}): "
    one = {"type": "object", "properties": {name: spec}}
    while True:
        line = await _line(console, label, stream)
        if line is None:
            return _ENDED
        if line == "" and not required:
            return _SKIPPED
        try:
            value = parse_field(schema, name, line)
        except ValueError as error:
            problem: str | None = str(error)
        else:
            problem = answer_problem(one, {name: value})
        if problem is None:
            return value
        console.print(f"  {problem}", style="yellow", markup=False, highlight=False)


async def _line(console: Console, prompt: str, stream: TextIO | None) -> str | None:
    """Print ``prompt`` and read one line (echoed when not typed); ``None`` at the end."""
    console.print(prompt, end="", style="bold yellow", markup=False, highlight=False)
    with contextlib.suppress(Exception):
        console.file.flush()
    line = await read_line(stream)
    if line is None:
        console.print()  # the prompt's line ends
        return None
    if not _typed(stream):  # nobody saw it typed: the answer is echoed
        console.print(line, markup=False, highlight=False)
    return line
