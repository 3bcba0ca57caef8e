"""Per-file column statistics (DataFileMeta ``_KEY_STATS`` / ``_VALUE_STATS``) computed as Java does.

Java gets Parquet/ORC stats from the file footer (``ParquetSimpleStatsExtractor``) and Avro
stats from a row collector, then applies the column's stats mode
(``SimpleColStatsCollector``: none, counts, full, truncate(N)). What that yields, and what
this module reproduces column-wise with pyarrow.compute:

* min/max only for comparable atomic types; BINARY/VARBINARY always get null min/max (Java's
  ``byte[]`` is not Comparable and the Parquet extractor has no case for it);
* nested columns (ARRAY/MAP/MULTISET/ROW) get null min/max; in Parquet their null count is
  null as well (the footer has no column chunk under the field's own name);
* Parquet TIMESTAMP(p>6) (INT96) gets null min/max; Parquet drops min/max of a string column
  whose min+max reach 4096 bytes (parquet-mr ``MAX_STATS_SIZE``);
* float zeros follow parquet-mr's reader (min 0.0 -> -0.0, max -0.0 -> +0.0) and NaN is
  ignored like Java's collectors do when a non-NaN value exists;
* truncate(N) cuts strings to N code points (min) and cuts + increments the last code
  point that can be incremented (max; null min AND max when none can).

Rows are serialized with :func:`core.data.binary_row.serialize` over the stats column types.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..data import binary_row
from ..data.types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BlobType,
    CharType,
    DataField,
    DataType,
    DateType,
    DoubleType,
    FloatType,
    LocalZonedTimestampType,
    MapType,
    MultisetType,
    RowType,
    TimestampType,
    TimeType,
    VarBinaryType,
    VarCharType,
    VariantType,
)
from ..errors import InvalidInput
from ..schema.options import CoreOptions
from .manifest import SimpleStats

_TRUNCATE = re.compile(r"^truncate\((\d+)\)$", re.IGNORECASE)
PARQUET_MAX_STATS_SIZE = 4096
SYSTEM_TRUNCATE = "truncate(128)"
_NESTED = (ArrayType, MapType, MultisetType, RowType, VariantType)


@dataclass(frozen=True)
class StatsMode:
    """One column's stats mode: kind is none/counts/full/truncate; length for truncate."""

    kind: str
    length: int = 0

    @staticmethod
    def parse(text: str) -> StatsMode:
        t = text.strip().lower()
        if t in ("none", "counts", "full"):
            return StatsMode(t)
        m = _TRUNCATE.match(t)
        if m and int(m.group(1)) > 0:
            return StatsMode("truncate", int(m.group(1)))
        raise InvalidInput(f"stats mode {text!r}: expected none, counts, full or truncate(N) with N > 0")


@dataclass(frozen=True)
class ColStats:
    """Min/max as binary_row Python values and the null count (None = unknown)."""

    min: Any
    max: Any
    null_count: int | None


# ---------------------------------------------------------------------------------------
# Truncation (TruncateSimpleColStatsCollector)
# ---------------------------------------------------------------------------------------


def truncate_min(value: Any, length: int) -> Any:
    return value[:length] if isinstance(value, str) else value


def truncate_max(value: Any, length: int) -> tuple[Any, bool]:
    """(upper bound, ok). ok is False when no code point of the prefix can be incremented."""
    if not isinstance(value, str) or len(value) <= length:
        return value, True
    prefix = value[:length]
    for i in range(length - 1, -1, -1):
        nxt = ord(prefix[i]) + 1
        if nxt <= 0x10FFFF:
            # Java appends the code point to a UTF-16 builder; a lone surrogate then
            # becomes '?' when BinaryString encodes it (String.getBytes replacement).
            ch = "?" if 0xD800 <= nxt <= 0xDFFF else chr(nxt)
            return prefix[:i] + ch, True
    return None, False


def apply_mode(stats: ColStats, mode: StatsMode) -> ColStats:
    """``SimpleColStatsCollector.convert`` for one column."""
    if mode.kind == "none":
        return ColStats(None, None, None)
    if mode.kind == "counts":
        return ColStats(None, None, stats.null_count)
    if mode.kind == "full":
        return stats
    mx, ok = truncate_max(stats.max, mode.length)
    if not ok or mx is None:
        return ColStats(None, None, stats.null_count)
    return ColStats(truncate_min(stats.min, mode.length), mx, stats.null_count)


# ---------------------------------------------------------------------------------------
# Raw column stats
# ---------------------------------------------------------------------------------------


