"""Which Paimon data files Iceberg readers get, and how Java names their format.

Only files Iceberg readers can read as they are go in: every file of an append table, and of a
primary-key table only files on the highest level (Java's ``shouldAddFileToIceberg``: they are
fully merged); a fresh build also takes single, delete-free sections of a bucket, as Java's
batch split planner calls them raw-convertible (:func:`raw_convertible`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..io import paths
from ..manifest.expire_file_entry import merge_entries
from ..manifest.manifest import DataFileMeta, ManifestEntry, ManifestFile, ManifestList
from ..mergetree.levels import interval_partition, key_function
from ..refs.snapshot import Snapshot
from ..schema.options import CoreOptions
from ..schema.table_schema import TableSchema

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable


def add_to_iceberg(schema: TableSchema, options: CoreOptions, f: DataFileMeta) -> bool:
    """Java ``shouldAddFileToIceberg``: every append file; of a primary-key table only the
    highest level (fully merged)."""
    if not schema.primary_keys:
        return True
    return f.level == options.num_levels - 1


def live_entries(table: FileStoreTable, snapshot: Snapshot) -> list[ManifestEntry]:
    """The data files a snapshot holds (its base and delta manifests, merged)."""
    manifest_dir = paths.manifest_dir(table.path)
    lists = ManifestList(table.file_io, manifest_dir)
    mf = ManifestFile(table.file_io, manifest_dir)
    entries: list[ManifestEntry] = []
    for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list):
        for meta in lists.read(name):
            entries.extend(mf.read(meta.file_name))
    return merge_entries(entries)


def raw_convertible(schema: TableSchema, options: CoreOptions, entries: list[ManifestEntry]) -> list[ManifestEntry]:
    """The files Java's batch split planner marks raw-convertible, bucket by bucket."""
    if not schema.primary_keys:
        return entries
    by_bucket: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        if e.bucket < 0:
            continue  # postpone files are not read until compacted into a bucket
        by_bucket.setdefault((e.partition, e.bucket), []).append(e)
    dv = options.deletion_vectors_enabled
    first_row = options.merge_engine == "first-row"
    target = options.get_memory_bytes("source.split.target-size", "128 mb") or 128 << 20
    open_cost = options.get_memory_bytes("source.split.open-file-cost", "4 mb") or 4 << 20
    key = key_function([f.type for f in schema.logical_trimmed_primary_keys_type.fields])
    out: list[ManifestEntry] = []
    for group in by_bucket.values():
        files = [e.file for e in group]
        by_name = {e.file.file_name: e for e in group}
        raw = all(f.level != 0 and without_delete_rows(f) for f in files)
        if raw and (dv or first_row or len({f.level for f in files}) == 1):
            out.extend(group)
            continue
        sections = [[f for run in section for f in run.files] for section in interval_partition(files, key)]
        for split in pack_ordered(sections, lambda s: max(sum(f.file_size for f in s), open_cost), target):
            flat = [f for s in split for f in s]
            if len(flat) == 1 and without_delete_rows(flat[0]):
                out.append(by_name[flat[0].file_name])
    return out


def file_format(file_name: str) -> str:
    """Java ``DataFileMeta.fileFormat``: the last extension of the name."""
    return file_name.rsplit(".", 1)[-1].lower() if "." in file_name else "parquet"


def without_delete_rows(f: DataFileMeta) -> bool:
    return f.delete_row_count is None or f.delete_row_count == 0


def pack_ordered(items: list[Any], weight: Callable[[Any], int], target: int) -> list[list[Any]]:
    """Java ``BinPacking.packForOrdered``."""
    packed: list[list[Any]] = []
    bin_items: list[Any] = []
    bin_weight = 0
    for item in items:
        w = weight(item)
        if bin_weight + w > target and bin_items:
            packed.append(bin_items)
            bin_items, bin_weight = [], 0
        bin_weight += w
        bin_items.append(item)
    if bin_items:
        packed.append(bin_items)
    return packed
