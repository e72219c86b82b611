"""The reply being written, as it streams (``HelixApi.replies``), for the run screen.

Its text so far (the last lines that fit) and the calls it has started are shown where
"the model is thinking" is; the reply's own block replaces them when its
``model.responded`` arrives. Pieces of a turn whose reply is logged already are stale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from helix.cli._transcript import printable

if TYPE_CHECKING:
    from helix.api import ReplyPiece, RunEvent

SHOWN_LINES = 6
"""How many of the reply's last lines are shown while it is written."""


class Typing:
    """One run's reply being written: taken piece by piece, ended by its event."""

    def __init__(self) -> None:
        self.turn: int | None = None
        self.text = ""
        self.calls: dict[int, str] = {}
        self.done_turn = 0
        """The newest turn whose reply is in the log."""

    @property
    def active(self) -> bool:
        """Whether a reply is being written now."""
        return self.turn is not None

    def take(self, piece: ReplyPiece) -> bool:
        """Fold one piece; whether what is shown changed."""
        if piece.turn <= self.done_turn:
            return False
        if piece.type == "reply.restart":
            if piece.turn == self.turn:
                self.stop()
                return True
            return False
        if piece.turn != self.turn:
            self.stop()
            self.turn = piece.turn
        if piece.type == "reply.text":
            self.text += piece.text or ""
        elif piece.name and piece.index is not None:
            self.calls[piece.index] = piece.name
        return True

    def ended(self, event: RunEvent) -> bool:
        """Fold an event of the run; whether the reply being written ended with it."""
        if event.type == "model.responded":
            self.done_turn = max(self.done_turn, event.turn or 0)
        if event.type == "model.responded" or event.type.startswith("run."):
            was = self.active
            self.stop()
            return was
        return False

    def stop(self) -> None:
        """Forget the reply being written."""
        self.turn, self.text, self.calls = None, "", {}

    def render(self, width: int) -> Text:
        """The reply so far: ``● writing (turn N)``, its last lines, the calls it starts."""
        shown = Text(f"● writing (turn {self.turn})\n", style="bold")
        lines = printable(self.text).splitlines()[-SHOWN_LINES:]
        tail = "\n".join(lines)[-SHOWN_LINES * max(20, width) :]  # about what fits, wrapped
        shown.append(tail)
        if self.calls:
            shown.append(f"\ncalling {', '.join(self.calls.values())}…", style="dim italic")
        return shown
