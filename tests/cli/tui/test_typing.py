"""The run screen shows the reply being written, as it streams; embedded and client.

The mock model server pauses the streamed reply after its first piece: the screen
shows that much under the conversation (the reply is not in the log yet), then,
released, the reply's own block, and the activity line goes.
"""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Static

from helix.cli._transcript import Said
from helix.cli.tui import HelixTui, RunScreen
from helix.testing import MockModelServer
from tests.api.conftest import MODEL, Door, play

from .conftest import in_tui, until
from .test_pilot import new_run

CALL = {"name": "run_command", "args": {"command": "true"}}
WORDS = "The check passed, and this answer appeared on the screen as it was written."


async def test_the_reply_being_written_shows_under_the_conversation(
    door: Door, model_server: MockModelServer
) -> None:
    play(
        model_server,
        {"text": "Checking.", "tool_calls": [CALL]},
        {"text": WORDS, "pause_mid_stream": True},
    )

    async def scene(app: HelixTui, pilot: Pilot[None]) -> None:
        screen = await new_run(app, pilot, "check", MODEL)
        await until(pilot, lambda: bool(screen.asking), "the approval")
        await until(pilot, lambda: door.reply_hub(app.api).watching(screen.run_id), "the watch")
        await pilot.press("a")

        def activity() -> str:
            return str(screen.query_one("#activity", Static).render())

        await until(pilot, lambda: WORDS[:8] in activity(), "the first piece on screen")
        assert "writing (turn 2)" in activity()
        assert WORDS not in activity()
        assert [b.text for b in said(screen)] == ["Checking."]  # not logged yet
        model_server.release()
        await until(pilot, lambda: screen.ended, "the end")
        assert [b.text for b in said(screen)] == ["Checking.", WORDS]
        assert not screen.query_one("#activity", Static).display
        assert app.errors == []

    await in_tui(scene)


def said(screen: RunScreen) -> list[Said]:
    return [b for b in screen.transcript.blocks if isinstance(b, Said) and b.who == "agent"]
