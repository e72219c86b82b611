"""The runs list: newest first, with live status, turns, cost and objective."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from helix.cli._screen import text_of

from ._render import STATUS_STYLES, clip
from ._widgets import Keys

if TYPE_CHECKING:
    from helix.api import Run

    from ._app import HelixTui

PAGE = 100
"""How many of the newest runs the list shows."""


class RunsScreen(Screen[None]):
    """Every visible run, refreshed on an interval (and after each action here)."""

    BINDINGS = [
        Binding("question_mark", "app.keys", "keys"),
        Binding("enter", "open", "open", show=True),
        Binding("n", "new", "new run"),
        Binding("g", "reload", "refresh"),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[Run] = []
        """The runs shown, newest first, as of the last refresh."""
        self.loads = 0
        """How many refreshes have completed (tests wait on it)."""

    @property
    def tui(self) -> HelixTui:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        """A header, the table, a hint line and the keys."""
        yield Header()
        yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        yield Static("", id="hint")
        yield Keys()

    def on_mount(self) -> None:
        """Columns, a first load, then a refresh on an interval."""
        table = self.query_one(DataTable)
        table.add_column("run", key="run")
        table.add_column("status", key="status", width=11)  # the widest: "completed ●"
        table.add_column("turns", key="turns", width=5)
        table.add_column("cost", key="cost", width=9)
        table.add_column("objective", key="objective")
        table.add_column("created", key="created")
        self.run_worker(self.reload(), group="reload", exclusive=True)
        self.set_interval(self.tui.poll_s, self._tick)

    def _tick(self) -> None:
        self.run_worker(self.reload(), group="reload", exclusive=True)

    async def reload(self) -> None:
        """Read the newest runs through the door and show them."""
        page = await self.tui.attempt(self.tui.api.runs(limit=PAGE), "listing runs")
        if page is None:
            return
        self.runs = page.runs
        table = self.query_one(DataTable)
        chosen = self.chosen()
        table.clear()
        for run in self.runs:
            table.add_row(*self._cells(run), key=run.id)
        if chosen is not None and chosen in {r.id for r in self.runs}:
            table.move_cursor(row=table.get_row_index(chosen), animate=False)
        hint = "no runs yet: [n] starts one" if not self.runs else ""
        self.query_one("#hint", Static).update(hint)
        self.loads += 1

    def _cells(self, run: Run) -> list[Any]:
        status = Text(run.status, style=STATUS_STYLES.get(run.status, ""))
        if self.tui.driven_here(run.id) and run.driven is not None:  # not once it ended
            status.append(" ●", style="green")
        fork = "⑂ " if run.parent is not None else ""
        created = run.created_at[11:19] if len(run.created_at) >= 19 else run.created_at
        return [
            text_of(run.id),
            status,
            str(run.turns),
            f"${run.cost_usd:.4f}",
            text_of(fork + clip(run.objective, 60)),
            created,
        ]

    def chosen(self) -> str | None:
        """The id of the run under the cursor."""
        table = self.query_one(DataTable)
        if not self.runs or table.row_count == 0:
            return None
        row = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return None if row.value is None else str(row.value)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row opens the run."""
        if event.row_key.value is not None:
            self.open_run(str(event.row_key.value))

    def action_open(self) -> None:
        """Open the run under the cursor."""
        chosen = self.chosen()
        if chosen is not None:
            self.open_run(chosen)

    def open_run(self, run_id: str) -> None:
        """Show one run."""
        from ._run_screen import RunScreen

        self.app.push_screen(RunScreen(run_id))

    def action_reload(self) -> None:
        """Refresh now."""
        self._tick()

    def action_new(self) -> None:
        """Ask for an objective (and a model), start the run, open it."""
        from ._dialogs import NewRunDialog

        def opened(run_id: str | None) -> None:
            self._tick()
            if run_id is not None:
                self.open_run(run_id)

        self.app.push_screen(NewRunDialog(), opened)
