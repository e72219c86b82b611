"""Moving SQLite's write-ahead log into the database off the event loop, and bounding it.

SQLite checkpoints the WAL itself, by default inside whichever commit pushes it past
1,000 pages: that commit then takes milliseconds instead of microseconds, and with it
the event loop. Measured here, it was the whole of the engine's p99 per tool call (5 ms
with it, 1 ms without). So the store turns automatic checkpoints off and this thread
runs a passive checkpoint (which never blocks writers) every half second, on a
connection of its own; sqlite3 releases the GIL while it works.

A passive checkpoint alone never lets the WAL start over while writes keep coming
(frames arrive during the checkpoint, so it never finishes them all), and the file
stays as large as it ever grew: each commit writes whole pages (four or five for one
small event), so a burst of single appends grew it past 100 MB for a 1.4 MB database.
With a ``limit``, the thread looks at the file every 50 ms and, once it is larger,
runs a passive checkpoint (the bulk of the copying, writers going on) and then a
``TRUNCATE`` one: it copies the few frames that came in meanwhile, holding writers off
for that long, and empties the file. ``wal_bytes`` in ``helix bench eventlog`` measures
with and without.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

_INTERVAL_S = 0.5
_LOOK_S = 0.05
DEFAULT_WAL_LIMIT = 4 * 1024 * 1024
"""The WAL size (bytes) past which a checkpoint runs at once and the file is cut back."""


class Checkpointer:
    """A daemon thread checkpointing one database file until stopped."""

    def __init__(
        self, path: Path, interval_s: float = _INTERVAL_S, limit: int | None = DEFAULT_WAL_LIMIT
    ) -> None:
        self.path = path
        self.interval_s = interval_s
        self.limit = limit
        """Checkpoint as soon as the WAL is larger than this; ``None``: on the timer only."""
        self.checkpoints = 0
        """How many checkpoints have run (for tests and curiosity)."""
        self.truncations = 0
        """How many of them emptied a WAL grown past ``limit``."""
        self._wal = Path(f"{path}-wal")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="helix-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA busy_timeout = 1000")
            if self.limit is not None:
                db.execute(f"PRAGMA journal_size_limit = {int(self.limit)}")
            look = self.interval_s if self.limit is None else min(_LOOK_S, self.interval_s)
            last = time.monotonic()
            while not self._stop.wait(look):
                too_large = self._too_large()
                if time.monotonic() - last < self.interval_s and not too_large:
                    continue
                last = time.monotonic()
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    if too_large:  # what little came in meanwhile, then empty the file
                        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                        self.truncations += 1
                    self.checkpoints += 1
                except sqlite3.Error:
                    continue  # busy or locked: the next round will do it
        finally:
            db.close()

    def _too_large(self) -> bool:
        if self.limit is None:
            return False
        try:
            return os.stat(self._wal).st_size > self.limit
        except OSError:
            return False

    def signal_stop(self) -> None:
        """Ask the thread to stop, without waiting for it."""
        self._stop.set()

    def stop(self) -> None:
        """Stop the thread (a last checkpoint is not needed: the WAL is durable)."""
        self._stop.set()
        self._thread.join()
