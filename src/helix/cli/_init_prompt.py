"""Questions at a terminal that re-ask on bad input, and end cleanly on EOF or Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

import typer

T = TypeVar("T")


class Cancelled(Exception):
    """The person ended the questions (EOF: ``code`` 1; Ctrl-C: 130)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def ask(question: str, parse: Callable[[str], T], *, default: str | None = None) -> T:
    """Ask until ``parse`` accepts the answer (Enter takes ``default``).

    ``parse`` raises ``ValueError`` with a message to show before asking again.
    """
    shown = f"{question} [{default}]: " if default is not None else f"{question}: "
    while True:
        try:
            line = _read(shown)
        except KeyboardInterrupt:
            typer.echo()
            raise Cancelled(130) from None
        if line is None:
            typer.echo()
            raise Cancelled(1)
        answer = line.strip()
        if not answer and default is not None:
            answer = default
        try:
            return parse(answer)
        except ValueError as error:
            typer.echo(f"  {error}")


def choose(
    question: str,
    options: Sequence[str],
    *,
    labels: Sequence[str] | None = None,
    default: str | None = None,
) -> str:
    """One of ``options``, by its number or its name (listed with ``labels``, if given)."""
    for number, label in enumerate(labels or options, 1):
        typer.echo(f"  {number}) {label}")

    def parse(answer: str) -> str:
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            return options[int(answer) - 1]
        if answer in options:
            return answer
        raise ValueError(f"answer with a number from 1 to {len(options)}, or a name listed")

    return ask(question, parse, default=default)


def confirm(question: str, *, default: bool) -> bool:
    """Yes or no; only ``y``/``yes``/``n``/``no`` (or Enter for the default) answer it."""

    def parse(answer: str) -> bool:
        if answer.lower() in ("y", "yes"):
            return True
        if answer.lower() in ("n", "no"):
            return False
        raise ValueError("answer y or n")

    return ask(question, parse, default="y" if default else "n")


def _read(prompt: str) -> str | None:
    """The answer typed after ``prompt``; ``None`` at the end of the input.

    Not ``input()``: a Ctrl-C that comes after the prompt is shown but before the read
    begins would wait for Enter there. Here the signal also wakes the ``select`` (the
    interpreter writes to the wakeup socket), and the ``KeyboardInterrupt`` comes at once.
    """
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor (a test's stream)
        try:
            return input(prompt)
        except EOFError:
            return None
    wake, woken = socket.socketpair()
    wake.setblocking(False)
    woken.setblocking(False)
    before = signal.set_wakeup_fd(woken.fileno())
    try:
        typer.echo(prompt, nl=False)
        line = bytearray()
        while True:
            ready, _, _ = select.select([fd, wake], [], [])
            if wake in ready:
                with contextlib.suppress(BlockingIOError):
                    wake.recv(64)  # a signal other than SIGINT: read on
            if fd not in ready:
                continue
            byte = os.read(fd, 1)  # one at a time: what follows the line stays unread
            if not byte:
                return line.decode(errors="replace") if line else None
            if byte == b"\n":
                return line.decode(errors="replace").rstrip("\r")
            line += byte
    finally:
        signal.set_wakeup_fd(before)
        wake.close()
        woken.close()
