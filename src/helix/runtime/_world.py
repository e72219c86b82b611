"""Snapshots in the loop: the whole world at the start, what changed at each turn's end.

The cost follows what the turn did. A turn with no tool call, or whose tools all
declare ``effect="none"`` (or act outside the world), records nothing and reads
nothing. A turn whose world tools report every change they make (``reports_changes``:
the file tools) reads just those paths. A turn that ran a tool which may change
anything (a command, an unknown tool) reads the paths the world's inotify watcher
saw change, and walks the world (reusing the hashes of files whose size and mtime did
not change) only when the watcher lost track of it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from helix.errors import HelixError
from helix.kernel.events import Event, FileChanged, NewEvent
from helix.kernel.session import SessionState
from helix.world import FOLDED_TYPES, WorldFold, WorldRecorder, folded_world, keep_world

from ._setup import RunSetup

_log = logging.getLogger(__name__)


class TurnSnapshots:
    """The world recorder of one run's loop (inactive when the setup has no object store)."""

    def __init__(self, setup: RunSetup) -> None:
        self._setup = setup
        self._recorder = (
            WorldRecorder(setup.store, setup.run_id, setup.world, setup.objects)
            if setup.objects is not None
            else None
        )
        self._kept = -1
        """The log's head when world fold snapshots were last brought up to date."""
        self._fold: WorldFold | None = None
        """The world's history folded to the session's head (once a snapshot point passed)."""
        self._fold_head = -1
        self._every = 0
        self._objects = setup.objects
        self._early: list[Event] | None = None
        """Events the session folded while ``_fold`` was being read from the log."""
        self._points: list[tuple[Event, WorldFold]] = []
        """Snapshot points the fold passed since the last turn's end, with the fold there."""

    def reset(self) -> None:
        """Read the world's history from the log again before the next snapshot.

        Called when the loop (re)starts and after a pause, the only times someone
        else (a rollback, a keep) may have changed the world and logged it.
        """
        if self._recorder is not None:
            self._recorder.reset()
        self._fold, self._early, self._points = None, None, []

    def observe(self, event: Event) -> None:
        """Fold one event the session folded (each once, in seq order) into the history.

        So that keeping the world's fold snapshots does not read the log back: from the
        first snapshot point on, the history is folded as the session folds.
        """
        fold = self._fold
        if fold is None:
            if self._early is not None:
                self._early.append(event)
            return
        seq = event.seq
        if seq <= self._fold_head:  # already in the fold read from the log
            return
        self._fold_head = seq
        if event.type in FOLDED_TYPES and self._objects is not None:
            try:
                fold.apply(event, self._objects)
            except (OSError, HelixError) as error:  # read from the log again next time
                _log.warning("run %s: world history not folded: %s", self._setup.run_id, error)
                self._fold = None
                return
        if seq % self._every == 0:
            self._points.append((event, fold.copy()))

    def close(self) -> None:
        """Stop watching the world (when the loop stops)."""
        if self._recorder is not None:
            self._recorder.close()

    async def whole(self, state: SessionState) -> list[NewEvent]:
        """Walk the whole world (at the run's start, or when the loop resumes)."""
        if self._recorder is None:
            return []
        return await self._guarded(self._recorder, state.turn, None)

    async def after_turn(
        self, state: SessionState, unfolded: Sequence[NewEvent] = ()
    ) -> list[NewEvent]:
        """What the turn that is ending changed, read as cheaply as its tools allow.

        ``unfolded`` are the turn's last results, about to be appended with its end:
        the files they changed count as the turn's too.
        """
        recorder = self._recorder
        if recorder is None:
            return []
        await self._keep_history(state)
        walk = False
        tools = self._setup.tools
        for call in _turn_calls(state):
            tool = tools.get(call) if call in tools else None
            if tool is None:
                walk = True
                break
            # An MCP server's tool (``external``) may write in the world its server runs in.
            if tool.effect in ("world", "external") and not tool.reports_changes:
                walk = True
                break
        if walk:
            return await self._guarded(recorder, state.turn, None)
        files = state.turn_files | {
            e.payload.path for e in unfolded if isinstance(e.payload, FileChanged)
        }
        if files:
            return await self._guarded(recorder, state.turn, files)
        return []

    async def _guarded(
        self, recorder: WorldRecorder, turn: int, paths: set[str] | None
    ) -> list[NewEvent]:
        # A world that cannot be read (deleted, unreadable) must not stop the run.
        try:
            return await recorder.snapshot(turn, None if paths is None else sorted(paths))
        except (OSError, HelixError) as error:
            _log.warning("run %s: the world could not be snapshotted: %s", recorder.run_id, error)
            recorder.reset()
            return []

    async def _keep_history(self, state: SessionState) -> None:
        """Keep the world's fold snapshots current, each time the log passes a snapshot point.

        So that forking this run at a late turn costs the events since a recent point.
        The first time, the fold is read from the last world snapshot kept to the log's
        head (keeping one at each point it passes); from then on ``observe`` folds
        each event as the session does, and the points it passed are kept here
        (derived data: a failure only costs a later fold time).
        """
        setup = self._setup
        every = setup.store.snapshot_every
        if setup.objects is None or every <= 0:
            return
        points, self._points = self._points, []
        for at, fold in points:
            await keep_world(setup.store, setup.objects, at, fold)
        if self._fold is not None or state.head // every <= self._kept // every:
            return
        self._kept = state.head
        self._early = []
        try:
            fold, head = await folded_world(setup.store, setup.objects, setup.run_id)
        except (OSError, HelixError) as error:
            _log.warning("run %s: no world snapshot kept: %s", setup.run_id, error)
            self._early = None
            return
        early, self._early = self._early, None
        self._fold, self._fold_head, self._every = fold, head, every
        for event in early or ():
            self.observe(event)


def _turn_calls(state: SessionState) -> list[str]:
    """The names of the tools the current turn's model reply asked for."""
    for message in reversed(state.messages):
        if message.role == "assistant":
            return [call.name for call in message.tool_calls]
        if message.role == "user":
            break
    return []
