"""The cockpit: a Textual app over one ``HelixApi``, and the runs it drives itself."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from textual.app import App
from textual.binding import Binding
from textual.worker import Worker, WorkerCancelled, WorkerFailed, get_current_worker

from helix.errors import HelixError, RunStateError

from ._runs_screen import RunsScreen

if TYPE_CHECKING:
    from helix.api import HelixApi

T = TypeVar("T")
Mode = Literal["embedded", "client"]

QUIT_WAIT_S = 10.0
"""On quit, how long runs driven here get to reach their pause (a safety bound)."""


@dataclass
class Driver:
    """Embedded mode: the runs the door asked this process to drive, and how to drive one.

    ``queued`` is the list the local door's ``drive`` callback appends to (the runs it
    created, resumed or forked); ``drive`` drives one run to its end or pause.
    """

    queued: list[str]
    drive: Callable[[str], Awaitable[object]]

    def take(self) -> list[str]:
        """The runs asked for since the last call."""
        taken = list(self.queued)
        self.queued.clear()
        return taken


class HelixTui(App[None]):
    """``helix tui``: runs, a run's conversation, approvals, steering, its world."""

    TITLE = "helix"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #head { padding: 0 1; background: $boost; }
    #graph { padding: 0 1; display: none; max-height: 50%; }
    #graph.graph { display: block; }
    #conversation { padding: 0 1; }
    .block { margin: 1 0 0 0; }
    #approval { border: heavy $warning; padding: 0 1; display: none; }
    #approval.asking { display: block; }
    #steer { dock: bottom; }
    #activity { padding: 0 1; display: none; }
    #files { width: 1fr; max-width: 48; min-width: 16; }
    #view { width: 3fr; padding: 0 1; }
    .dialog Horizontal { height: auto; margin: 1 0 0 0; }
    .dialog Button { margin: 0 1 0 0; }
    .dialog { width: 90%; max-width: 80; height: auto; border: thick $primary;
              padding: 1 2; background: $surface; }
    .error { color: $error; }
    """
    BINDINGS = [
        Binding("ctrl+q", "quit", "quit", show=False),
    ]

    def __init__(self, api: HelixApi, *, driver: Driver | None = None, poll_s: float = 1.0) -> None:
        super().__init__()
        self.api = api
        self.driver = driver
        self.poll_s = poll_s
        self.driving: dict[str, Worker[None]] = {}
        """Runs driven by this process, by id."""
        self.errors: list[str] = []
        """Every error shown, newest last (what a test or a person reads back)."""

    @property
    def mode(self) -> Mode:
        """``embedded`` (runs on the store here) or ``client`` (a server's)."""
        return "embedded" if self.driver is not None else "client"

    def on_mount(self) -> None:
        """Open on the runs list."""
        self.sub_title = "embedded" if self.mode == "embedded" else "client of a server"
        self.push_screen(RunsScreen())

    def action_keys(self) -> None:
        """Show or hide the panel of every key of this screen (for a narrow terminal)."""
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def fail(self, message: str) -> None:
        """Show an error (a notification) and keep it in ``errors``."""
        self.errors.append(message)
        self.notify(message, title="error", severity="error", timeout=8, markup=False)

    async def attempt(self, action: Awaitable[T], what: str) -> T | None:
        """Await an API call; a Helix error is shown, not raised (None then)."""
        try:
            result = await action
        except HelixError as error:
            self.fail(f"{what}: {error}")
            return None
        self.drive_queued()
        return result

    async def succeed(self, action: Awaitable[object], what: str) -> bool:
        """Await an API call that answers nothing; whether it succeeded (errors shown)."""
        try:
            await action
        except HelixError as error:
            self.fail(f"{what}: {error}")
            return False
        self.drive_queued()
        return True

    def drive_queued(self) -> None:
        """Embedded: drive here the runs the door just started, resumed or forked."""
        if self.driver is None:
            return
        for run_id in self.driver.take():
            previous = self.driving.get(run_id)
            self.driving[run_id] = self.run_worker(
                self._drive(run_id, previous),
                name=f"drive {run_id}",
                group="drive",
                exit_on_error=False,
            )

    async def _drive(self, run_id: str, previous: Worker[None] | None) -> None:
        assert self.driver is not None
        me = get_current_worker()
        try:
            if previous is not None:  # a drive that is ending (paused): let it end first
                with contextlib.suppress(WorkerFailed, WorkerCancelled):
                    await previous.wait()
            await self.driver.drive(run_id)
        except RunStateError:
            pass  # another process drives it: it is followed through the store
        except Exception as error:  # said, not swallowed: the run is left for `helix resume`
            self.fail(f"driving {run_id} stopped: {error}")
        finally:
            if self.driving.get(run_id) is me:
                del self.driving[run_id]

    def driven_here(self, run_id: str) -> bool:
        """Whether this process drives the run."""
        return run_id in self.driving

    async def action_quit(self) -> None:
        """Quit; runs driven here are paused first, so none is left looking active."""
        for run_id in list(self.driving):
            with contextlib.suppress(HelixError):
                await self.api.pause(run_id)
        workers = [w.wait() for w in list(self.driving.values())]
        if workers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.gather(*workers), QUIT_WAIT_S)
        self.exit()
