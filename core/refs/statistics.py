"""Table statistics written by ANALYZE: ``<table>/statistics/stat-<uuid>-<n>`` (JSON).

A snapshot's ``statistics`` field names the file. Java's ``$statistics`` table shows the
statistics of the (time-travelled or latest) snapshot as ``snapshot_id, schema_id,
mergedRecordCount, mergedRecordSize, colstat`` where ``colstat`` is the JSON of the
``colStats`` map; the same five columns exist in 0.9 and master.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from ..errors import CorruptMetadata, MissingMetadata, NotFound, PaimonError
from ..io.fileio import FileIO, join
from ..io.paths import statistics_dir
from ..utils.json_util import dumps_jackson, loads_metadata

STAT_PREFIX = "stat-"
_COL_KEYS = ("colId", "distinctCount", "min", "max", "nullCount", "avgLen", "maxLen")


@dataclass
class ColStats:
    """One column's statistics; min/max stay as Java's type-specific serialized strings."""

    col_id: int
    distinct_count: int | None = None
    min: str | None = None
    max: str | None = None
    null_count: int | None = None
    avg_len: int | None = None
    max_len: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, c: Any, path: str, name: str = "?") -> ColStats:
        if not isinstance(c, dict):
            raise CorruptMetadata(path, f"colStats[{name!r}] must be an object")
        return cls(
            col_id=_long(c, "colId", path, required=True),  # type: ignore[arg-type]
            distinct_count=_long(c, "distinctCount", path),
            min=_str(c, "min", path),
            max=_str(c, "max", path),
            null_count=_long(c, "nullCount", path),
            avg_len=_long(c, "avgLen", path),
            max_len=_long(c, "maxLen", path),
            extra={k: v for k, v in c.items() if k not in _COL_KEYS},
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"colId": self.col_id}
        for key, v in (
            ("distinctCount", self.distinct_count),
            ("min", self.min),
            ("max", self.max),
            ("nullCount", self.null_count),
            ("avgLen", self.avg_len),
            ("maxLen", self.max_len),
        ):
            if v is not None:
                d[key] = v
        for k, v in self.extra.items():
            d.setdefault(k, v)
        return d


@dataclass
class Statistics:
    snapshot_id: int
    schema_id: int
    merged_record_count: int | None = None
    merged_record_size: int | None = None
    # Java's JSON form per column ({"colId": 0, "min": "1", ...}) so it serialises as-is;
    # :meth:`column_stats` gives the typed view
    col_stats: dict[str, dict[str, Any]] = field(default_factory=dict)

    def column_stats(self) -> dict[str, ColStats]:
        return {name: ColStats.from_dict(c, "<memory>") for name, c in self.col_stats.items()}

    @classmethod
    def from_json(cls, text: str, path: str) -> Statistics:
        obj = loads_metadata(text, path)
        if not isinstance(obj, dict):
            raise CorruptMetadata(path, "statistics JSON must be an object")
        cols_raw = obj.get("colStats")
        if cols_raw is None:
            cols_raw = {}
        if not isinstance(cols_raw, dict):
            raise CorruptMetadata(path, "colStats must be an object")
        cols: dict[str, dict[str, Any]] = {}
        for name, c in cols_raw.items():
            # validate, then keep Java's key order and layout
            cols[name] = ColStats.from_dict(c, path, name).to_dict()
        return cls(
            snapshot_id=_long(obj, "snapshotId", path, required=True),  # type: ignore[arg-type]
            schema_id=_long(obj, "schemaId", path, required=True),  # type: ignore[arg-type]
            merged_record_count=_long(obj, "mergedRecordCount", path),
            merged_record_size=_long(obj, "mergedRecordSize", path),
            col_stats=cols,
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"snapshotId": self.snapshot_id, "schemaId": self.schema_id}
        if self.merged_record_count is not None:
            d["mergedRecordCount"] = self.merged_record_count
        if self.merged_record_size is not None:
            d["mergedRecordSize"] = self.merged_record_size
        d["colStats"] = self.col_stats_dict()
        return d

    def col_stats_dict(self) -> dict[str, Any]:
        return {name: dict(c) for name, c in self.col_stats.items()}

    def col_stats_json(self) -> str:
        """The ``colstat`` column of Java's ``$statistics`` (Jackson JSON of the map)."""
        return dumps_jackson(self.col_stats_dict())

    def to_json(self) -> str:
        return dumps_jackson(self.to_dict())


def _long(obj: dict[str, Any], key: str, path: str, required: bool = False) -> int | None:
    v = obj.get(key)
    if v is None:
        if required:
            raise CorruptMetadata(path, f"missing required field {key!r}")
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise CorruptMetadata(path, f"field {key!r} must be an integer, got {v!r}")
    return v


def _str(obj: dict[str, Any], key: str, path: str) -> str | None:
    v = obj.get(key)
    if v is None:
        return None
    # Java serialises min/max to strings; tolerate bare numbers written by other tools
    if isinstance(v, (dict, list)):
        raise CorruptMetadata(path, f"field {key!r} must be a string, got {v!r}")
    return v if isinstance(v, str) else str(v)


def statistics_path(table_path: str, file_name: str) -> str:
    return join(statistics_dir(table_path), file_name)


def read_statistics(file_io: FileIO, table_path: str, file_name: str) -> Statistics:
    path = statistics_path(table_path, file_name)
    try:
        text = file_io.read_text(path)
    except NotFound as e:  # a snapshot names it: broken metadata, not something the user named
        raise MissingMetadata(f"statistics file {file_name} not found in {statistics_dir(table_path)}") from e
    return Statistics.from_json(text, path)


def write_statistics(file_io: FileIO, table_path: str, stats: Statistics) -> str:
    """Write a new ``stat-<uuid>-0`` file and return its name (for ``Snapshot.statistics``)."""
    name = f"{STAT_PREFIX}{uuid.uuid4()}-0"
    if not file_io.try_write_atomic(statistics_path(table_path, name), stats.to_json().encode("utf-8")):
        raise PaimonError(f"{statistics_path(table_path, name)}: statistics file name collision")
    return name
