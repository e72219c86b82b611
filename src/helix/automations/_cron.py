"""Five-field cron schedules (minute hour day-of-month month day-of-week), typed and small.

Each field is ``*``, a number, a range ``a-b``, a step ``*/n``, ``a-b/n`` or ``a/n``, or
a comma-separated list of those; months and weekdays also take English three-letter
names (``jan``, ``mon``). Weekday 0 and 7 are Sunday. As in Vixie cron, when both the
day of the month and the day of the week are restricted, a day matching either fires.
Slots are computed in the schedule's time zone (UTC unless given) and returned as POSIX
seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from helix.errors import ConfigError

_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
_FIELDS: tuple[tuple[str, int, int, Sequence[str]], ...] = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _DAYS),
)
_SEARCH_YEARS = 5
"""A schedule with no slot in this many years (``0 0 30 2 *``) is refused."""


def _value(text: str, low: int, high: int, names: Sequence[str], what: str) -> int:
    word = text.lower()
    if word in names:
        return names.index(word) + (1 if what == "month" else 0)
    if not text.isdigit():
        raise ConfigError(f"cron {what}: {text!r} is not a number from {low} to {high}")
    number = int(text)
    if not low <= number <= high:
        raise ConfigError(f"cron {what}: {number} is outside {low}-{high}")
    return number


def _field(text: str, low: int, high: int, names: Sequence[str], what: str) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        spec, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) < 1:
                raise ConfigError(f"cron {what}: step {step_text!r} must be a positive number")
            step = int(step_text)
        if spec == "*":
            start, end = low, high
        elif "-" in spec:
            first, _, last = spec.partition("-")
            start, end = _value(first, low, high, names, what), _value(last, low, high, names, what)
            if start > end:
                raise ConfigError(f"cron {what}: range {spec!r} goes backwards")
        elif spec:
            start = _value(spec, low, high, names, what)
            end = high if step_text else start
        else:
            raise ConfigError(f"cron {what}: empty entry in {text!r}")
        values.update(range(start, end + 1, step))
    return frozenset(values)


def _zone(name: str) -> tzinfo:
    if name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(
            f"unknown time zone {name!r} (an IANA name like Europe/Paris, or UTC)"
        ) from None


@dataclass(frozen=True, slots=True)
class CronSchedule:
    """A parsed cron expression in a time zone; ``next_after`` walks its slots."""

    expression: str
    timezone: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    any_day: bool
    any_weekday: bool

    @classmethod
    def parse(cls, expression: str, timezone: str = "UTC") -> CronSchedule:
        """The schedule, or ``ConfigError`` saying which field is wrong and why."""
        parts = expression.split()
        if len(parts) != 5:
            raise ConfigError(
                f"cron {expression!r} needs 5 fields (minute hour day-of-month month"
                f" day-of-week), not {len(parts)}"
            )
        fields = [
            _field(part, low, high, names, what)
            for part, (what, low, high, names) in zip(parts, _FIELDS, strict=True)
        ]
        weekdays = frozenset(d % 7 for d in fields[4])
        schedule = cls(
            " ".join(parts), timezone, fields[0], fields[1], fields[2], fields[3], weekdays,
            parts[2] == "*", parts[4] == "*",
        )  # fmt: skip
        _zone(timezone)
        schedule.next_after(datetime(2001, 1, 1, tzinfo=UTC).timestamp())  # one that never fires
        return schedule

    def _day_matches(self, day: datetime) -> bool:
        in_month = day.day in self.days
        in_week = (day.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return in_month and in_week
        return in_month or in_week

    def next_after(self, after: float) -> float:
        """The first slot strictly after ``after`` (POSIX seconds)."""
        zone = _zone(self.timezone)
        moment = datetime.fromtimestamp(after, zone).replace(tzinfo=None, second=0, microsecond=0)
        moment += timedelta(minutes=1)
        limit = moment + timedelta(days=366 * _SEARCH_YEARS)
        while moment < limit:
            if moment.month not in self.months:
                year, month = (
                    (moment.year + 1, 1) if moment.month == 12 else (moment.year, moment.month + 1)
                )
                moment = datetime(year, month, 1)
            elif not self._day_matches(moment):
                moment = datetime(moment.year, moment.month, moment.day) + timedelta(days=1)
            elif moment.hour not in self.hours:
                moment = moment.replace(minute=0) + timedelta(hours=1)
            elif moment.minute not in self.minutes:
                moment += timedelta(minutes=1)
            else:
                slot = moment.replace(tzinfo=zone).timestamp()
                if slot > after:
                    return slot
                moment += timedelta(minutes=1)  # a repeated hour (DST): already passed
        raise ConfigError(
            f"cron {self.expression!r} never fires (no slot in {_SEARCH_YEARS} years)"
        )

    def slots(self, after: float, until: float, *, limit: int) -> list[float]:
        """The slots in ``(after, until]``, at most the last ``limit`` of them, oldest first."""
        found: list[float] = []
        slot = self.next_after(after)
        while slot <= until:
            found.append(slot)
            if len(found) > limit:
                del found[0]
            slot = self.next_after(slot)
        return found
