"""Asking the person at the terminal about a tool call: a clear question, a clear answer.

The question names the call and why it is asked; ``y``/``yes`` allows, ``n``/``no``
denies, and anything else (a bare Enter too) asks again. An options card is answered
with an option's number (or its id); anything else asks again. The end of input (Ctrl-D, or
a closed stdin) is ``None``: nobody is there to answer. Lines are read on the event
loop (not in a thread), so a Ctrl-C or the run ending meanwhile leaves nothing blocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import TYPE_CHECKING, Literal, TextIO

if TYPE_CHECKING:
    from rich.console import Console

Answer = Literal["allow", "deny"]

YES = frozenset({"y", "yes"})
NO = frozenset({"n", "no"})
QUESTION = "Allow it? [y]es / [n]o: "


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


async def ask(console: Console, stream: TextIO | None = None) -> Answer | None:
    """Ask until the answer is clear; ``None`` when the input ends first."""
    while True:
        console.print(QUESTION, end="", style="bold yellow", markup=False, highlight=False)
        with contextlib.suppress(Exception):
            console.file.flush()
        line = await read_line(stream)
        if line is None:
            console.print()  # the prompt's line ends
            return None
        if not _typed(stream):  # nobody saw it typed: the answer is echoed
            console.print(line, markup=False, highlight=False)
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
