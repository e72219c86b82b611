"""How runs read in a listing: short ids, times as people say them, driver and fork marks.

Listings print ids shortened to what tells them apart (``run_`` and at least 8 more
characters): any unique prefix names a run wherever an id does, so the short id can
be copied as it is. ``--json`` keeps full ids and ISO times.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from helix.api import Run

SHORT = len("run_") + 8
"""The shortest id a listing prints (more where two listed ids share that much)."""


def short_ids(ids: Iterable[str]) -> dict[str, str]:
    """Each id shortened to ``SHORT`` characters, or more until no other listed id shares it."""
    every = sorted(set(ids))
    shown: dict[str, str] = {}
    for index, full in enumerate(every):
        neighbours = every[max(0, index - 1) : index] + every[index + 1 : index + 2]
        length = SHORT
        for other in neighbours:  # sorted: the longest shared start is with a neighbour
            length = max(length, _shared(full, other) + 1)
        shown[full] = full[:length]
    return shown


def _shared(a: str, b: str) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def ago(iso: str, now: datetime | None = None) -> str:
    """``12s ago``, ``3m ago``, ``5h ago``, ``4d ago``; the date past a month."""
    try:
        then = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    seconds = max(0, int(((now or datetime.now(UTC)) - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count}{unit} ago" if unit != "d" or count < 31 else then.date().isoformat()
    return f"{seconds}s ago"


def status_text(run: Run, shown_id: str | None = None) -> str:
    """The run's status, and whether something drives it.

    ``running (driven)``; ``running (no driver: helix resume ID)`` for a run that looks
    active while nothing drives it; the bare status once it has ended (or when the
    answer does not say, from an older server).
    """
    if run.stalled:
        return f"{run.status} (no driver: helix resume {shown_id or run.id})"
    if run.driven:
        return f"{run.status} (driven)"
    return run.status


def fork_mark(run: Run, shown: dict[str, str] | None = None) -> str:
    """``↳ run_ab12cd34@t2``: the parent a fork branched from, and at the end of which turn."""
    if run.parent is None:
        return ""
    parent = (shown or {}).get(run.parent.run_id, run.parent.run_id)
    where = f"t{run.parent.turn}" if run.parent.turn is not None else f"seq {run.parent.seq}"
    return f"↳ {parent}@{where}"
