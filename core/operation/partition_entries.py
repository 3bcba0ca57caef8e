"""Java's ``PartitionEntry`` / ``BucketEntry`` numbers of one snapshot, read with Arrow.

Shared by the ``$partitions`` / ``$buckets`` system tables and by ``compact
--partition-idle-time``, which, as Java's ``snapshotReader.partitionEntries()``, judges a
partition by its newest file creation time.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import closing
from typing import TYPE_CHECKING, Any, cast

from ..manifest.columnar import iter_manifest_tables
from ..manifest.manifest import FileKind
from .scan import FileStoreScan, is_postpone_table

if TYPE_CHECKING:
    import pyarrow as pa

    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable

_SUMS = ["_ROW_COUNT", "_FILE_SIZE", "_COUNT"]


def entry_groups(table: FileStoreTable, snapshot: Snapshot, keys: list[str], real_buckets: bool) -> list[dict[str, Any]]:
    """Java's PartitionEntry/BucketEntry merge, grouped by ``keys`` with Arrow: ADDs count up,
    DELETEs down, the newest creation time wins; groups left with files are kept.

    Over the raw (unmerged) entries, as Java, so ``_CREATION_TIME`` also sees files compacted
    away; manifest by manifest, so memory is one manifest plus the groups. ``real_buckets``: a
    postpone table's postponed files left out (Java's batch scan)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    scan = FileStoreScan(table)
    drop = real_buckets and is_postpone_table(table.schema)
    partial = []
    columns = ["_KIND", "_PARTITION", "_BUCKET", "_ROW_COUNT", "_FILE_SIZE", "_CREATION_TIME"]
    tables = cast("Generator[pa.Table, None, None]",  # a generator: closing it ends the prefetch
                  iter_manifest_tables(scan.file_io, scan.manifest_dir, scan.data_manifests(snapshot), columns))
    with closing(tables):
        for tbl in tables:
            if drop:
                tbl = tbl.filter(pc.greater_equal(tbl.column("_BUCKET"), 0))
            sign = pc.if_else(pc.equal(tbl.column("_KIND"), int(FileKind.DELETE)), -1, 1).cast(pa.int64())
            signed = pa.table({
                **{k: tbl.column(k) for k in keys}, "_ROW_COUNT": pc.multiply(tbl.column("_ROW_COUNT"), sign),
                "_FILE_SIZE": pc.multiply(tbl.column("_FILE_SIZE"), sign), "_COUNT": sign,
                "_CREATION_TIME": tbl.column("_CREATION_TIME")})
            partial.append(_group(signed, keys))
    if not partial:
        return []
    total = _group(pa.concat_tables(partial), keys)
    return cast("list[dict[str, Any]]", total.filter(pc.greater(total.column("_COUNT"), 0)).to_pylist())


def last_file_creation_times(table: FileStoreTable, snapshot: Snapshot) -> dict[bytes, int | None]:
    """Each partition with files in ``snapshot`` -> Java's ``PartitionEntry.lastFileCreationTime``
    as stored (the writer's wall clock as if UTC millis); None when no entry carries one."""
    return {g["_PARTITION"]: _millis(g["_CREATION_TIME"])
            for g in entry_groups(table, snapshot, ["_PARTITION"], real_buckets=False)}


def _millis(value: Any) -> int | None:
    """``_CREATION_TIME`` as Arrow hands it back: a naive datetime (timestamp-millis) or an int."""
    import datetime

    if value is None or isinstance(value, int):
        return value
    return int((value - datetime.datetime(1970, 1, 1)) // datetime.timedelta(milliseconds=1))


def _group(tbl: Any, keys: list[str]) -> Any:
    """Sums of :data:`_SUMS` and the latest ``_CREATION_TIME`` per ``keys``, columns keep their names."""
    grouped = tbl.group_by(keys, use_threads=False).aggregate(
        [(c, "sum") for c in _SUMS] + [("_CREATION_TIME", "max")])
    names = [*keys, *(f"{c}_sum" for c in _SUMS), "_CREATION_TIME_max"]
    return grouped.select(names).rename_columns([*keys, *_SUMS, "_CREATION_TIME"])
