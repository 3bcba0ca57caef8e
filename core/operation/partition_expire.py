"""Partition expiration: drop whole partitions older than a duration, as Java's PartitionExpire.

Two strategies (``partition.expiration-strategy``):

* ``values-time`` (default): the time is read from the partition *values*. Without a
  pattern the first partition column is the time; ``partition.timestamp-pattern`` (e.g.
  ``$dt $hour:00:00``) builds a string from several columns, parsed with
  ``partition.timestamp-formatter`` (a Java ``DateTimeFormatter`` pattern) or, without
  one, Paimon's lenient ``yyyy-MM-dd[ HH:mm:ss[.SSSSSSSSS]]``. A partition expires when
  that time is strictly before ``now - expiration``. Values that do not parse (or are
  NULL) never expire, as in Java.
* ``update-time``: a partition expires when its newest live data file was created before
  ``now - expiration``.

Unlike Java (apache/paimon#6439, whose fix was reverted upstream), values are *typed*: a
DATE or TIMESTAMP column is a time by itself (pattern ``$col`` or no pattern), and in a
compound pattern it renders as ``yyyy-MM-dd`` / ``yyyy-MM-dd HH:mm:ss[.f]`` instead of
Java's internal epoch-day integer. STRING, CHAR, VARCHAR and integer columns behave
exactly as in Java. The expired partitions are sorted by their joined values, limited by
``max_expires`` (``partition.expiration-max-num``, 100, as Java 2.x), and dropped in one OVERWRITE
commit (or batches of ``partition.expiration-batch-size``) through ``FileStoreCommit.drop_partitions``.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from .scan import FileStoreScan

if TYPE_CHECKING:
    from ..manifest.manifest import ManifestEntry
    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable

STRATEGIES = ("values-time", "update-time")
INT_MAX = 2**31 - 1


# ---------------------------------------------------------------------------------------
# Java DateTimeFormatter patterns (the subset partition times use)
# ---------------------------------------------------------------------------------------


class JavaDateTimePattern:
    """Parser for a ``DateTimeFormatter.ofPattern`` pattern with SMART resolution.

    Supported letters: ``y``/``u`` (year), ``M`` (month, numeric), ``d``, ``H``, ``m``, ``s``
    and ``S`` (fraction), quoted literals and any non-letter literal. Field widths follow
    Java: one letter is 1..19 digits, two letters exactly two digits, ``yyyy`` four or more.
    """

    _FIELDS = {"y": "year", "u": "year", "M": "month", "d": "day", "H": "hour", "m": "minute", "s": "second"}

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        regex: list[str] = []
        self.groups: list[str] = []
        i = 0
        n = len(pattern)
        while i < n:
            c = pattern[i]
            if c == "'":
                j = i + 1
                lit = []
                while True:
                    if j >= n:
                        raise InvalidInput(f"timestamp formatter {pattern!r}: unterminated quote")
                    if pattern[j] == "'":
                        if j + 1 < n and pattern[j + 1] == "'":
                            lit.append("'")
                            j += 2
                            continue
                        break
                    lit.append(pattern[j])
                    j += 1
                regex.append(re.escape("".join(lit) if lit else "'"))
                i = j + 1
                continue
            if c.isascii() and c.isalpha():
                j = i
                while j < n and pattern[j] == c:
                    j += 1
                count = j - i
                regex.append(self._field(c, count))
                i = j
                continue
            if c in "[]{}#":
                raise InvalidInput(f"timestamp formatter {pattern!r}: {c!r} is reserved / not supported")
            regex.append(re.escape(c))
            i += 1
        self.regex = re.compile("".join(regex))
        if "year" not in self.groups or "month" not in self.groups or "day" not in self.groups:
            # Java: neither LocalDateTime nor LocalDate can be built -> every value fails to parse
            self.has_date = False
        else:
            self.has_date = True

    def _field(self, c: str, count: int) -> str:
        name = "fraction" if c == "S" else self._FIELDS.get(c)
        if name is None:
            raise InvalidInput(
                f"timestamp formatter {self.pattern!r}: pattern letter {c!r} is not supported "
                "(use y/u, M, d, H, m, s, S and literals)"
            )
        if name in self.groups:
            raise InvalidInput(f"timestamp formatter {self.pattern!r}: field {c!r} appears twice")
        if count > (9 if name == "fraction" else 19):  # Java: "Too many pattern letters"
            shown = self.pattern if len(self.pattern) <= 40 else self.pattern[:37] + "..."
            raise InvalidInput(f"timestamp formatter {shown!r}: too many pattern letters {c!r} ({count})")
        self.groups.append(name)
        if name == "fraction":
            return f"(?P<fraction>\\d{{{count}}})"
        if name == "year":
            if count == 2:
                return "(?P<year2>\\d{2})"
            lo = 1 if count == 1 else count
            return f"(?P<year>\\d{{{lo},19}})"
        if count > 2:
            raise InvalidInput(
                f"timestamp formatter {self.pattern!r}: {c * count!r} (text fields) is not supported"
            )
        return f"(?P<{name}>\\d{{1,19}})" if count == 1 else f"(?P<{name}>\\d{{2}})"

    def parse(self, text: str) -> datetime.datetime | None:
        """LocalDateTime.parse, else LocalDate.parse at midnight, else None (Java's fallback)."""
        m = self.regex.fullmatch(text)
        if m is None or not self.has_date:
            return None
        g = m.groupdict()
        year = int(g["year"]) if g.get("year") is not None else 2000 + int(g["year2"])
        month, day = int(g["month"]), int(g["day"])
        if not 1 <= month <= 12 or not 1 <= day <= 31 or not 1 <= year <= 9999:
            return None
        last = _month_length(year, month)
        day = min(day, last)  # SMART: day 29..31 past the month's end clamps to its last day
        if g.get("hour") is None:
            # no time: LocalDateTime fails, LocalDate succeeds -> midnight (minutes alone are
            # not enough for a time either)
            return datetime.datetime(year, month, day)
        hour = int(g["hour"])
        minute = int(g["minute"]) if g.get("minute") is not None else 0
        second = int(g["second"]) if g.get("second") is not None else 0
        if g.get("second") is not None and g.get("minute") is None:
            return datetime.datetime(year, month, day)
        frac = g.get("fraction")
        micro = int((frac + "000000000")[:6]) if frac else 0
        if hour == 24 and minute == 0 and second == 0 and not micro:
            return datetime.datetime(year, month, day) + datetime.timedelta(days=1)
        if hour > 23 or minute > 59 or second > 59:
            return None
        return datetime.datetime(year, month, day, hour, minute, second, micro)


def _month_length(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


_DEFAULT = re.compile(
    r"(\d{1,10})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?)?"
)


def parse_default_timestamp(text: str) -> datetime.datetime | None:
    """Paimon's default ``yyyy-M-d[ H:m:s[.f]]`` with LENIENT resolution (13th month rolls over)."""
    m = _DEFAULT.fullmatch(text)
    if m is None:
        return None
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    try:
        total_months = y * 12 + (mo - 1)
        base = datetime.datetime(total_months // 12, total_months % 12 + 1, 1)
        out = base + datetime.timedelta(days=d - 1)
        if m.group(4) is not None:
            frac = m.group(7) or ""
            out += datetime.timedelta(
                hours=int(m.group(4)), minutes=int(m.group(5)), seconds=int(m.group(6)),
                microseconds=int((frac + "000000")[:6]) if frac else 0,
            )
    except (ValueError, OverflowError):
        return None
    return out


# ---------------------------------------------------------------------------------------
# Partition time extraction
# ---------------------------------------------------------------------------------------


class PartitionTimeExtractor:
    """Java's PartitionTimeExtractor over typed values (see the module docstring)."""

    def __init__(self, keys: list[str], types: list[Any], pattern: str | None, formatter: str | None) -> None:
        self.keys = keys
        self.types = types
        self.pattern = pattern or None
        self.formatter = JavaDateTimePattern(formatter) if formatter else None
        if self.pattern is not None and "$" not in self.pattern:
            raise InvalidInput(f"timestamp pattern {pattern!r}: expected partition columns as $name")
        # longest key first, so $dt does not match inside $dt1 (Java 1.x)
        self._order = sorted(range(len(keys)), key=lambda i: -len(keys[i]))

    def extract(self, values: list[Any]) -> datetime.datetime | None:
        """The partition's time, or None when it cannot be parsed (the partition is kept)."""
        if self.pattern is None:
            idx = 0
        else:
            idx = next((i for i, k in enumerate(self.keys) if self.pattern == "$" + k), -1)
        text: str | None
        if idx >= 0:
            v = values[idx]
            if v is None:
                return None
            typed = _typed_time(v, self.types[idx])
            if typed is not None:
                return typed
            text = _render(v, self.types[idx])
        else:
            text = self._substitute(values)
            if text is None:
                return None
        if self.formatter is not None:
            return self.formatter.parse(text)
        return parse_default_timestamp(text)

    def _substitute(self, values: list[Any]) -> str | None:
        assert self.pattern is not None
        p = self.pattern
        out: list[str] = []
        i = 0
        while i < len(p):
            c = p[i]
            if c == "$" and i + 1 < len(p):
                hit = None
                for k in self._order:
                    key = self.keys[k]
                    if p.startswith(key, i + 1):
                        hit = k
                        break
                if hit is not None:
                    v = values[hit]
                    if v is None:
                        return None  # Java: NullPointerException -> not expired
                    out.append(_render(v, self.types[hit]))
                    i += 1 + len(self.keys[hit])
                    continue
            out.append(c)
            i += 1
        return "".join(out)


def _typed_time(value: Any, data_type: Any) -> datetime.datetime | None:
    from ..data import types as t

    if isinstance(data_type, t.DateType):
        if isinstance(value, datetime.datetime):
            return datetime.datetime(value.year, value.month, value.day)
        if isinstance(value, datetime.date):
            return datetime.datetime(value.year, value.month, value.day)
        return datetime.datetime(1970, 1, 1) + datetime.timedelta(days=int(value))
    if isinstance(data_type, (t.TimestampType, t.LocalZonedTimestampType)):
        if hasattr(value, "to_datetime"):
            return value.to_datetime()
        if isinstance(value, datetime.datetime):
            return value.replace(tzinfo=None)
    return None


def _render(value: Any, data_type: Any) -> str:
    """A value as pattern text: Java's toString, but DATE/TIMESTAMP as readable times."""
    from ..io import paths

    typed = _typed_time(value, data_type)
    if typed is not None:
        from ..data import types as t

        if isinstance(data_type, t.DateType):
            return typed.date().isoformat()
        s = typed.strftime("%Y-%m-%d %H:%M:%S")
        if typed.microsecond:
            s += "." + f"{typed.microsecond:06d}".rstrip("0")
        return s
    rendered = paths.partition_value_to_str(value, data_type, True)
    return "" if rendered is None else rendered


# ---------------------------------------------------------------------------------------
# Planning and applying
# ---------------------------------------------------------------------------------------


@dataclass
class PartitionInfo:
    """One live partition of the latest snapshot (Java's PartitionEntry)."""

    partition: bytes
    values: list[Any]
    spec: dict[str, str]  # Java's toPartitionString (internal toString, what drop_partitions gets)
    display: str  # k=v/k2=v2 with SQL renderings (DATE as yyyy-MM-dd)
    file_count: int = 0
    record_count: int = 0
    file_size: int = 0
    last_file_creation: datetime.datetime | None = None
    partition_time: datetime.datetime | None = None


@dataclass
class PartitionExpirePlan:
    strategy: str
    expire_before: datetime.datetime
    partitions: list[PartitionInfo] = field(default_factory=list)
    snapshots: list[int] = field(default_factory=list)  # filled by apply

    def rows(self) -> Any:
        from ..utils.rows import Rows

        return Rows(
            ["partition", "partition_time", "last_update_time", "file_count", "record_count", "file_size_in_bytes"],
            [{
                "partition": p.display,
                "partition_time": p.partition_time,
                "last_update_time": p.last_file_creation,
                "file_count": p.file_count,
                "record_count": p.record_count,
                "file_size_in_bytes": p.file_size,
            } for p in self.partitions],
        )


def live_partitions(table: FileStoreTable, snapshot: Snapshot | None,
                    entries: list[ManifestEntry] | None = None) -> list[PartitionInfo]:
    """Partitions with live data files in ``snapshot``, with Java's PartitionEntry numbers
    (``entries``: its live files when the caller has read them already)."""
    from ..data.binary_row import deserialize
    from ..data.java_format import utc_wall_clock_from_millis
    from ..io import paths

    schema = table.schema
    keys = schema.partition_keys
    types = schema.partition_types
    by_part: dict[bytes, PartitionInfo] = {}
    for e in FileStoreScan(table).plan(snapshot) if entries is None else entries:
        info = by_part.get(e.partition)
        if info is None:
            values = deserialize(e.partition, types)
            spec = {k: ("null" if v is None else paths.partition_value_to_str(v, t, True) or "")
                    for k, v, t in zip(keys, values, types, strict=True)}
            shown = paths.partition_values_to_str(values, types, False)
            display = "/".join(f"{k}={'null' if s is None else s}" for k, s in zip(keys, shown, strict=True))
            info = PartitionInfo(e.partition, values, spec, display)
            by_part[e.partition] = info
        f = e.file
        info.file_count += 1
        info.record_count += f.row_count
        info.file_size += f.file_size
        if f.creation_time is not None:
            created = utc_wall_clock_from_millis(f.creation_time)
            if info.last_file_creation is None or created > info.last_file_creation:
                info.last_file_creation = created
    return list(by_part.values())


def _java_join_key(info: PartitionInfo, default_name: str, types: list[Any]) -> str:
    from ..io import paths

    parts = []
    for v, t in zip(info.values, types, strict=True):
        parts.append(default_name if v is None else (paths.partition_value_to_str(v, t, True) or ""))
    return ",".join(parts)


def plan_partition_expire(
    table: FileStoreTable,
    expiration_seconds: float,
    *,
    strategy: str | None = None,
    timestamp_formatter: str | None = None,
    timestamp_pattern: str | None = None,
    max_expires: int | None = None,
    now: datetime.datetime | None = None,
    entries: list[ManifestEntry] | None = None,
) -> PartitionExpirePlan:
    """Which partitions of the latest snapshot expire (nothing is changed; ``entries``: the
    latest snapshot's live files when the caller has read them, as ``health`` has).

    Unset arguments fall back to the table's options (``partition.expiration-strategy``,
    ``partition.timestamp-formatter``, ``partition.timestamp-pattern``,
    ``partition.expiration-max-num``, default 100 as in Java 2.x; 0.9 had no limit), like
    Java's post-commit expiry.
    """
    schema = table.schema
    keys = schema.partition_keys
    if not keys:
        raise InvalidInput(f"{table.identifier} is not partitioned: there are no partitions to expire")
    if expiration_seconds <= 0:
        raise InvalidInput("expiration time must be positive")
    opts = table.options
    strategy = (strategy or opts.get("partition.expiration-strategy") or "values-time").lower()
    if strategy not in STRATEGIES:
        raise InvalidInput(f"partition expiration strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}")
    if max_expires is None:
        max_expires = opts.get_int("partition.expiration-max-num")
    if max_expires is not None and max_expires <= 0:
        raise InvalidInput(f"max expires {max_expires}: must be positive")
    now = now or datetime.datetime.now()
    expire_before = now - datetime.timedelta(seconds=expiration_seconds)
    plan = PartitionExpirePlan(strategy, expire_before)
    snapshot = table.snapshot_manager.latest_snapshot() if entries is None else None
    infos = live_partitions(table, snapshot, entries)
    types = schema.partition_types
    selected: list[PartitionInfo] = []
    if strategy == "values-time":
        extractor = PartitionTimeExtractor(
            keys, types,
            timestamp_pattern if timestamp_pattern is not None else opts.get("partition.timestamp-pattern"),
            timestamp_formatter if timestamp_formatter is not None else opts.get("partition.timestamp-formatter"),
        )
        for info in infos:
            info.partition_time = extractor.extract(info.values)
            if info.partition_time is not None and expire_before > info.partition_time:
                selected.append(info)
    else:
        for info in infos:
            if info.last_file_creation is not None and expire_before > info.last_file_creation:
                selected.append(info)
    default_name = opts.partition_default_name
    selected.sort(key=lambda i: _java_join_key(i, default_name, types))
    limit = INT_MAX if max_expires is None else max_expires
    plan.partitions = selected[:limit]
    return plan


def expired_partitions_to_skip(table: FileStoreTable, entries: list[ManifestEntry],
                               now: datetime.datetime | None = None) -> set[bytes]:
    """The partitions (serialized) a compaction leaves alone under Java 2.x's
    ``compaction.skip-expired-partitions`` (apache/paimon#9021): those ``partition.expiration-time``
    has expired by their values (``values-time`` only), in bucketed tables (fixed or dynamic
    bucket; Java ignores the option for bucket-unaware and postpone tables). ``entries``: the
    live files the compaction plans from."""
    opts = table.options
    schema = table.schema
    text = opts.get("partition.expiration-time")
    bucketed = schema.bucket > 0 or (schema.bucket == -1 and bool(schema.primary_keys))
    if (not opts.get_bool("compaction.skip-expired-partitions", False) or not text or not schema.partition_keys
            or not bucketed or (opts.get("partition.expiration-strategy") or "values-time") != "values-time"):
        return set()
    from ..utils.durations import parse_duration_millis

    seconds = parse_duration_millis(text, "partition.expiration-time") / 1000.0
    plan = plan_partition_expire(table, seconds, strategy="values-time", max_expires=INT_MAX, now=now,
                                 entries=entries)
    return {p.partition for p in plan.partitions}


def apply_partition_expire(table: FileStoreTable, plan: PartitionExpirePlan) -> list[Snapshot]:
    """Drop the planned partitions: one OVERWRITE snapshot per ``partition.expiration-batch-size``
    batch (one in all by default), as Java's ``dropPartitions``."""
    from .commit import FileStoreCommit

    if not plan.partitions:
        return []
    specs = [dict(p.spec) for p in plan.partitions]
    batch = table.options.get_int("partition.expiration-batch-size")
    batches = [specs] if not batch or batch <= 0 or batch >= len(specs) else [
        specs[i : i + batch] for i in range(0, len(specs), batch)
    ]
    commit = FileStoreCommit(table)
    out: list[Snapshot] = []
    for b in batches:
        snap = commit.drop_partitions(b)
        if snap is not None:
            out.append(snap)
    plan.snapshots = [s.id for s in out]
    return out


def expire_partitions(
    table: FileStoreTable,
    expiration_seconds: float,
    *,
    dry_run: bool = False,
    **kw: Any,
) -> PartitionExpirePlan:
    plan = plan_partition_expire(table, expiration_seconds, **kw)
    if not dry_run:
        apply_partition_expire(table, plan)
    return plan


def expire_partitions_after_commit(
    table: FileStoreTable, now: Callable[[], datetime.datetime] | None = None
) -> PartitionExpirePlan | None:
    """The partition half of Java's post-commit maintenance.

    Java only checks when ``partition.expiration-time`` is set and its check interval has
    passed since the writer started; a one-shot batch writer therefore only expires with
    ``partition.expiration-check-interval`` = 0 or ``end-input.check-partition-expire``.
    """
    opts = table.options
    text = opts.get("partition.expiration-time")
    if not text or opts.get_bool("write-only", False) or not table.schema.partition_keys:
        return None
    interval = opts.get_duration_millis("partition.expiration-check-interval") or 0
    if interval > 0 and not opts.get_bool("end-input.check-partition-expire", False):
        return None
    from ..utils.durations import parse_duration_millis

    seconds = parse_duration_millis(text, "partition.expiration-time") / 1000.0
    plan = plan_partition_expire(table, seconds, now=now() if now else None)
    apply_partition_expire(table, plan)
    return plan
