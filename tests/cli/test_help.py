"""Every command's help: it renders, it shows real examples, and nothing in it is noise.

Walks the whole command tree (sub-apps included) through Click, so a command added
later is checked without being listed here.
"""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from helix.cli._app import COMMANDS, app


def _tree(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name in getattr(command, "list_commands", lambda _ctx: [])(None):
        found += _tree(command.get_command(None, name), (*path, name))
    return found


PATHS = _tree(typer.main.get_command(app))


def test_the_tree_holds_every_command_and_sub_command() -> None:
    assert {("run",), ("bench",), ("users", "add"), ("models", "recommend")} <= set(PATHS)
    assert len(PATHS) > len(COMMANDS)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "helix")
def test_help_renders_with_examples_and_no_noise(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], prog_name="helix")
    assert result.exit_code == 0, result.output
    text = result.output
    assert f"Usage: helix {' '.join(path)}".rstrip() in text
    _, examples_title, examples = text.partition("Examples:")
    assert examples_title, f"helix {' '.join(path)} --help shows no examples"
    shown = [line.strip() for line in examples.splitlines() if line.strip()]
    assert shown
    assert all("helix " in line for line in shown), shown
    invoked = " ".join(("helix", *path))
    assert any(invoked in line for line in shown) or not path, shown
    assert "<bool>" not in text
    assert "--no-no-" not in text


def test_the_root_lists_each_command_by_the_first_line_of_its_own_help() -> None:
    """``helix --help`` reads summaries from ``COMMANDS``; they must not drift."""
    group = typer.main.get_command(app)
    for row in COMMANDS:
        command = group.get_command(None, row.name)  # type: ignore[attr-defined]
        assert command is not None, row.name
        own = (command.help or "").strip().splitlines()[0]
        assert own == row.summary, row.name


def test_an_unknown_command_suggests_the_nearest() -> None:
    result = CliRunner().invoke(app, ["rnus"], prog_name="helix")
    assert result.exit_code == 2
    assert "No such command 'rnus'. Did you mean 'runs'?" in result.output


def test_the_version_is_printed() -> None:
    from helix import __version__

    result = CliRunner().invoke(app, ["--version"], prog_name="helix")
    assert (result.exit_code, result.output) == (0, f"helix {__version__}\n")
