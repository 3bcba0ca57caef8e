"""The command line's duration / point-in-time grammar (core/utils/durations.py), table-driven, and
that table option values keep Java's TimeUtils grammar (a bare number is milliseconds)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.schema.options import CoreOptions
from paimon_cli.core.utils.durations import (
    MAX_DURATION_DAYS,
    UNITS,
    parse_duration,
    parse_duration_millis,
    parse_iso_duration,
    parse_iso_time,
    parse_point_in_time,
)

S, MIN, H, D = 1_000, 60_000, 3_600_000, 86_400_000
NOW = 1_800_000_000_000  # 2027-01-15


@pytest.mark.parametrize(("text", "millis"), [
    ("1ms", 1), ("250 milli", 250), ("3 millis", 3), ("1 millisecond", 1), ("2 milliseconds", 2),
    ("90s", 90 * S), ("1 sec", S), ("2 secs", 2 * S), ("1 second", S), ("10 seconds", 10 * S),
    ("30min", 30 * MIN), ("30 min", 30 * MIN), ("2 mins", 2 * MIN), ("1 minute", MIN), ("5 minutes", 5 * MIN),
    ("2h", 2 * H), ("1 hour", H), ("36 hours", 36 * H),
    ("7d", 7 * D), ("1 day", D), ("3 days", 3 * D),
    ("1w", 7 * D), ("2 weeks", 14 * D),
    ("2H", 2 * H), ("30 MIN", 30 * MIN), ("1 Day", D), ("  7 d  ", 7 * D),
    ("1.5h", 90 * MIN), ("0.5 s", 500), ("+2h", 2 * H),
    ("0s", 0), ("0 ms", 0),
    ("PT2H", 2 * H), ("P1D", D), ("p1dt2h", 26 * H), ("PT1H30M", 90 * MIN), ("PT0.25S", 250), ("PT1,5S", 1500),
    ("PT0S", 0), ("PT2H-30M", 90 * MIN), ("-PT-2H", 2 * H),
    (f"{MAX_DURATION_DAYS}d", MAX_DURATION_DAYS * D),
])
def test_durations(text: str, millis: int) -> None:
    assert parse_duration(text, "--x") == millis


@pytest.mark.parametrize(("text", "match"), [
    ("30", "needs a unit"), ("0", "needs a unit"), ("1.5", "needs a unit"), ("-5", "needs a unit"),
    ("2 m", "unknown unit 'm'"), ("5m", "unknown unit"), ("7 fortnights", "not a duration"),
    ("1 us", "unknown unit"), ("2 years", "not a duration"),
    ("-2h", "negative"), ("-PT2H", "negative"), ("PT-1S", "negative"),
    ("0.5ms", "finer than a millisecond"), ("PT0.0001S", "finer than a millisecond"),
    (f"{MAX_DURATION_DAYS + 1}d", "too long"), ("99999999999999999999999999999999w", "too long"),
    ("P1W", "not a duration"), ("P", "not a duration"), ("PT", "not a duration"), ("P1DT", "not a duration"),
    ("1h30m", "not a duration"), ("two hours", "not a duration"), ("", "not a duration"), ("h", "not a duration"),
    ("2024-05-01", "not a duration"),
])
def test_bad_durations(text: str, match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        parse_duration(text, "--x")


def test_unit_less_message_names_the_units_and_flag() -> None:
    with pytest.raises(InvalidInput) as e:
        parse_duration("30", "--time-retained")
    assert "--time-retained '30'" in str(e.value) and UNITS in str(e.value)
    with pytest.raises(InvalidInput) as e:
        parse_point_in_time("30", "--older-than", NOW)
    assert "--older-than '30'" in str(e.value) and UNITS in str(e.value) and "ISO-8601" in str(e.value)


def test_positive() -> None:
    assert parse_duration("1 ms", "--x", positive=True) == 1
    for zero in ("0 s", "PT0S", "0.0h"):
        with pytest.raises(InvalidInput, match="positive"):
            parse_duration(zero, "--x", positive=True)


def _local_millis(*args: int) -> int:
    return int(datetime.datetime(*args).timestamp() * 1000)  # type: ignore[misc]


@pytest.mark.parametrize(("text", "millis"), [
    ("2h", NOW - 2 * H), ("90 min", NOW - 90 * MIN), ("P1D", NOW - D), ("1.5h", NOW - 90 * MIN),
    ("0s", NOW), ("PT0S", NOW),
    ("2024-05-01T00:00:00Z", 1714521600000), ("2024-05-01T00:00:00z", 1714521600000),
    ("2024-05-01T02:00:00+02:00", 1714521600000), ("2024-05-01 00:00:00+00:00", 1714521600000),
    ("2024-05-01T00:00:00.123Z", 1714521600123), ("2024-05-01T00:00:00.1239Z", 1714521600123),
    ("2024-05-01T12:30:00", _local_millis(2024, 5, 1, 12, 30)), ("2024-05-01 12:30:00", _local_millis(2024, 5, 1, 12, 30)),
    ("2024-05-01", _local_millis(2024, 5, 1)),
    ("1970-01-01T00:00:00Z", 0),
])
def test_points_in_time(text: str, millis: int) -> None:
    assert parse_point_in_time(text, "--older-than", NOW) == millis


@pytest.mark.parametrize(("text", "match"), [
    ("30", "bare number is ambiguous"), ("1714521600000", "bare number is ambiguous"), ("20240501", "ambiguous"),
    ("-5", "ambiguous"),
    ("2999-01-01T00:00:00", "later than now"), ("2027-01-15T08:00:01Z", "later than now"),
    ("1969-12-31T23:59:59Z", "before 1970"), ("60000d", "before 1970"),
    ("-2h", "negative"), ("0.5ms", "finer than a millisecond"), (f"{MAX_DURATION_DAYS + 1} d", "too long"),
    ("yesterday", "not a duration or time"), ("2024-13-01", "not a duration or time"),
    ("2024-05-01T25:00", "not a duration or time"), ("", "not a duration or time"), ("5 m", "unknown unit"),
])
def test_bad_points_in_time(text: str, match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        parse_point_in_time(text, "--older-than", NOW)


def test_now_defaults_to_the_clock() -> None:
    import time

    before = int(time.time() * 1000)
    got = parse_point_in_time("1h", "--older-than")
    assert before - H <= got <= int(time.time() * 1000) - H


def test_iso_helpers() -> None:
    assert parse_iso_duration("P1DT2H") == Decimal(93600)
    assert parse_iso_duration("PT0.25S") == Decimal("0.25")
    assert parse_iso_duration("-PT1M") == Decimal(-60)
    assert parse_iso_duration("nope") is None and parse_iso_duration("P1DT") is None
    assert parse_iso_time("2024-05-01T00:00:00Z") == 1714521600000
    assert parse_iso_time("nope") is None and parse_iso_time("0001-01-01") is None


# Table option values are not the command-line grammar: they keep Java's TimeUtils semantics,
# where a bare number is milliseconds (tables written by Java carry such values).
def test_table_option_bare_numbers_stay_java_milliseconds() -> None:
    assert parse_duration_millis("30", "snapshot.time-retained") == 30
    opts = CoreOptions({"snapshot.time-retained": "30", "changelog.time-retained": "5m",
                        "partition.expiration-time": "86400000"})
    assert opts.snapshot_time_retained_millis == 30
    assert opts.changelog_time_retained_millis == 5 * MIN  # Java's "m" is minutes
    assert opts.get_duration_millis("partition.expiration-time") == D


# Java's TimeUtils.parseDuration, label by label: ASCII digits, String.trim (code points up to
# U+0020), Locale.US lower case, and the value must fit Java's long milliseconds.
@pytest.mark.parametrize(("text", "millis"), [
    ("1 d", D), ("2 days", 2 * D), ("3 H", 3 * H), ("1 hours", H), ("5m", 5 * MIN), ("2 MIN", 2 * MIN),
    ("1 minutes", MIN), ("4 secs", 4 * S), ("7 second", 7 * S), ("12 millis", 12), ("12 milliseconds", 12),
    ("1500 \u00b5s", 1), ("2500 micros", 2), ("999 micro", 0), ("3000000 ns", 3),
    ("5000000 nanos", 5), ("\t1 h\n", H), ("0", 0), ("007 s", 7 * S),
    ("9223372036854775807", 2**63 - 1), ("9223372036854775807 ns", 9223372036854),
])
def test_table_option_durations_follow_java_time_utils(text: str, millis: int) -> None:
    assert parse_duration_millis(text, "k") == millis


@pytest.mark.parametrize("text", [
    "", "  ", "h", "+1 h", "-1 h", "1.5 h", "1 h 30 min", "1 w", "1 us", "1 fortnight", "1h2",
    "\u0661 h",  # an Arabic-Indic digit: not Java's '0'..'9'
    "1\u00a0h",  # a no-break space is no whitespace to String.trim
    "9223372036854775808",  # numeric overflow of Long.parseLong
    "106751991167301 d",  # more milliseconds than a long holds
])
def test_table_option_durations_java_refuses_are_refused(text: str) -> None:
    with pytest.raises(InvalidInput, match="option k="):
        parse_duration_millis(text, "k")
