"""Commands imported only when used, so ``helix --help`` loads none of them.

``helix --help`` lists each command by the one-line summary its row in ``_app.py``
gives; ``helix NAME ...`` imports NAME's module and nothing else's. Help is plain
text (Typer's Rich panels cost about 120 ms of imports per start) and every command's
help ends with the examples ``_examples.py`` holds for it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from ._examples import epilog


@dataclass(frozen=True, slots=True)
class Lazy:
    """A command (or a group of them) and where it lives."""

    name: str
    """What is typed: ``helix NAME``."""
    target: str
    """``"._module:attribute"`` under ``helix.cli``: a command function or a ``typer.Typer``."""
    summary: str
    """The line ``helix --help`` shows: the first line of the command's own help."""

    def load(self) -> Any:
        """Import the module and build the command (with its examples)."""
        module, _, attribute = self.target.partition(":")
        found = getattr(importlib.import_module(module, "helix.cli"), attribute)
        if isinstance(found, typer.Typer):
            found.info.cls = _Group
            command: Any = typer.main.get_group(found)
        else:
            single = typer.Typer(rich_markup_mode=None, add_completion=False)
            single.command(self.name)(found)
            command = typer.main.get_command(single)
        command.name = self.name
        _plain(command, self.name)
        return command


def _plain(command: Any, path: str) -> None:
    """Plain help with examples, for a command and everything under it."""
    command.rich_markup_mode = None
    if not command.epilog:
        command.epilog = epilog(path)
    for name, sub in getattr(command, "commands", {}).items():
        _plain(sub, f"{path} {name}")


class _Group(TyperGroup):
    """A group whose ``--help``, when not given, is ``False`` rather than ``None``.

    Typer coerces a parameter's value through pydantic unless it is already a bool;
    a help flag left out is ``None``, so passing through a group to one of its commands
    imported pydantic (about 60 ms) just to read "not asked".
    """

    def get_help_option(self, ctx: Any) -> Any:
        """The help option, ``False`` when it is not given."""
        option = super().get_help_option(ctx)
        if option is not None:
            option.default = False
        return option


class LazyGroup(_Group):
    """The root group: commands from a table of ``Lazy`` rows, imported on first use."""

    table: tuple[Lazy, ...] = ()
    """Set by the app (``LazyGroup.of``); the order is ``helix --help``'s order."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._listing = False
        for name, command in self.commands.items():  # registered eagerly (app.command())
            _plain(command, name)

    @classmethod
    def of(cls, rows: Iterable[Lazy]) -> type[LazyGroup]:
        """A ``LazyGroup`` class serving these rows (``typer.Typer(cls=...)`` takes a class)."""
        return type("HelixGroup", (cls,), {"table": tuple(rows)})

    def list_commands(self, ctx: Any) -> list[str]:
        """Every command's name, in the table's order (then any registered eagerly)."""
        names = [row.name for row in self.table]
        return names + [name for name in self.commands if name not in names]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command, imported now; while listing help, only its summary."""
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        row = next((row for row in self.table if row.name == cmd_name), None)
        if row is None:
            return None
        if self._listing:
            return TyperCommand(cmd_name, help=row.summary, rich_markup_mode=None)
        self.commands[cmd_name] = command = row.load()
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The root help: summaries from the table, nothing imported."""
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[Any, Any, list[str]]:
        """Find the command; an unknown name fails with the nearest known ones."""
        names = self.list_commands(ctx)
        if args and args[0] not in names and not args[0].startswith("-"):
            matches = get_close_matches(args[0], names)
            hint = f" Did you mean {', '.join(repr(m) for m in matches)}?" if matches else ""
            ctx.fail(f"No such command {args[0]!r}.{hint}")
        return super().resolve_command(ctx, args)
