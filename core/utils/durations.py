"""The one home of duration and point-in-time grammars: table option values and the command line.

Table option values (``snapshot.time-retained = 1 h``) follow Java's ``TimeUtils.parseDuration``
(:func:`parse_duration_millis`): ASCII digits, an optional unit label, and a bare number meaning
milliseconds, because tables written by Java carry such values. The command line is stricter
(:func:`parse_duration`, :func:`parse_point_in_time`): a bare number is refused, since
``--expiration-time 30`` read as 30 ms used to select every partition.

* a command-line *duration* is a number (decimals allowed) with a unit, case-insensitive,
  optionally spaced (``90s``, ``30 min``, ``1.5h``, ``7 d``), or ISO-8601 ``PnDTnHnMn.nS`` as
  Java's ``Duration.parse`` reads it (``PT2H``, ``P1D``); never negative, whole milliseconds, at
  most :data:`MAX_DURATION_DAYS` days;
* a *point in time* (``--older-than``) is a duration back from now or an ISO-8601 time
  (``2024-05-01``, ``2024-05-01T12:00:00``: local time; ``...+02:00`` / ``...Z``: that
  offset), between 1970-01-01 and now. A bare number is refused as ambiguous (epoch millis
  or a duration without unit).
"""

from __future__ import annotations

import datetime
import re
import time
from decimal import Decimal

from ..errors import InvalidInput

_DAY = 86_400_000
_NANOS_PER_MILLI = 1_000_000
# Java TimeUtils.TimeUnit labels -> nanoseconds
_JAVA_UNIT_NANOS: dict[str, int] = {}
for _names, _ns in (
    (("d", "day", "days"), _DAY * _NANOS_PER_MILLI),
    (("h", "hour", "hours"), 3_600_000 * _NANOS_PER_MILLI),
    (("min", "m", "minute", "minutes"), 60_000 * _NANOS_PER_MILLI),
    (("s", "sec", "secs", "second", "seconds"), 1_000 * _NANOS_PER_MILLI),
    (("ms", "milli", "millis", "millisecond", "milliseconds"), _NANOS_PER_MILLI),
    (("\u00b5s", "micro", "micros", "microsecond", "microseconds"), 1_000),
    (("ns", "nano", "nanos", "nanosecond", "nanoseconds"), 1),
):
    for _n in _names:
        _JAVA_UNIT_NANOS[_n] = _ns
# The command line: Java's units of a millisecond or more except 'm' (minutes or months?),
# plus 'mins' and weeks.
_UNIT_MILLIS: dict[str, int] = {
    n: ns // _NANOS_PER_MILLI for n, ns in _JAVA_UNIT_NANOS.items() if ns >= _NANOS_PER_MILLI and n != "m"
}
_UNIT_MILLIS.update({"mins": 60_000, "w": 7 * _DAY, "week": 7 * _DAY, "weeks": 7 * _DAY})
_LONG_MAX = 2**63 - 1

MAX_DURATION_DAYS = 365_000  # ~1000 years: keeps every date computed from it in datetime's range
UNITS = "ms, s, min, h, d, w"
DURATION_GRAMMAR = f"a number with a unit {UNITS} (90s, 30 min, 1.5h, 7d) or ISO-8601 (PT2H, P1D)"
TIME_GRAMMAR = (
    "a duration back from now or an ISO-8601 time (2024-05-01T12:00:00 is local time; add +02:00 or Z "
    "for an offset)"
)

# Patterns, compiled by re's cache on first use (not at import: every command imports this
# module for its help text, few parse a duration; start-up, issue 28).
_NUMBER_UNIT = r"([-+]?\d+(?:\.\d+)?)\s*([^\d\s.+-]+)"
_BARE_NUMBER = r"[-+]?\d+(?:\.\d*)?"
# Java's Duration.parse: optional sign, days, then a T section with hours, minutes, seconds
_ISO_DURATION = r"([-+]?)P(?:([-+]?\d+)D)?(T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+(?:[.,]\d{0,9})?)S)?)?"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_MILLI = datetime.timedelta(milliseconds=1)


