"""Where a run is drawn: the console, its spinner, and the layouts blocks share.

``Gutter`` puts a one-character mark beside a block (wrapped lines keep the indent);
``Nested`` puts a child run's lines behind ``│`` bars; ``Screen`` prints above the
spinner, which only a terminal gets (captured output has no control codes).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from ._transcript import printable

if TYPE_CHECKING:
    from rich.status import Status


def text_of(text: str, style: str | Style = "") -> Text:
    """``text`` as Rich text, its control characters made visible (never obeyed)."""
    return Text(printable(text), style=style)


class Gutter:
    """A one-character mark, then the body beside it; wrapped lines keep the indent.

    Nothing pads the lines: captured output has no trailing spaces.
    """

    def __init__(self, mark: Text | str, body: RenderableType) -> None:
        self.mark = Text(mark) if isinstance(mark, str) else mark
        self.body = body

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(20, options.max_width - 2)
        lines = console.render_lines(self.body, options.update_width(width), pad=False)
        for i, line in enumerate(lines):
            if i == 0:
                yield from self.mark.render(console)
                yield Segment(" ")
            else:
                yield Segment("  ")
            yield from _trimmed(line)
            yield Segment.line()


def _trimmed(line: list[Segment]) -> list[Segment]:
    """The line without the spaces wrapping left at its end."""
    while line and not line[-1].control and not line[-1].text.rstrip():
        line = line[:-1]
    if line and not line[-1].control:
        last = line[-1]
        line = [*line[:-1], Segment(last.text.rstrip(), last.style)]
    return line


class Nested:
    """A block's lines, trimmed, each behind a ``│`` per level of delegation (0: none)."""

    def __init__(self, inner: RenderableType, depth: int) -> None:
        self.inner = inner
        self.depth = depth

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        bar = Segment("│ " * self.depth, Style(dim=True))
        width = max(20, options.max_width - 2 * self.depth)
        for line in console.render_lines(self.inner, options.update_width(width), pad=False):
            trimmed = _trimmed(line)
            yield bar if trimmed else Segment(bar.text.rstrip(), bar.style)
            yield from trimmed
            yield Segment.line()


class Activity:
    """The spinner's words: what the run is doing, for how long, and the spend."""

    def __init__(self) -> None:
        self.label = ""
        self.since = time.monotonic()
        self.cost_usd = 0.0

    def __rich__(self) -> Text:
        elapsed = time.monotonic() - self.since
        return Text(f"{self.label} · {elapsed:.0f}s · ${self.cost_usd:.4f}", style="dim")


class Screen:
    """The console a run is shown on, and its spinner (only on a terminal, only live)."""

    def __init__(self, console: Console, *, live: bool) -> None:
        self.console = console
        self.spins = console.is_terminal and live
        self.activity = Activity()
        self.leave_hint = "Ctrl-C to leave"
        """How the person leaves (the header says it): pausing the run, or leaving it going."""
        self._status: Status | None = None
        self._asking = 0
        """Questions being asked: no spinner meanwhile (it would redraw the prompt's line)."""

    def print(self, renderable: RenderableType, depth: int = 0) -> None:
        """Print above the spinner (behind a child's bars at ``depth``)."""
        self.console.print(Nested(renderable, depth))

    def spin(self, label: str, cost_usd: float) -> None:
        """Show the spinner saying ``label`` (its clock restarts when the label changes)."""
        if label != self.activity.label:
            self.activity.label = label
            self.activity.since = time.monotonic()
        self.activity.cost_usd = cost_usd
        if not self.spins or self._status is not None or self._asking:
            return
        self._status = self.console.status(self.activity, spinner="dots")
        self._status.start()

    def idle(self) -> None:
        """Hide the spinner."""
        if self._status is not None:
            self._status.stop()
            self._status = None
        self.activity.label = ""

    @contextlib.contextmanager
    def still(self) -> Iterator[None]:
        """No spinner meanwhile (a question is asked); it comes back after."""
        label, cost = self.activity.label, self.activity.cost_usd
        since = self.activity.since
        self.idle()
        self._asking += 1
        try:
            yield
        finally:
            self._asking -= 1
            if self._asking:
                pass
            elif self.activity.label:  # something began meanwhile: its spinner now
                self.spin(self.activity.label, self.activity.cost_usd)
            elif label:
                self.spin(label, cost)
                self.activity.since = since