def _ts_value(scalar: pa.Scalar) -> binary_row.Timestamp:
    unit = scalar.type.unit
    raw = int(scalar.value)
    if unit == "s":
        return binary_row.Timestamp(raw * 1000)
    if unit == "ms":
        return binary_row.Timestamp(raw)
    if unit == "us":
        return binary_row.Timestamp.from_epoch_micros(raw)
    return binary_row.Timestamp(raw // 1_000_000, raw % 1_000_000)


def _scalar_value(scalar: pa.Scalar, dt: DataType) -> Any:

    if not scalar.is_valid:
        return None
    if isinstance(dt, (TimestampType, LocalZonedTimestampType)):
        return _ts_value(scalar)
    if isinstance(dt, DateType):
        return scalar.cast(pa.int32()).as_py()
    if isinstance(dt, TimeType):
        return scalar.cast(pa.int32()).as_py() if pa.types.is_time32(scalar.type) else scalar.as_py()
    return scalar.as_py()


def _float_stats(col: Any, nulls: int, fmt: str) -> ColStats:
    """FLOAT/DOUBLE bounds as Java reports them (verified against Java 0.9).

    Parquet (parquet-mr footer): any NaN drops min and max; a zero min is -0.0 and a zero
    max +0.0. ORC (writer stats): the first zero of the file is the zero bound (NaN
    unverified). Avro (Java collector, ``Float.compareTo``): NaN ranks above everything,
    so max is NaN when one is present and min ignores NaN unless all values are NaN;
    -0.0 ranks below +0.0.
    """

    nan = pc.is_nan(col)
    has_nan = bool(pc.any(nan).as_py())
    if fmt == "parquet" and has_nan:
        return ColStats(None, None, nulls)
    clean = pc.if_else(nan, pa.scalar(None, col.type), col)
    if clean.null_count == len(clean):  # only NaN (and NULL) values
        return ColStats(float("nan"), float("nan"), nulls)
    mm = pc.min_max(clean)
    lo, hi = mm["min"].as_py(), mm["max"].as_py()
    if fmt == "parquet":
        lo = -0.0 if lo == 0.0 else lo
        hi = 0.0 if hi == 0.0 else hi
    elif fmt == "orc":
        # the ORC writer compares with < and >, so the first zero in the file wins both bounds
        if lo == 0.0 or hi == 0.0:
            first = clean.take([pc.index(clean, pa.scalar(0.0, clean.type)).as_py()])[0].as_py()
            lo = first if lo == 0.0 else lo
            hi = first if hi == 0.0 else hi
    else:
        if lo == 0.0 or hi == 0.0:
            zeros = pc.filter(clean, pc.equal(clean, 0.0)).to_numpy(zero_copy_only=False)
            signs = np.signbit(zeros)
            if lo == 0.0:
                lo = -0.0 if signs.any() else 0.0
            if hi == 0.0:
                hi = 0.0 if (~signs).any() else -0.0
        if has_nan:
            hi = float("nan")
    return ColStats(lo, hi, nulls)


def raw_col_stats(col: pa.ChunkedArray | pa.Array, dt: DataType, file_format: str = "parquet") -> ColStats:
    """Min, max and null count of one column before the stats mode is applied."""

    nulls = int(col.null_count)
    fmt = file_format.lower()
    if isinstance(dt, _NESTED):
        return ColStats(None, None, None if fmt == "parquet" else nulls)
    if isinstance(dt, (BinaryType, VarBinaryType, BlobType)):
        return ColStats(None, None, nulls)
    if nulls == len(col):
        return ColStats(None, None, nulls)
    if fmt == "parquet" and isinstance(dt, (TimestampType, LocalZonedTimestampType)) and dt.precision > 6:
        return ColStats(None, None, nulls)
    if isinstance(dt, (FloatType, DoubleType)):
        return _float_stats(col, nulls, fmt)
    mm = pc.min_max(col)
    lo = _scalar_value(mm["min"], dt)
    hi = _scalar_value(mm["max"], dt)
    if (
        fmt == "parquet"
        and isinstance(dt, (CharType, VarCharType))
        and len(lo.encode("utf-8")) + len(hi.encode("utf-8")) >= PARQUET_MAX_STATS_SIZE
    ):
        return ColStats(None, None, nulls)
    return ColStats(lo, hi, nulls)


# ---------------------------------------------------------------------------------------
# Modes per column and the SimpleStats rows
# ---------------------------------------------------------------------------------------


def value_stats_modes(fields: list[DataField], options: CoreOptions) -> list[StatsMode]:
    """Java ``StatsCollectorFactories``: ``fields.<c>.stats-mode`` wins, then
    ``metadata.stats-keep-first-n-columns`` turns the rest to none, then ``metadata.stats-mode``."""
    default = options.metadata_stats_mode
    keep = options.metadata_stats_keep_first_n_columns
    modes: list[StatsMode] = []
    count = 0
    for f in fields:
        own = options.options.get(f"fields.{f.name}.stats-mode")
        if own is not None:
            modes.append(StatsMode.parse(own))
        elif keep >= 0 and count >= keep:
            modes.append(StatsMode("none"))
        else:
            modes.append(StatsMode.parse(default))
        count += 1
    return modes


def _row(values: list[Any], types: list[DataType]) -> bytes:
    """Serialize a stats row as Java's ``InternalRowSerializer`` does: a NULL field is only a
    null bit and a zero slot. (binary_row.serialize reserves variable bytes for NULL
    non-compact decimals/timestamps, as Java's typed writers do for keys; stats rows don't.)"""
    plain = [t.copy(nullable=True) if v is not None else BigIntType() for v, t in zip(values, types, strict=True)]
    return binary_row.serialize(values, plain)


def to_simple_stats(stats: list[ColStats], types: list[DataType]) -> SimpleStats:
    """``SimpleStatsConverter.toBinary``: min row, max row, null counts."""
    return SimpleStats(
        _row([s.min for s in stats], types),
        _row([s.max for s in stats], types),
        [s.null_count for s in stats],
    )


def value_stats_from_raw(
    raw_of: Any,
    fields: list[DataField],
    options: CoreOptions,
    file_format: str | None = None,
) -> tuple[SimpleStats, tuple[str, ...] | None]:
    """:func:`collect_value_stats` over raw column stats given by ``raw_of(field) -> ColStats``.

    Why: a streaming writer (core/mergetree/file_writer.py) accumulates raw stats batch by
    batch (:class:`StatsAccumulator`); the modes, dense store and encoding must be the
    same code path as for a whole table.
    """
    modes = value_stats_modes(fields, options)
    dense = options.get_bool("metadata.stats-dense-store", True)
    stats: list[ColStats] = []
    types: list[DataType] = []
    names: list[str] = []
    for f, mode in zip(fields, modes, strict=True):
        if dense and mode.kind == "none":
            continue
        if mode.kind == "none":
            s = ColStats(None, None, None)
        else:
            s = apply_mode(raw_of(f), mode)
        stats.append(s)
        types.append(f.type)
        names.append(f.name)
    cols: tuple[str, ...] | None
    if not dense or len(names) == len(fields):
        cols = None
    else:
        cols = tuple(names)
    return to_simple_stats(stats, types), cols


def key_stats_from_raw(raw_of: Any, key_fields: list[DataField], options: CoreOptions | None = None) -> SimpleStats:
    """:func:`collect_key_stats` over raw column stats given by ``raw_of(field) -> ColStats``."""
    opts = options.options if options is not None else {}
    stats = []
    for f in key_fields:
        mode = StatsMode.parse(opts.get(f"fields.{f.name}.stats-mode", SYSTEM_TRUNCATE))
        stats.append(apply_mode(raw_of(f), mode))
    return to_simple_stats(stats, [f.type for f in key_fields])


class StatsAccumulator:
    """Raw column stats of a file written batch by batch, equal to :func:`raw_col_stats` of the
    concatenated batches.

    Why: streaming writers must not hold a whole file. Each batch is reduced to a few
    representative values per column (min, max; for FLOAT/DOUBLE also a NaN, the zero(s)
    whose sign the format's rule looks at) kept in file order, and the null count is summed;
    :meth:`raw` runs :func:`raw_col_stats` over the representatives, so every per-format
    rule (NaN, signed zeros, ORC's first zero, Parquet's string size limit) is applied by the
    same code as for a whole table.
    """

    _COMPACT_EVERY = 64

    def __init__(self, fields: list[DataField], file_format: str, skip: set[str] | None = None) -> None:
        self.fields = list(fields)
        self.fmt = file_format.lower()
        self.skip = set(skip or ())
        self.nulls: dict[str, int] = {f.name: 0 for f in self.fields}
        self.reps: dict[str, list[Any]] = {f.name: [] for f in self.fields}
        self.rows = 0

    def update(self, table: pa.Table | pa.RecordBatch, columns: dict[str, Any] | None = None) -> None:
        """Add a batch; ``columns`` optionally maps a field name to the column to use."""
        n = table.num_rows
        if n == 0:
            return
        self.rows += n
        names = table.schema.names
        for f in self.fields:
            if f.name in self.skip:
                continue
            col = columns[f.name] if columns and f.name in columns else table.column(names.index(f.name))
            self.nulls[f.name] += int(col.null_count)
            if not self._tracks(f.type):
                continue
            rep = _representatives(col, f.type, self.fmt)
            if rep is not None and len(rep):
                lst = self.reps[f.name]
                lst.append(rep)
                if len(lst) >= self._COMPACT_EVERY:
                    merged = _concat(lst, f.type)
                    self.reps[f.name] = [_representatives(merged, f.type, self.fmt)]

    def _tracks(self, dt: DataType) -> bool:
        if isinstance(dt, (_NESTED, BinaryType, VarBinaryType, BlobType)):
            return False
        if self.fmt == "parquet" and isinstance(dt, (TimestampType, LocalZonedTimestampType)) and dt.precision > 6:
            return False
        return True

    def raw(self, f: DataField) -> ColStats:
        """What :func:`raw_col_stats` returns for column ``f`` of everything added so far."""
        nulls = self.nulls.get(f.name, 0)
        if isinstance(f.type, _NESTED):
            return ColStats(None, None, None if self.fmt == "parquet" else nulls)
        if not self._tracks(f.type):
            return ColStats(None, None, nulls)
        lst = self.reps.get(f.name) or []
        if not lst:
            return ColStats(None, None, nulls)
        r = raw_col_stats(_concat(lst, f.type), f.type, self.fmt)
        return ColStats(r.min, r.max, nulls)


def _concat(arrays: list[Any], dt: DataType) -> Any:  # noqa: ARG001 - dt kept for symmetry

    return arrays[0] if len(arrays) == 1 else pa.chunked_array(arrays).combine_chunks()


def _representatives(col: Any, dt: DataType, fmt: str) -> Any:
    """A few values of ``col`` (file order kept) whose :func:`raw_col_stats` min/max equal the column's."""

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if col.null_count:
        col = pc.drop_null(col)
    if len(col) == 0:
        return col
    if isinstance(dt, (FloatType, DoubleType)):
        nan = pc.is_nan(col)
        has_nan = bool(pc.any(nan).as_py())
        clean = pc.filter(col, pc.invert(nan)) if has_nan else col
        vals: list[Any] = []
        if len(clean):
            zero = pc.equal(clean, pa.scalar(0.0, clean.type))
            if pc.any(zero).as_py():
                zeros = pc.filter(clean, zero)
                if fmt == "orc":
                    vals.append(zeros.slice(0, 1))
                else:
                    signs = np.signbit(zeros.to_numpy(zero_copy_only=False))
                    if signs.any():
                        vals.append(pa.array([-0.0], clean.type))
                    if (~signs).any():
                        vals.append(pa.array([0.0], clean.type))
            mm = pc.min_max(clean)
            for s in (mm["min"], mm["max"]):
                if s.as_py() != 0.0:
                    vals.append(pa.array([s.as_py()], clean.type))
        if has_nan:
            vals.append(pa.array([float("nan")], col.type))
        return pa.concat_arrays(vals) if vals else col.slice(0, 0)
    mm = pc.min_max(col)
    return pa.array([mm["min"], mm["max"]], type=col.type)


def collect_value_stats(
    table: pa.Table,
    fields: list[DataField],
    options: CoreOptions,
    file_format: str | None = None,
) -> tuple[SimpleStats, tuple[str, ...] | None]:
    """Value stats of one data file and ``_VALUE_STATS_COLS``.

    With ``metadata.stats-dense-store`` (default true) columns in mode none are left out and
    the names of the kept ones are returned, None when all are kept. ``file_format``
    defaults to the table's ``file.format`` (the extractor differs per format).
    """
    fmt = (file_format or options.file_format).lower()
    return value_stats_from_raw(lambda f: raw_col_stats(table.column(f.name), f.type, fmt), fields, options)


def collect_key_stats(
    table: pa.Table,
    key_fields: list[DataField],
    options: CoreOptions | None = None,
    file_format: str | None = None,
) -> SimpleStats:
    """Key stats (``_KEY_STATS``): every key column, in ``truncate(128)`` unless
    ``fields._KEY_<c>.stats-mode`` says otherwise (Java 1.0+; 0.9 used metadata.stats-mode,
    which differs only for key strings longer than 16 code points)."""
    fmt = (file_format or (options.file_format if options else "parquet")).lower()
    return key_stats_from_raw(lambda f: raw_col_stats(table.column(f.name), f.type, fmt), key_fields, options)


def decode_stats(stats: SimpleStats, types: list[DataType]) -> list[ColStats]:
    """Inverse of :func:`to_simple_stats` (for tests and pruning)."""
    lo = binary_row.deserialize(stats.min_values, types)
    hi = binary_row.deserialize(stats.max_values, types)
    nc = stats.null_counts if stats.null_counts is not None else [None] * len(types)
    return [ColStats(a, b, c) for a, b, c in zip(lo, hi, nc, strict=True)]


__all__ = [
    "ColStats",
    "StatsAccumulator",
    "StatsMode",
    "apply_mode",
    "collect_key_stats",
    "collect_value_stats",
    "decode_stats",
    "key_stats_from_raw",
    "raw_col_stats",
    "to_simple_stats",
    "truncate_max",
    "truncate_min",
    "value_stats_from_raw",
    "value_stats_modes",
]
