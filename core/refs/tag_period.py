"""Automatic tag names: ``tag.creation-period`` with its formatter, and the time a snapshot
is tagged for (Java's TagPeriodHandler and TagTimeExtractor)."""

from __future__ import annotations

import datetime
import re
import zoneinfo
from collections.abc import Callable

from ..errors import InvalidInput
from ..schema.options import CoreOptions
from ..utils.durations import parse_duration_millis
from .snapshot import Snapshot

TimeExtractor = Callable[[Snapshot], datetime.datetime | None]


class TagPeriod:
    """One ``tag.creation-period`` with its ``tag.period-formatter`` (0.9 and 1.x names).

    Java formats the tag time with fixed patterns and parses names back to tell auto tags
    from manual ones; the 0.9 patterns resolve leniently (a 13th month rolls over), the
    1.x-only ones (``without_dashes_and_spaces``, ``tag.creation-period-duration``) strictly.
    """

    def __init__(self, seconds: int, layout: str, daily: bool = False) -> None:
        self.seconds = seconds
        self.layout = layout  # dashes | nodashes | compact-hour | minute (+ " HH" in dashes/nodashes when hourly)
        self.daily = daily

    @classmethod
    def of(cls, options: CoreOptions) -> TagPeriod:
        duration = options.get("tag.creation-period-duration")
        if duration:
            return cls(parse_duration_millis(duration, "tag.creation-period-duration") // 1000, "minute")
        period = (options.get("tag.creation-period") or "daily").lower()
        fmt = (options.get("tag.period-formatter") or "with_dashes").lower()
        if fmt not in ("with_dashes", "without_dashes", "without_dashes_and_spaces"):
            raise InvalidInput(f"tag.period-formatter={fmt!r}: expected with_dashes or without_dashes")
        if period == "daily":
            return cls(86400, "dashes" if fmt == "with_dashes" else "nodashes", daily=True)
        if period == "hourly":
            layout = {"with_dashes": "dashes-hour", "without_dashes": "nodashes-hour"}.get(fmt, "compact-hour")
            return cls(3600, layout)
        if period == "two-hours":
            return cls(7200, "dashes-hour")
        raise InvalidInput(f"tag.creation-period={period!r}: expected daily, hourly or two-hours")

    def to_tag(self, t: datetime.datetime) -> str:
        y = str(t.year)
        if self.layout == "dashes":
            return f"{y}-{t.month:02d}-{t.day:02d}"
        if self.layout == "nodashes":
            return f"{y}{t.month:02d}{t.day:02d}"
        if self.layout == "dashes-hour":
            return f"{y}-{t.month:02d}-{t.day:02d} {t.hour:02d}"
        if self.layout == "nodashes-hour":
            return f"{y}{t.month:02d}{t.day:02d} {t.hour:02d}"
        if self.layout == "compact-hour":
            return f"{t.year:04d}{t.month:02d}{t.day:02d}{t.hour:02d}"
        return f"{t.year:04d}{t.month:02d}{t.day:02d}{t.hour:02d}{t.minute:02d}"

    _PATTERNS = {
        "dashes": (r"(\d{1,10})-(\d{2})-(\d{2})", True),
        "nodashes": (r"(\d{1,10})(\d{2})(\d{2})", True),
        "dashes-hour": (r"(\d{1,10})-(\d{2})-(\d{2}) (\d{2})", True),
        "nodashes-hour": (r"(\d{1,10})(\d{2})(\d{2}) (\d{2})", True),
        "compact-hour": (r"(\d{4})(\d{2})(\d{2})(\d{2})", False),
        "minute": (r"(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})", False),
    }

    def to_time(self, name: str) -> datetime.datetime | None:
        """The tag's time, or None if ``name`` is not an auto tag of this period."""
        if self.daily:
            name = name.split(" ")[0]
        pattern, lenient = self._PATTERNS[self.layout]
        m = re.fullmatch(pattern, name)
        if m is None:
            return None
        parts = [int(g) for g in m.groups()] + [0, 0]
        y, mo, d, h, mi = parts[:5]
        try:
            if lenient:
                months = y * 12 + mo - 1
                base = datetime.datetime(months // 12, months % 12 + 1, 1)
                return base + datetime.timedelta(days=d - 1, hours=h, minutes=mi)
            return datetime.datetime(y, mo, d, h, mi)
        except (ValueError, OverflowError):
            return None

    def previous_tag(self, t: datetime.datetime) -> datetime.datetime:
        """Java's normalizeToPreviousTag: floor the wall clock to the period, minus one period."""
        epoch = datetime.datetime(1970, 1, 1)
        millis = (t - epoch) // datetime.timedelta(milliseconds=1)
        period_ms = self.seconds * 1000
        q = abs(millis) // period_ms
        floored = (q if millis >= 0 else -q) * period_ms  # Java long division truncates
        return epoch + datetime.timedelta(milliseconds=floored) - datetime.timedelta(seconds=self.seconds)

    def next_tag(self, t: datetime.datetime) -> datetime.datetime:
        return t + datetime.timedelta(seconds=self.seconds)


_OFFSET = re.compile(r"(?:(UTC|GMT|UT))?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?")


def java_zone(name: str, key: str) -> datetime.tzinfo:
    """A zone as Java's ``ZoneId.of`` reads it: a region (``Asia/Shanghai``), ``Z`` / ``UTC`` /
    ``GMT``, or an offset, bare or after UTC / GMT / UT (``+08:00``, ``GMT-8``)."""
    text = name.strip()
    if text.upper() in ("Z", "UTC", "GMT", "UT"):
        return datetime.timezone.utc
    m = _OFFSET.fullmatch(text)
    if m:
        sign = -1 if m.group(2) == "-" else 1
        h, mi, sec = int(m.group(3)), int(m.group(4) or 0), int(m.group(5) or 0)
        if h <= 18 and mi < 60 and sec < 60:
            return datetime.timezone(sign * datetime.timedelta(hours=h, minutes=mi, seconds=sec))
    try:
        return zoneinfo.ZoneInfo(text)
    except Exception as e:  # noqa: BLE001 - any unknown or malformed id
        raise InvalidInput(f"{key}={name!r}: unknown time zone") from e


def tag_time_extractor(options: CoreOptions) -> TimeExtractor | None:
    """``tag.automatic-creation``: None for none/batch (batch tags are Flink's), else a function
    snapshot -> local tag time or None. Process time is read in ``sink.process-time-zone``
    (Java 2.x; default and before: the machine's zone), watermarks in ``sink.watermark-time-zone``."""
    mode = (options.get("tag.automatic-creation") or "none").lower()
    if mode in ("none", "batch"):
        return None
    if mode == "process-time":
        process_zone = options.get("sink.process-time-zone")
        if process_zone is None:
            return lambda s: datetime.datetime.fromtimestamp(s.time_millis / 1000)
        pzone = java_zone(process_zone, "sink.process-time-zone")
        return lambda s: datetime.datetime.fromtimestamp(s.time_millis / 1000, pzone).replace(tzinfo=None)
    if mode == "watermark":
        zone = java_zone(options.get("sink.watermark-time-zone") or "UTC", "sink.watermark-time-zone")
        long_min = -(2**63)

        def from_watermark(s: Snapshot) -> datetime.datetime | None:
            if s.watermark is None or s.watermark == long_min:
                return None
            utc = datetime.datetime.fromtimestamp(s.watermark / 1000, datetime.timezone.utc)
            return utc.astimezone(zone).replace(tzinfo=None)

        return from_watermark
    raise InvalidInput(f"tag.automatic-creation={mode!r}: expected none, process-time, watermark or batch")
