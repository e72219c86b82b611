"""``helix tui``: the Textual cockpit, through the same door as every run command."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._common import EXIT_USAGE, fail, run
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.cli.tui import HelixTui

INSTALL = "pip install 'helix-harness[tui]'"


def tui() -> None:
    """Open the terminal cockpit: runs, conversations, approvals, steering, files.

    Embedded on the store here (runs it starts are driven here), or a server's client
    (docs/tui.md).
    """
    try:
        import textual  # noqa: F401  (the extra, checked before anything opens)
    except ImportError:
        fail(f"helix tui needs Textual, which the tui extra installs: {INSTALL}", EXIT_USAGE)

    async def main(door: Door) -> None:
        await cockpit(door).run_async()

    run(lambda: with_door(main))


def cockpit(door: Door, *, poll_s: float = 1.0) -> HelixTui:
    """The app over the door: embedded (driving what it starts) or a server's client."""
    from helix.cli.tui import Driver, HelixTui

    local = door.local
    if local is None:
        return HelixTui(door.api, poll_s=poll_s)

    async def drive(run_id: str) -> None:
        await door.drive_exporting(run_id, local.engine.drive(run_id))

    return HelixTui(door.api, driver=Driver(door.here, drive), poll_s=poll_s)