def parse_duration_millis(text: str, key: str = "duration") -> int:
    """A table option's duration (Java ``TimeUtils.parseDuration``) to milliseconds: ``"1 h"``,
    ``"30 min"``, ``"2h"``, ``"5m"`` (minutes), ``"500"`` (a bare number is milliseconds)."""
    trimmed = _java_trim(text)
    digits = len(trimmed) - len(trimmed.lstrip("0123456789"))
    unit = _java_trim(trimmed[digits:]).lower()
    nanos = _JAVA_UNIT_NANOS.get(unit or "ms")
    if digits == 0 or nanos is None:
        raise InvalidInput(f"option {key}={text!r}: not a duration (e.g. '1 h', '30 min', '10 s')")
    value = int(trimmed[:digits])
    millis = value * nanos // _NANOS_PER_MILLI
    if value > _LONG_MAX or millis > _LONG_MAX:
        raise InvalidInput(f"option {key}={text!r}: too long (Java's limit is 2^63-1 milliseconds)")
    return millis


def _java_trim(text: str) -> str:
    """Java's ``String.trim``: strips code points up to U+0020 (not Unicode spaces)."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def parse_iso_duration(text: str) -> Decimal | None:
    """ISO-8601 ``PnDTnHnMn.nS`` (what Java's ``Duration.parse`` accepts) to signed seconds,
    or None when ``text`` is not one. Also reads ``tagTimeRetained`` strings of tag files."""
    m = re.fullmatch(_ISO_DURATION, text.strip(), re.IGNORECASE)
    if not m or not any(m.group(i) for i in (2, 4, 5, 6)) or m.group(3) and len(m.group(3)) == 1:
        return None  # "P", "PT" and "P1DT" are refused by Java too
    days, hours, mins = (Decimal(m.group(i) or 0) for i in (2, 4, 5))  # Decimal: no int digit limit
    secs = Decimal((m.group(6) or "0").replace(",", "."))
    total = days * 86400 + hours * 3600 + mins * 60 + secs
    return -total if m.group(1) == "-" else total


def parse_iso_time(text: str) -> int | None:
    """An ISO-8601 date or date-time to epoch millis (no offset: local time, as Paimon's
    ``scan.timestamp``), or None when ``text`` is not one (or outside what the OS can map)."""
    s = text.strip()
    if s[-1:] in ("Z", "z"):
        s = s[:-1] + "+00:00"  # Python 3.10's fromisoformat has no Z
    try:
        value = datetime.datetime.fromisoformat(s)
        if value.tzinfo is None:
            value = value.astimezone()
        return (value - _EPOCH) // _MILLI
    except (ValueError, OverflowError, OSError):
        return None


def parse_duration(text: str, flag: str, positive: bool = False) -> int:
    """A command-line duration (see module doc) to milliseconds; ``positive`` refuses zero."""
    millis = _duration_millis(text, flag)
    if millis is None:
        if re.fullmatch(_BARE_NUMBER, text.strip()):
            n = text.strip().lstrip("+-")
            raise InvalidInput(
                f"{flag} {text!r}: a duration needs a unit ({UNITS}, e.g. {n}s or {n}d) or ISO-8601 (PT2H); "
                "a bare number is not accepted"
            )
        raise InvalidInput(f"{flag} {text!r}: not a duration; expected {DURATION_GRAMMAR}")
    if positive and millis == 0:
        raise InvalidInput(f"{flag} {text!r}: must be a positive duration")
    return millis


def parse_point_in_time(text: str, flag: str, now_millis: int | None = None) -> int:
    """A command-line point in time (a duration back from now or an ISO-8601 time, see module
    doc) to epoch millis; refused when later than now or before 1970."""
    now = int(time.time() * 1000) if now_millis is None else now_millis
    t = text.strip()
    if re.fullmatch(_BARE_NUMBER, t):
        raise InvalidInput(
            f"{flag} {text!r}: a bare number is ambiguous (epoch millis, or a duration without unit); give a "
            f"duration with a unit ({UNITS}, e.g. {t.lstrip('+-')}d) or an ISO-8601 time (2024-05-01T12:00:00)"
        )
    millis = _duration_millis(text, flag)
    if millis is not None:
        cutoff = now - millis
    else:
        iso = parse_iso_time(t) if t[:1].isdigit() else None
        if iso is None:
            raise InvalidInput(
                f"{flag} {text!r}: not a duration or time; expected {TIME_GRAMMAR}, where a duration is "
                f"{DURATION_GRAMMAR}"
            )
        cutoff = iso
    if cutoff > now:
        raise InvalidInput(f"{flag} {text!r} is later than now")
    if cutoff < 0:
        raise InvalidInput(f"{flag} {text!r} is before 1970-01-01T00:00:00Z")
    return cutoff


def _duration_millis(text: str, flag: str) -> int | None:
    """Milliseconds of a duration with a unit or ISO-8601; None when ``text`` is neither
    (out-of-range, negative and sub-millisecond values are refused here)."""
    t = text.strip()
    m = re.fullmatch(_NUMBER_UNIT, t)
    if m:
        unit = _UNIT_MILLIS.get(m.group(2).lower())
        if unit is None:
            hint = "; minutes are min" if m.group(2).lower() == "m" else ""  # Java's m, or months?
            raise InvalidInput(f"{flag} {text!r}: not a duration (unknown unit {m.group(2)!r}{hint}); expected "
                               f"{DURATION_GRAMMAR}")
        value = Decimal(m.group(1)) * unit
    elif t.lstrip("+-")[:1] in ("P", "p"):
        secs = parse_iso_duration(t)
        if secs is None:
            return None
        value = secs * 1000
    else:
        return None
    if value < 0:
        raise InvalidInput(f"{flag} {text!r}: a duration must not be negative")
    if value > MAX_DURATION_DAYS * _DAY:
        raise InvalidInput(f"{flag} {text!r}: too long (at most {MAX_DURATION_DAYS} d)")
    if value != value.to_integral_value():
        raise InvalidInput(f"{flag} {text!r}: finer than a millisecond")
    return int(value)


# HiveConf.unitFor: a unit is its short name or any word starting with its long prefix
_HIVE_UNITS = (("d", "day", _DAY * _NANOS_PER_MILLI), ("h", "hour", 3_600_000 * _NANOS_PER_MILLI),
               ("m", "min", 60_000 * _NANOS_PER_MILLI), ("s", "sec", 1_000 * _NANOS_PER_MILLI),
               ("ms", "msec", _NANOS_PER_MILLI), ("us", "usec", 1_000), ("ns", "nsec", 1))


def parse_hive_time_millis(text: str, key: str, default_unit_nanos: int) -> int:
    """A time-valued Hive setting (``HiveConf.toTime``) to milliseconds, truncated as Java's
    ``TimeUnit.convert``: whole number, then an optional unit (``600s``, ``10min``, ``2 h``,
    ``1500ms``, ``30sec``); no unit (or ``l``) means the setting's own unit. Negative values
    are refused (Java's socket would refuse them later)."""
    trimmed = _java_trim(text)
    body = trimmed.lstrip("-")
    digits = len(body) - len(body.lstrip("0123456789"))
    number, unit = trimmed[:len(trimmed) - len(body) + digits], _java_trim(body[digits:]).lower()
    nanos = default_unit_nanos if unit in ("", "l") else next(
        (ns for short, prefix, ns in _HIVE_UNITS if unit == short or unit.startswith(prefix)), None)
    if digits == 0 or number.count("-") > 1 or nanos is None:
        raise InvalidInput(f"{key}={text!r}: not a time (e.g. 600s, 10min, 1500ms; a bare number is "
                           "in the setting's unit)")
    value = int(number)
    if value < 0:
        raise InvalidInput(f"{key}={text!r}: must not be negative")
    return value * nanos // _NANOS_PER_MILLI
