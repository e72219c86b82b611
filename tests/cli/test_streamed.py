"""The agent's words printed as they arrive: wrapped like a block, the rest once at the end."""

from __future__ import annotations

import io

from rich.console import Console

from helix.cli._streamed import StreamedText


def _console(width: int = 40) -> Console:
    return Console(file=io.StringIO(), width=width, color_system=None, highlight=False)


def _out(console: Console) -> str:
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def test_pieces_are_printed_as_they_come_and_wrapped_at_words_beside_the_mark() -> None:
    console = _console()
    streamed = StreamedText(console, depth=0, turn=1)
    streamed.add("The first words ")
    assert _out(console) == "● The first words"  # printed at once, not at the end
    streamed.add("arrive and then more of them arr")
    streamed.add("ive, until the line is full.")
    assert streamed.finish(
        "The first words arrive and then more of them arrive, until the line is full."
    )
    assert _out(console).splitlines() == [
        "● The first words arrive and then more",
        "  of them arrive, until the line is",
        "  full.",
    ]


def test_the_rest_of_the_reply_is_printed_at_its_end_and_newlines_keep_the_gutter() -> None:
    console = _console()
    streamed = StreamedText(console, depth=1, turn=2)
    streamed.add("Two lines:\nthe")
    assert streamed.finish("Two lines:\nthe second one.")
    assert _out(console).splitlines() == ["│ ● Two lines:", "│   the second one."]


def test_a_reply_that_is_not_what_was_shown_is_left_to_be_printed_whole() -> None:
    console = _console()
    streamed = StreamedText(console, depth=0, turn=1)
    streamed.add("Something else")
    assert not streamed.finish("The reply as logged.")
    assert _out(console) == "● Something else\n"  # the line ended; nothing more added
