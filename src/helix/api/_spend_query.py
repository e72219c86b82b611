"""Reading a spend request's words (grouping, bucket, times, filters) into a query.

Every door takes the same words: ``by`` one of the groupings, ``bucket`` ``day`` or
``hour``, ``since``/``until`` a date (``2026-12-01``), a UTC time
(``2026-12-01T04:00:00Z``, or with an offset) or an age (``7d``, ``12h``, ``30m``:
that long before now). Anything else is a ``ConfigError`` naming the word.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from datetime import UTC, datetime, timedelta

from helix.errors import ConfigError
from helix.kernel.events import format_iso
from helix.kernel.session import SPEND_BUCKETS, SPEND_GROUPS, SpendQuery

_AGE = re.compile(r"(\d{1,6})([dhm])")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}
_LONGEST = 64


def spend_time(value: str, name: str) -> str:
    """A ``since``/``until`` word as the log writes times (UTC)."""
    text = value.strip()
    if (age := _AGE.fullmatch(text)) is not None:
        delta = timedelta(**{_UNITS[age.group(2)]: int(age.group(1))})
        return format_iso(datetime.now(UTC) - delta)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        shown = value[:_LONGEST]
        raise ConfigError(
            f"{name} {shown!r}: give a date (2026-12-01), a time (2026-12-01T04:00:00Z) "
            "or an age (7d, 12h, 30m)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return format_iso(moment.astimezone(UTC))


def spend_query(
    *,
    by: str = "model",
    bucket: str | None = None,
    since: str | None = None,
    until: str | None = None,
    workspace: str | None = None,
    workspaces: Collection[str] | None = None,
    model: str | None = None,
    provider: str | None = None,
    blueprint: str | None = None,
    person: str | None = None,
) -> SpendQuery:
    """The kernel's query for these words; ``ConfigError`` for a word it cannot take."""
    if by not in SPEND_GROUPS:
        raise ConfigError(f"by {by[:_LONGEST]!r}: choose {', '.join(SPEND_GROUPS)}")
    if bucket is not None and bucket not in SPEND_BUCKETS:
        raise ConfigError(f"bucket {bucket[:_LONGEST]!r}: choose {', '.join(SPEND_BUCKETS)}")
    return SpendQuery(
        by=by,
        bucket=bucket,
        since=None if since is None else spend_time(since, "since"),
        until=None if until is None else spend_time(until, "until"),
        workspace=workspace,
        workspaces=workspaces,
        model=model,
        provider=provider,
        blueprint=blueprint,
        person=person,
    )
