"""The kernel: typed events, the append-only log, and replay.

It imports nothing from Helix above it (only ``helix.errors``); every other layer
builds on it.
"""

__all__: list[str] = []
