"""The cron parser, the slot arithmetic and the webhook signature, exactly."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helix.automations import (
    MISSED_ALL_CAP,
    CronSchedule,
    SignatureError,
    check_signature,
    sign,
    slots_to_fire,
)
from helix.errors import ConfigError


def _at(*parts: int, zone: str = "UTC") -> float:
    tz = UTC if zone == "UTC" else ZoneInfo(zone)
    return datetime(*parts, tzinfo=tz).timestamp()  # type: ignore[arg-type,misc]


def _show(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%a %Y-%m-%d %H:%M")


@pytest.mark.parametrize(
    ("expression", "after", "expected"),
    [
        ("* * * * *", (2030, 1, 1, 12, 0, 30), ["Tue 2030-01-01 12:01", "Tue 2030-01-01 12:02"]),
        (
            "*/15 9-17 * * mon-fri",
            (2030, 1, 4, 17, 40),
            ["Fri 2030-01-04 17:45", "Mon 2030-01-07 09:00"],
        ),
        ("0 0 29 feb *", (2030, 1, 1, 0, 0), ["Sun 2032-02-29 00:00", "Fri 2036-02-29 00:00"]),
        ("30 4 1,15 * 5", (2030, 1, 1, 0, 0), ["Tue 2030-01-01 04:30", "Fri 2030-01-04 04:30"]),
        ("0 12 * * 7", (2030, 1, 1, 0, 0), ["Sun 2030-01-06 12:00", "Sun 2030-01-13 12:00"]),
        ("5/20 0 1 jan *", (2030, 1, 1, 0, 0), ["Tue 2030-01-01 00:05", "Tue 2030-01-01 00:25"]),
    ],
)
def test_slots_are_the_ones_cron_means(
    expression: str, after: tuple[int, ...], expected: list[str]
) -> None:
    schedule = CronSchedule.parse(expression)
    first = schedule.next_after(_at(*after))
    assert [_show(first), _show(schedule.next_after(first))] == expected


def test_a_time_zone_moves_the_slots() -> None:
    schedule = CronSchedule.parse("0 9 * * *", "Europe/Paris")
    slot = schedule.next_after(_at(2030, 7, 1, 0, 0))
    assert _show(slot) == "Mon 2030-07-01 07:00"  # 09:00 in Paris in summer


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("* * * *", "needs 5 fields"),
        ("60 * * * *", "outside 0-59"),
        ("* 24 * * *", "outside 0-23"),
        ("* * 0 * *", "outside 1-31"),
        ("* * * 13 *", "outside 1-12"),
        ("* * * * 8", "outside 0-7"),
        ("*/0 * * * *", "step"),
        ("5-1 * * * *", "backwards"),
        ("a * * * *", "not a number"),
        ("1,,2 * * * *", "empty entry"),
        ("0 0 31 4 *", "never fires"),
    ],
)
def test_bad_expressions_say_what_is_wrong(expression: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        CronSchedule.parse(expression)
    with pytest.raises(ConfigError, match="time zone"):
        CronSchedule.parse("* * * * *", "Nowhere/Town")


@given(
    st.floats(min_value=0, max_value=4e9),
    st.sampled_from(["* * * * *", "*/7 3 * * 1-5", "0 0 1 * *"]),
)
def test_the_next_slot_is_later_matching_and_none_is_skipped(after: float, expression: str) -> None:
    schedule = CronSchedule.parse(expression)
    slot = schedule.next_after(after)
    assert slot > after
    assert slot % 60 == 0
    moment = datetime.fromtimestamp(slot, UTC)
    assert moment.minute in schedule.minutes
    assert moment.hour in schedule.hours


def test_missed_slots_follow_the_policy_and_on_time_ones_all_fire() -> None:
    schedule = CronSchedule.parse("* * * * *")
    start = _at(2030, 1, 1, 12, 0, 30)
    down_until = start + 300  # 12:05:30: slots 12:01 … 12:05 passed while down
    later = down_until + 120  # and 12:06, 12:07 on time
    plan = {
        policy: slots_to_fire(schedule, policy, floor=start, started_at=down_until, now=later)
        for policy in ("skip", "once", "all")
    }
    on_time = [_at(2030, 1, 1, 12, 6), _at(2030, 1, 1, 12, 7)]
    assert plan["skip"] == on_time
    assert plan["once"] == [_at(2030, 1, 1, 12, 5), *on_time]
    assert plan["all"] == [_at(2030, 1, 1, 12, m) for m in range(1, 8)]
    # nothing at or before the floor, and ``all`` is capped (the latest slots)
    assert slots_to_fire(schedule, "all", floor=later, started_at=down_until, now=later) == []
    day = slots_to_fire(schedule, "all", floor=start, started_at=start + 86400, now=start + 86400)
    assert len(day) == MISSED_ALL_CAP
    assert day[-1] == _at(2030, 1, 2, 12, 0)


def test_a_signature_is_checked_exactly() -> None:
    body = b'{"ref": "main"}'
    good = sign("whsec_k", "1000", body)
    check_signature("whsec_k", "1000", good, body, now=1000.0)
    check_signature("whsec_k", "1000", good, body, now=1300.0)  # the window's edge
    for secret, stamp, signature, sent, now in [
        ("whsec_other", "1000", good, body, 1000.0),
        ("whsec_k", "1001", good, body, 1000.0),
        ("whsec_k", "1000", good, body + b" ", 1000.0),
        ("whsec_k", "1000", good, body, 1300.5),
        ("whsec_k", "1000", good, body, 699.0),
        ("whsec_k", "soon", good, body, 1000.0),
        ("whsec_k", "nan", good, body, 1000.0),
        ("whsec_k", None, good, body, 1000.0),
        ("whsec_k", "1000", None, body, 1000.0),
    ]:
        with pytest.raises(SignatureError):
            check_signature(secret, stamp, signature, sent, now=now)
