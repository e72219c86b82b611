"""The cockpit's own widgets: a conversation block, and the keys line."""

from __future__ import annotations

from textual import events
from textual.widgets import Footer, Static

from helix.cli._transcript import Block

from ._render import block_text

NARROW = 100
"""Below this many columns the keys line packs tighter."""


class BlockView(Static):
    """One block of the conversation; re-rendered as the block fills in."""

    def __init__(self, block: Block) -> None:
        super().__init__(block_text(block), classes="block")
        self.block = block
        self.diff: str | None = None
        """For a call that edited files: their diff over its turn, once fetched."""

    def redraw(self) -> None:
        """Show the block as it is now."""
        self.update(block_text(self.block, self.diff))


class Keys(Footer):
    """The keys of the screen, packed tighter on a narrow terminal."""

    def __init__(self) -> None:
        super().__init__(show_command_palette=False)

    def on_resize(self, event: events.Resize) -> None:
        """Compact below ``NARROW`` columns."""
        self.compact = event.size.width < NARROW
