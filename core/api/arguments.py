"""Arguments of the library verbs: typed values, or the command line's text for the same thing.

Every verb takes what a Python caller has (a dict, a list, a ``datetime``) and also the text
the CLI passes through unchanged (``"k=v"`` pairs, ``"a,b"`` column lists, ``"2h"``), so both
are checked by one parser and a bad value is refused with the same one-line message. Nothing
here does I/O: verbs check their arguments before they open anything.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..io.fileio import load_file_io, parse_storage_options
from ..table.identifiers import validate_name
from ..utils.durations import parse_duration, parse_iso_time, parse_point_in_time
from ..utils.json_util import loads_metadata

# The type system and the table are imported where a schema is parsed or a table read, so a
# warehouse listing loads neither (start-up, issue 28).
if TYPE_CHECKING:
    from ..table.file_store_table import TimeTravel

_BARE_DIGITS = re.compile(r"\d+")

KeyValues = Mapping[str, Any] | Iterable[str]
"""Options as a mapping, or as the CLI's ``key=value`` text (one string, or several)."""

Names = str | Sequence[str]
"""Column names as a list, or as the CLI's comma-separated text."""

PointInTime = str | datetime.datetime
"""A ``datetime`` (naive: local time), or the CLI's text: a duration back from now or ISO-8601."""

Duration = str | datetime.timedelta
"""A ``timedelta``, or the CLI's text (``90s``, ``7d``, ``PT2H``)."""

Timestamp = int | str | datetime.datetime
"""Time travel's timestamp: epoch millis, ISO-8601 text (no offset: local time) or a ``datetime``."""


def key_values(pairs: KeyValues | None, flag: str) -> dict[str, str]:
    """Options to a dict; in ``key=value`` text the first ``=`` splits and an empty key is refused."""
    if pairs is None:
        return {}
    if isinstance(pairs, Mapping):
        return {str(k): str(v) for k, v in pairs.items()}
    out: dict[str, str] = {}
    for pair in [pairs] if isinstance(pairs, str) else pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidInput(f"{flag} {pair!r}: expected key=value")
        out[key.strip()] = value
    return out


def storage_options(fs_options: KeyValues | None) -> dict[str, Any]:
    """Filesystem options: a (nested) mapping as fsspec takes it, or ``--fs-option`` text."""
    if fs_options is None:
        return {}
    if isinstance(fs_options, Mapping):
        return dict(fs_options)
    return parse_storage_options([fs_options] if isinstance(fs_options, str) else list(fs_options))


def branch_name(branch: str | None) -> str | None:
    """A branch validated like Java; ``main`` (any case) is the main branch: None."""
    if branch is None or branch.lower() == "main":
        return None
    return validate_name("branch", branch)


def name_list(value: Names) -> list[str]:
    """``"a, b"`` or ``["a", "b"]`` to names; blanks in the text are dropped (create's key lists)."""
    if isinstance(value, str):
        return [n.strip() for n in value.split(",") if n.strip()]
    return list(value)


def column_list(value: Names) -> list[str]:
    """Read's projection: ``"id,`name`"`` or a list; an empty name in the text is refused."""
    if not isinstance(value, str):
        return list(value)
    out = [c.strip().strip("`") for c in value.split(",")]
    if not all(out):
        raise InvalidInput(f"--select {value!r}: empty column name")
    return out


def string_list(value: str | Sequence[str] | None) -> list[str]:
    """One string or several (a single value must not be iterated character by character)."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def tag_name(tag: str | None) -> str | None:
    return None if tag is None else validate_name("tag", tag)


def timestamp_millis(value: Timestamp, flag: str = "--timestamp") -> int:
    """Time travel's timestamp: epoch millis, ISO-8601 (no offset: local time, as Paimon's
    ``scan.timestamp``) or a ``datetime``."""
    if isinstance(value, datetime.datetime):
        return int(value.timestamp() * 1000)
    if isinstance(value, int):
        return value
    s = value.strip()
    if s.lstrip("-").isdigit():
        millis = int(s) if len(s) <= 20 else None  # (int() refuses 4,300+ digits anyway)
        if millis is None or not -(1 << 63) <= millis < (1 << 63):
            shown = s if len(s) <= 24 else s[:21] + "..."
            raise InvalidInput(f"{flag} {shown!r}: epoch milliseconds out of range (a Java long)")
        return millis
    millis = parse_iso_time(s)
    if millis is None:
        raise InvalidInput(f"{flag} {value!r}: expected epoch millis or ISO-8601 date-time")
    return millis


def time_travel(snapshot: int | None, tag: str | None, timestamp: Timestamp | None) -> TimeTravel | None:
    """At most one of snapshot id, tag and timestamp to core's ``TimeTravel`` (None: latest)."""
    if snapshot is None and tag is None and timestamp is None:
        return None
    tag = tag_name(tag)
    millis = timestamp_millis(timestamp) if timestamp is not None else None
    from ..table.file_store_table import TimeTravel

    return TimeTravel(snapshot_id=snapshot, tag=tag, timestamp_millis=millis)


