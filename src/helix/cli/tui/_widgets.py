"""The cockpit's own widgets: a conversation block, and the keys line."""

from __future__ import annotations

from rich.console import RenderableType
from textual import events
from textual.widgets import Footer, Static

from helix.cli._transcript import Block, Transcript

from ._render import block_view

NARROW = 100
"""Below this many columns the keys line packs tighter."""


class BlockView(Static):
    """One block of the conversation; re-rendered as the block fills in."""

    def __init__(self, block: Block, transcript: Transcript) -> None:
        super().__init__(block_view(block, transcript, {}), classes="block")
        self.block = block
        self.transcript = transcript
        self.diffs: dict[str, str] = {}
        """For a call that edited files: each file's diff over its turn, once fetched."""

    def drawn(self) -> RenderableType:
        """The block as it is now, drawn."""
        return block_view(self.block, self.transcript, self.diffs)

    def redraw(self) -> None:
        """Show the block as it is now."""
        self.update(self.drawn())


class Keys(Footer):
    """The keys of the screen, packed tighter on a narrow terminal."""

    def __init__(self) -> None:
        super().__init__(show_command_palette=False)

    def on_resize(self, event: events.Resize) -> None:
        """Compact below ``NARROW`` columns."""
        self.compact = event.size.width < NARROW
