"""The agent's words printed as they arrive (a run driven here, shown on a terminal).

The engine hands the view each piece of a reply (``helix.runtime.DeltaSink``); its text
is printed at once beside the ``●`` mark, wrapped at word boundaries as the finished
block (``_blocks.said``) is, a child's behind its ``│`` bars. When the reply's
``model.responded`` arrives only what was not shown yet is printed (the log's text is
the whole reply), so the words appear once. Tool-call pieces are not printed: a call
is shown when it has its result.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from ._transcript import printable


class StreamedText:
    """One reply's text being printed as it arrives."""

    def __init__(self, console: Console, depth: int, turn: int) -> None:
        self.console = console
        self.depth = depth
        self.turn = turn
        self.shown = ""
        """The text handed in so far (printed, but for a word not yet ended)."""
        self._width = max(20, max(20, console.width - 2 * depth) - 2)
        self._column = 0
        self._spaces = ""
        self._word = ""
        self._indent = False
        """A line was broken: the next word starts with the indent."""
        self._write(Text("│ " * depth, style="dim"), Text("●", style="bold"), Text(" "))

    def add(self, text: str) -> None:
        """Print ``text`` (a word is printed once it ends, to wrap it whole)."""
        self.shown += text
        for char in printable(text):
            if char == "\n":
                self._end_word()
                self._spaces = ""
                self._break()
            elif char in " \t":
                self._end_word()
                self._spaces += char
            else:
                self._word += char

    def finish(self, text: str) -> bool:
        """End the reply whose whole text is ``text``; whether it was shown whole here.

        ``False`` when what was shown is not where ``text`` begins (the reply is then
        printed in full as a block): the line is ended either way.
        """
        whole = text.startswith(self.shown)
        if whole:
            self.add(text[len(self.shown) :])
        self.stop()
        return whole

    def stop(self) -> None:
        """End the line (something else is printed next)."""
        self._end_word()
        self.console.print()

    def _end_word(self) -> None:
        word, self._word = self._word, ""
        if not word:
            return
        spaces, self._spaces = self._spaces, ""
        if self._column and self._column + len(spaces) + len(word) > self._width:
            self._break()
        if self._indent:  # a new line: the bars and the gutter, no spaces carried over
            self._indent, spaces = False, ""
            self._write(Text("│ " * self.depth, style="dim"), Text("  "))
        self._write(Text(spaces + word))
        self._column += len(spaces) + len(word)

    def _break(self) -> None:
        self.console.print()
        self._indent = True
        self._column = 0

    def _write(self, *parts: Text) -> None:
        self.console.print(Text.assemble(*parts), end="", soft_wrap=True)
