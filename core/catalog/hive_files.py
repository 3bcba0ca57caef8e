"""A Hive data file read for migration and clone: its footer's row count and the project's
column stats as a Paimon :class:`DataFileMeta`, after checking that Paimon would read every
column from it as Hive does (what Java 0.9 misreads is refused by name, never guessed).
Kept apart from :mod:`.hive_migrate`, which decides and moves; this module only reads.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..data import binary_row
from ..data.types import ArrayType, DataField, MapType, RowType, TimestampType
from ..errors import CorruptMetadata, InvalidInput, NotYetSupported, PaimonError
from ..format.arrow_schema import arrow_field, arrow_type
from ..format.avro_format import avro_schema, iter_avro_streaming
from ..format.orc_timestamps import check_orc_timestamps, timestamp_columns
from ..io.fileio import FileIO
from ..manifest.manifest import EMPTY_STATS, DataFileMeta
from ..manifest.stats import ColStats, StatsAccumulator, value_stats_from_raw
from ..mergetree.file_writer import creation_time_millis
from ..schema.options import CoreOptions

APPEND_FILE_SOURCE = 0


def _read_file(fio: FileIO, path: str, fmt: str, check: Callable[[Any, list[str]], None],
               stats: StatsAccumulator, conform: Callable[[Any], dict[str, Any]],
               avro_fields: list[DataField]) -> tuple[int, int]:
    """The footer's row count (Avro: the rows read) and the rows read. ``check`` sees the file's
    Arrow schema and the paths of its Parquet leaf columns (Avro: its columns' Avro types)
    before any data is read; the batches (Avro: read as ``avro_fields`` by the project's Avro
    reader) then go to ``stats`` one at a time (a Hive file may be larger than memory), some
    columns replaced by ``conform``'s. A file that cannot be read is InvalidInput."""
    import pyarrow.orc as orc
    import pyarrow.parquet as pq

    read = 0
    with fio.open_arrow_input(path) as f:
        try:
            if fmt == "parquet":
                pf = pq.ParquetFile(f)
                schema, rows = pf.schema_arrow, int(pf.metadata.num_rows)
                leaves = [c.path for c in pf.schema]
                batches: Any = pf.iter_batches()
            elif fmt == "avro":
                schema, leaves = _avro_file_schema(fio, path), []
                rows = -1  # no footer count: the rows read are the count
                batches = iter_avro_streaming(fio, path, avro_fields, AVRO_BATCH_ROWS)
            else:
                of = orc.ORCFile(f)
                schema, rows = of.schema, int(of.nrows)
                batches = (of.read_stripe(i) for i in range(of.nstripes))
                leaves = []
        except Exception as e:  # noqa: BLE001 - any unreadable file refuses the whole migration
            raise InvalidInput(f"{path} is not a readable {fmt} file: {e}") from e
        check(schema, leaves)
        if fmt == "orc":  # pyarrow's nanoseconds wrap beyond their range: stats and reads would be wrong
            stamps = timestamp_columns(schema, None)
            if stamps:
                check_orc_timestamps(f, path, stamps, "refused rather than migrated with wrong statistics")
        try:
            for batch in batches:
                stats.update(batch, conform(batch))
                read += batch.num_rows
        except CorruptMetadata as e:
            raise InvalidInput(f"{path} is not a readable {fmt} file: {e}") from e
        except PaimonError:
            raise
        except Exception as e:  # noqa: BLE001 - as above
            raise InvalidInput(f"{path} is not a readable {fmt} file: {e}") from e
    return (read if rows < 0 else rows), read


AVRO_BATCH_ROWS = 8192


@dataclass(frozen=True)
class _AvroSchema:
    """An Avro data file's columns: name -> the shape of its Avro type (see :func:`_avro_shape`)."""

    shapes: dict[str, Any]

    @property
    def names(self) -> list[str]:
        return list(self.shapes)


def _avro_file_schema(fio: FileIO, path: str) -> _AvroSchema:
    import fastavro

    with fio.open_input(path) as f:
        writer = fastavro.reader(f).writer_schema
    if not isinstance(writer, dict) or writer.get("type") != "record":
        raise InvalidInput(f"{path}: the Avro schema is not a record")
    return _AvroSchema({fd["name"]: _avro_shape(fd["type"]) for fd in writer["fields"]})


def _avro_shape(s: Any) -> Any:
    """An Avro type with what does not change how a value reads left out: nullability (a
    ``["null", T]`` union is T), record names, defaults, docs."""
    if isinstance(s, list):
        members = [m for m in s if m != "null"]
        return _avro_shape(members[0]) if len(members) == 1 else ("union", *map(_avro_shape, members))
    if isinstance(s, str):
        return s
    t = s.get("type")
    if t == "record":
        return ("record", *((fd["name"], _avro_shape(fd["type"])) for fd in s.get("fields", [])))
    if t == "array":
        return ("array", _avro_shape(s.get("items")), s.get("logicalType"))
    if t == "map":
        return ("map", _avro_shape(s.get("values")))
    extra = tuple(s.get(k) for k in ("logicalType", "precision", "scale", "size"))
    return _avro_shape(t) if not any(x is not None for x in extra) else (_avro_shape(t), *extra)


def _check_avro_column(f: DataField, got: Any, what: str) -> None:
    """The file's Avro type of a column must be the one Paimon's Avro writer gives its type
    (so the project's and Java's Avro readers read it as that type); nested columns, whose Hive
    Avro encodings nothing here checks against Java, are refused."""
    if isinstance(f.type, _NESTED_TYPES):
        raise NotYetSupported(f"{what}: nested column {f.name} in an Avro Hive table; only Parquet and ORC "
                              "Hive tables may have nested columns here")
    want = _avro_shape(avro_schema([f])["fields"][0]["type"])
    if got != want:
        raise NotYetSupported(f"{what}: column {f.name} is Avro {got} in the file, which Paimon does not read as "
                              f"{f.type.as_sql()} (its Avro type is {want})")


def _plain(t: Any) -> Any:
    """An Arrow type with large strings/binaries as plain ones (the same values either way)."""
    import pyarrow as pa

    return {pa.large_string(): pa.string(), pa.large_binary(): pa.binary()}.get(t, t)


def _check_timestamp(f: DataField, got: Any, fmt: str, what: str) -> None:
    """The file encodings of a Hive TIMESTAMP that Paimon reads as TIMESTAMP(3), exactly, in
    Java 0.9 too: ORC's timestamp and Parquet's INT64 TIMESTAMP(MILLIS) (not adjusted to UTC).
    Parquet INT96 (what Hive itself writes) is refused: Java 0.9 cannot read it as TIMESTAMP(3);
    INT64 micros/nanos too: Java reads the longs as milliseconds (wrong values and stats)."""
    import pyarrow as pa

    if not pa.types.is_timestamp(got) or got.tz is not None:
        raise NotYetSupported(f"{what}: column {f.name} is {got} in the file, the table says {f.type.as_sql()}")
    if fmt == "parquet" and got.unit == "ns":
        raise NotYetSupported(f"{what}: column {f.name} is a Parquet INT96 (or INT64 nanosecond) timestamp, "
                              "which Java Paimon cannot read as TIMESTAMP(3); rewrite the table with INT64 "
                              "millisecond timestamps first")
    if fmt == "parquet" and got.unit != "ms":
        raise NotYetSupported(f"{what}: column {f.name} is a Parquet INT64 {got.unit} timestamp, which Java Paimon "
                              "would read as milliseconds into TIMESTAMP(3); only INT64 milliseconds migrate")


_NESTED_TYPES = (ArrayType, MapType, RowType)


@functools.lru_cache(maxsize=256)
def _standard_leaves(f: DataField) -> tuple[str, ...]:
    """The Parquet leaf paths of ``f`` as pyarrow writes it (once per column, not per file)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(pa.schema([arrow_field(f)]).empty_table(), sink)
    return tuple(c.path for c in pq.ParquetFile(pa.BufferReader(sink.getvalue())).schema)


def _check_parquet_layout(f: DataField, leaves: list[str], what: str) -> None:
    """A nested Parquet column must use the standard LIST/MAP layout (``list.element``,
    ``key_value.key/value``), the one Paimon writes and Java 0.9 is shown to read; other
    layouts (Hive's own ``bag.array_element``, two-level lists, ``list.item``) are refused,
    as nothing shows Java reads them right."""
    standard = _standard_leaves(f)
    got = [p for p in leaves if p == f.name or p.startswith(f.name + ".")]
    if got != list(standard):
        raise NotYetSupported(f"{what}: nested column {f.name} is stored as {', '.join(got)}, not in Parquet's "
                              f"standard layout ({', '.join(standard)}) that Java Paimon reads")


def hive_file_meta(fio: FileIO, path: str, name: str, size: int, fmt: str, fields: list[DataField],
               partition_keys: set[str], options: CoreOptions, schema_id: int, what: str) -> DataFileMeta:
    """The file's DataFileMeta: its footer's row count and the project's column stats (the same
    code a written file gets them from), after checking every column Paimon will read from it."""
    import pyarrow.compute as pc

    def check(schema: Any, leaves: list[str]) -> None:
        names = schema.names
        for f in fields:
            if f.name in partition_keys:
                continue
            if f.name not in names:
                raise NotYetSupported(f"{what}: {path} has no column {f.name} (columns: {', '.join(names)}); "
                                      "Paimon reads columns by name")
            if isinstance(schema, _AvroSchema):
                _check_avro_column(f, schema.shapes[f.name], f"{what}: {path}")
                continue
            got, want = _plain(schema.field(f.name).type), _plain(arrow_type(f.type))
            if isinstance(f.type, TimestampType):
                _check_timestamp(f, got, fmt, f"{what}: {path}")
                continue
            if not got.equals(want):
                raise NotYetSupported(f"{what}: {path}: column {f.name} is {got} in the file, the table says "
                                      f"{f.type.as_sql()}")
            if fmt == "parquet" and isinstance(f.type, _NESTED_TYPES):
                _check_parquet_layout(f, leaves, f"{what}: {path}")

    timestamps = [f for f in fields if isinstance(f.type, TimestampType) and f.name not in partition_keys]

    def conform(batch: Any) -> dict[str, Any]:
        """ORC's nanosecond timestamps as the table's milliseconds; a finer value is refused
        (Paimon would read it truncated)."""
        out = {}
        for f in timestamps:
            col, want = batch.column(f.name), arrow_type(f.type)
            if not col.type.equals(want):
                exact = col.cast(want, safe=False)
                if pc.any(pc.not_equal(exact.cast(col.type), col)).as_py():
                    raise NotYetSupported(f"{what}: {path}: column {f.name} holds timestamps finer than "
                                          "milliseconds; Hive's TIMESTAMP becomes Paimon's TIMESTAMP(3), which "
                                          "would drop the rest")
                out[f.name] = exact
        return out

    stats = StatsAccumulator(fields, fmt, skip=partition_keys)
    try:
        footer_rows, read = _read_file(fio, path, fmt, check, stats, conform,
                                       [f for f in fields if f.name not in partition_keys])
    except InvalidInput as e:
        raise InvalidInput(f"{what}: {e}") from e
    if read != footer_rows:
        raise InvalidInput(f"{what}: {path}: footer says {footer_rows} rows, {read} read")

    def raw_of(f: DataField) -> ColStats:
        if f.name in partition_keys:
            return ColStats(None, None, None)  # not in the file: unknown, as Java's extractor
        return stats.raw(f)

    value_stats, cols = value_stats_from_raw(raw_of, fields, options, fmt)
    return DataFileMeta(
        file_name=name, file_size=size, row_count=footer_rows,
        min_key=binary_row.EMPTY_ROW, max_key=binary_row.EMPTY_ROW, key_stats=EMPTY_STATS,
        value_stats=value_stats, min_sequence_number=0, max_sequence_number=0, schema_id=schema_id,
        level=0, creation_time=creation_time_millis(), delete_row_count=0, file_source=APPEND_FILE_SOURCE,
        value_stats_cols=cols,
    )

