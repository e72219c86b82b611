"""The run's world at any turn: its files, one file's content, and what the turn changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Input, OptionList, Static
from textual.widgets.option_list import Option

from helix.cli._screen import text_of

from ._render import diff_text
from ._widgets import Keys

if TYPE_CHECKING:
    from helix.api import FileEntry, Point

    from ._app import HelixTui

MAX_SHOWN = 200_000
"""A file's first bytes shown (the rest is a click away with ``helix files``)."""


class FilesScreen(Screen[None]):
    """Files and diffs of the run's world at a turn (``None``: now)."""

    BINDINGS = [
        Binding("question_mark", "app.keys", "keys"),
        Binding("escape", "back", "back"),
        Binding("left_square_bracket", "step(-1)", "turn -1"),
        Binding("right_square_bracket", "step(1)", "turn +1"),
        Binding("t", "pick_turn", "go to turn"),
        Binding("d", "diff", "diff"),
        Binding("enter", "show", "show file", show=False),
    ]

    def __init__(self, run_id: str, turns: int | None) -> None:
        super().__init__()
        self.run_id = run_id
        self.last = turns or 0
        self.turn: int = self.last
        """The turn whose end is shown (0: the start)."""
        self.entries: list[FileEntry] = []
        self.shown = ""
        """What the right pane shows: ``diff``, a path, or nothing yet."""

    @property
    def tui(self) -> HelixTui:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    @property
    def point(self) -> Point:
        """The world point shown: ``start`` for turn 0, else the turn."""
        return "start" if self.turn == 0 else self.turn

    def compose(self) -> ComposeResult:
        """Where we are, the file list, the view pane, a turn input, keys."""
        yield Header()
        yield Static("", id="where")
        with Horizontal():
            yield OptionList(id="files")
            with VerticalScroll(id="view"):
                yield Static("", id="content")
        yield Input(placeholder="turn (a number, or start); Enter goes there", id="turn")
        yield Keys()

    async def on_mount(self) -> None:
        """List the world at the chosen turn and show what that turn changed."""
        self.query_one("#turn", Input).display = False
        self.query_one("#files", OptionList).focus()
        await self.load()

    async def load(self) -> None:
        """List the files at the current point, and show its diff."""
        self.query_one("#where", Static).update(
            Text(
                f"{self.run_id}  world at turn {self.turn} of {self.last}"
                f"{'  (the start)' if self.turn == 0 else ''}",
                style="bold",
            )
        )
        entries = await self.tui.attempt(
            self.tui.api.files(self.run_id, turn=self.point), "listing files"
        )
        self.entries = [e for e in entries or [] if e.kind != "dir"]
        files = self.query_one("#files", OptionList)
        files.clear_options()
        files.add_options([Option(text_of(e.path), id=e.path) for e in self.entries])
        if self.entries:
            files.highlighted = 0
        await self.action_diff()

    async def action_step(self, by: int) -> None:
        """One turn back or forward."""
        turn = min(max(self.turn + by, 0), self.last)
        if turn != self.turn:
            self.turn = turn
            await self.load()

    def action_pick_turn(self) -> None:
        """Type a turn to go to."""
        box = self.query_one("#turn", Input)
        box.display = True
        box.focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        """Go to the typed turn (bad input is said, not obeyed)."""
        text = event.value.strip()
        turn = 0 if text == "start" else int(text) if text.isdigit() else None
        if turn is None or turn > self.last:
            self.tui.fail(f"{text!r} is not a turn of this run (0 to {self.last}, or start)")
            return
        event.input.display = False
        self.query_one("#files", OptionList).focus()
        self.turn = turn
        await self.load()

    async def action_diff(self) -> None:
        """What the turn changed (from the previous turn's end to this one's)."""
        if self.turn == 0:
            self._show(Text("the world as the run found it", style="dim"), "diff")
            return
        start: Point = "start" if self.turn == 1 else self.turn - 1
        diff = await self.tui.attempt(
            self.tui.api.diff(self.run_id, start=start, end=self.turn), "diff"
        )
        if diff is None:
            return
        title = Text(f"changes in turn {self.turn}\n", style="bold")
        self._show(title + (diff_text(diff) if diff else Text("(none)", style="dim")), "diff")

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Show the chosen file's content at this turn."""
        if event.option.id is not None:
            await self.show_file(event.option.id)

    async def action_show(self) -> None:
        """Show the highlighted file."""
        files = self.query_one("#files", OptionList)
        if files.highlighted is not None:
            option = files.get_option_at_index(files.highlighted)
            if option.id is not None:
                await self.show_file(option.id)

    async def show_file(self, path: str) -> None:
        """A file's content as it was at the turn."""
        data = await self.tui.attempt(
            self.tui.api.read(self.run_id, path, turn=self.point), f"reading {path}"
        )
        if data is None:
            return
        body = data[:MAX_SHOWN].decode("utf-8", errors="replace")
        more = f"\n… {len(data) - MAX_SHOWN} more bytes" if len(data) > MAX_SHOWN else ""
        self._show(text_of(f"{path} at turn {self.turn}\n", "bold") + text_of(body + more), path)

    def _show(self, content: Text, what: str) -> None:
        self.shown = what
        self.query_one("#content", Static).update(content)

    def action_back(self) -> None:
        """Close the turn input, or go back to the run."""
        box = self.query_one("#turn", Input)
        if box.display:
            box.display = False
            self.query_one("#files", OptionList).focus()
        else:
            self.app.pop_screen()
