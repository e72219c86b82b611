"""Which cron slots to fire now: the on-time ones, and the missed ones per the policy.

A slot earlier than the moment this scheduler started passed while no scheduler of this
process ran: it is *missed*, and the automation's policy decides (``skip``: none;
``once``: the latest; ``all``: each, at most ``MISSED_ALL_CAP``, the latest ones). Slots
at or after the start are on time and all fire. Slots at or before the automation's
cursor (its latest claimed slot, or when it was made or last resumed) are done, and
none older than ``MISSED_LOOKBACK_S`` is ever fired. Another server may have fired a
slot this one thinks missed: the claim decides, so it fires once either way.
"""

from __future__ import annotations

from ._cron import CronSchedule
from ._model import MISSED_ALL_CAP, MISSED_LOOKBACK_S, MissedPolicy


def slots_to_fire(
    schedule: CronSchedule,
    missed: MissedPolicy,
    *,
    floor: float,
    started_at: float,
    now: float,
) -> list[float]:
    """The slots in ``(floor, now]`` to fire now, oldest first."""
    floor = max(floor, now - MISSED_LOOKBACK_S)
    boundary = started_at - 1e-6
    fire: list[float] = []
    if missed != "skip" and floor < boundary:
        passed = schedule.slots(floor, min(boundary, now), limit=MISSED_ALL_CAP)
        fire += passed[-1:] if missed == "once" else passed
    fire += schedule.slots(max(floor, boundary), now, limit=MISSED_ALL_CAP)
    return fire