def point_in_time_millis(value: PointInTime, flag: str) -> int:
    if isinstance(value, datetime.datetime):
        return int(value.timestamp() * 1000)
    return parse_point_in_time(value, flag)


def local_datetime(value: PointInTime, flag: str) -> datetime.datetime:
    """A point in time as a naive local ``datetime`` (how tag create times are kept).

    ISO-8601 text without an offset is that wall clock as written, to the millisecond (Java
    2.x ``expire_tags`` reads ``older_than`` so, apache/paimon#9263), never converted through
    an instant: a local time in a DST gap or overlap would move. A duration back from now or
    text with an offset is an instant, shown in local time."""
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo is None else value.astimezone().replace(tzinfo=None)
    text = value.strip()
    if text[:1].isdigit() and not _BARE_DIGITS.fullmatch(text):
        try:
            wall = datetime.datetime.fromisoformat(text)
        except ValueError:
            wall = None
        if wall is not None and wall.tzinfo is None:
            parse_point_in_time(text, flag)  # the same checks as everywhere (not later than now, ...)
            return wall.replace(microsecond=wall.microsecond // 1000 * 1000)
    return datetime.datetime.fromtimestamp(parse_point_in_time(value, flag) / 1000)


def point_in_time_text(value: PointInTime | None) -> str | None:
    """For core calls that parse the CLI's grammar themselves: a ``datetime`` as ISO-8601."""
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return value


def duration_millis(value: Duration, flag: str, positive: bool = False) -> int:
    if isinstance(value, datetime.timedelta):
        millis = value // datetime.timedelta(milliseconds=1)
        if millis < 0 or positive and millis == 0:
            raise InvalidInput(f"{flag} {value}: must be a positive duration")
        return millis
    return parse_duration(value, flag, positive=positive)


def memory_bytes(value: int | str, flag: str) -> int:
    if isinstance(value, int):
        return value
    from ..schema.options import parse_memory_bytes  # the option grammar: not loaded by a listing

    return parse_memory_bytes(value, flag)


# -- create: the --schema argument ---------------------------------------------------------------


def schema_spec(text: str) -> dict[str, Any]:
    """``--schema`` to Schema keyword arguments: a column list, inline JSON, or ``@file`` (any
    FileIO path) holding a TableSchema file or ``{fields, partitionKeys, primaryKeys, ...}``."""
    if text.startswith("@"):
        path = text[1:]
        return _spec_from_json(load_file_io(path).read_text(path), path)
    if text.lstrip().startswith("{"):
        return _spec_from_json(text, "--schema")
    from ..data.types import parse_columns

    return {"columns": parse_columns(text), "partition_keys": [], "primary_keys": [], "options": {}, "comment": None}


def _spec_from_json(text: str, source: str) -> dict[str, Any]:
    obj = loads_metadata(text, source)
    if not isinstance(obj, dict) or not isinstance(obj.get("fields"), list) or not obj["fields"]:
        raise InvalidInput(f"{source}: expected a JSON object with a non-empty \"fields\" list")
    if not all(isinstance(f, dict) and "name" in f and "type" in f for f in obj["fields"]):
        raise InvalidInput(f"{source}: every entry of \"fields\" must be an object with name and type")
    from ..data.types import data_type_from_json

    # ids in a schema file are dropped: a new table numbers its fields from 0, as Java does
    columns = [(str(f["name"]), data_type_from_json(f["type"]), f.get("description")) for f in obj["fields"]]
    return {
        "columns": columns,
        "partition_keys": list(obj.get("partitionKeys") or []),
        "primary_keys": list(obj.get("primaryKeys") or []),
        "options": {str(k): str(v) for k, v in (obj.get("options") or {}).items()},
        "comment": obj.get("comment"),
    }
