"""Plain values the log hands out: run records, pages of runs, encoded rows."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal, NamedTuple

from helix._util import holder_gone
from helix.kernel.events import ForkPoint, RunStatus


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One row of the run registry: a run's identity and the counters its log implies.

    Counters (turns, tokens, cost) are written in the same transaction as the events
    that change them. A fork's token and cost counters count only its own events: its
    history's spend belongs to its ancestors. ``turns`` is the highest turn number the
    run's session has reached, inherited history included.
    """

    id: str
    workspace: str
    status: RunStatus
    objective: str
    model: str
    blueprint: str | None
    world: str
    parent: ForkPoint | None
    """For a fork, the parent run and the last seq the fork shares with it."""
    created_at: str
    updated_at: str
    next_seq: int
    """The seq the next appended event will get."""
    turns: int
    input_tokens: int
    output_tokens: int
    cost_usd: float

    @property
    def head(self) -> int:
        """The seq of the run's last event."""
        return self.next_seq - 1


@dataclass(frozen=True, slots=True)
class RunPage:
    """One page of ``list_runs``: newest first, and the cursor of the next page."""

    runs: list[RunRecord]
    next_cursor: str | None


Durability = Literal["normal", "full"]
"""``normal``: survives a crash of the process; ``full``: fsync every commit (see docs)."""

RawRow = tuple[str, int, str, int, str, "int | None", str, str, "str | None"]
"""A stored event row as drivers return it, in ``EncodedEvent``'s column order."""


class EncodedEvent(NamedTuple):
    """An event as the backends store it: the payload is JSON text.

    A tuple in column order, so drivers take it as a row without copying.

    ``ext`` maps JSON pointers inside ``data`` to the content hashes of strings that
    were too large to keep in line; ``None`` when nothing was moved out.
    """

    run_id: str
    seq: int
    type: str
    v: int
    ts: str
    turn: int | None
    actor: str
    data: str
    ext: str | None


class RunDelta(NamedTuple):
    """How appending a batch changes a run's registry row (a tuple: built at every append)."""

    status: RunStatus | None
    turns: int | None
    input_tokens: int
    output_tokens: int
    cost_usd: float


def narrowed(workspace: str | None, workspaces: Collection[str] | None) -> frozenset[str] | None:
    """The workspaces a listing is narrowed to (``None``: any; empty: none)."""
    if workspaces is None:
        return None if workspace is None else frozenset({workspace})
    chosen = frozenset(workspaces)
    return chosen if workspace is None else chosen & {workspace}


@dataclass(frozen=True, slots=True)
class FoldSnapshot:
    """A fold of a run's log up to ``seq``, stored as derived data (never the truth).

    ``kind`` names the fold (``session``, ``world``…), ``version`` the code that wrote
    it: a reader asks for its own version, so another Helix's snapshot is never read.
    ``run_id`` is the run whose own row is at ``seq``; a fork reads its ancestors'
    snapshots for the part of its log they hold.
    """

    run_id: str
    seq: int
    kind: str
    version: str
    data: bytes


LAST_SEQ = 2**62
"""No log reaches this seq; SQL integers (64-bit) hold it."""


@dataclass(frozen=True, slots=True)
class Segment:
    """A stretch of a stitched log that lives in one run's own rows."""

    run_id: str
    first: int
    last: int | None


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to drive one run: who holds it, until when, and its fencing epoch.

    Each take of a run's lease has an epoch one higher than the last; an append made
    with a lease is refused (``LeaseLostError``) unless its epoch is still the run's,
    so a driver that lost the run can never write to it again. ``expires_at`` is POSIX
    seconds on the clocks of the drivers that share the store.
    """

    run_id: str
    holder: str
    epoch: int
    expires_at: float

    def live(self, now: float) -> bool:
        """Whether the lease has not expired at ``now``."""
        return self.expires_at > now

    def held(self, now: float) -> bool:
        """Whether a driver holds it at ``now``: live, and not a process here that ended."""
        return self.live(now) and not holder_gone(self.holder)
