"""The postpone bucket (``bucket = -2``): where Java's writers put a postpone table's rows.

A postpone table has no bucket number of its own; each partition gets one when its rows
first land in real buckets (the ``_TOTAL_BUCKETS`` of its files), and keeps it until a
rescale. Rows reach real buckets in two ways, both decided here:

* a batch write with ``postpone.batch-write-fixed-bucket`` (default true since 1.4; Java
  1.1-1.3 always stage) hashes rows straight into the partition's buckets, as Java's
  ``PostponeFixedBucketWriteBuilder`` does, without compacting;
* otherwise rows are *staged*: appended unsorted and unmerged into ``bucket-postpone/`` as
  Avro files without value stats, named ``<data-file.prefix>-u-<commit user>-s-<write id>-w-
  <uuid>-<n>``. The name is load-bearing: Java's postpone compaction groups a writer's
  files by it to replay them in write order. Batch readers do not see staged rows until
  ``compact`` moves them into real buckets (:mod:`core.compact.postpone`).

Bucket number of a partition (Java ``PostponeUtils``): the ``_TOTAL_BUCKETS`` of its files
in real buckets; else ``postpone.default-bucket-num``; else an estimate from the staged
rows (``postpone.target-row-num-per-bucket``) or bytes (``postpone.target-size-per-bucket``),
at least 1. A streaming writer cannot count rows it has not read yet, so a fixed-bucket
write into a new partition estimates from what that partition has staged (1 when nothing).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import CorruptMetadata, InvalidInput
from ..io import paths
from .partition_spec import partition_label

if TYPE_CHECKING:
    from ..manifest.manifest import ManifestEntry
    from ..schema.options import CoreOptions
    from ..schema.table_schema import TableSchema
    from ..table.file_store_table import FileStoreTable

FIXED_BUCKET_OPTION = "postpone.batch-write-fixed-bucket"
DEFAULT_BUCKET_NUM_OPTION = "postpone.default-bucket-num"
STAGED_FORMAT = "avro"
STAGED_SEQUENCE = -1  # Java's KeyValue.UNKNOWN_SEQUENCE: compaction replays in file order instead
_INT_MAX = (1 << 31) - 1


def is_postpone(schema: TableSchema) -> bool:
    return schema.bucket == paths.POSTPONE_BUCKET


def writes_fixed_buckets(options: CoreOptions) -> bool:
    """``postpone.batch-write-fixed-bucket`` (Java 1.4+, default true)."""
    return options.get_bool(FIXED_BUCKET_OPTION, True)


def staged_options(options: CoreOptions, commit_user: str, write_id: int | None = None) -> dict[str, str]:
    """Java ``PostponeBucketFileStoreWrite``'s writer options: Avro, no value stats, and the
    writer prefix ``<prefix>-u-<user>-s-<write id>-w-`` (random write id, as a Java writer
    without a subtask id)."""
    wid = random.randrange(_INT_MAX) if write_id is None else write_id
    return {
        **options.options,
        "file.format": STAGED_FORMAT,
        "metadata.stats-mode": "none",
        "data-file.prefix": f"{options.data_file_prefix}-u-{commit_user}-s-{wid}-w-",
    }


def writer_prefix(file_name: str) -> str:
    """Java ``getWriterPrefix``: the name up to and including the last ``-w-``."""
    cut = file_name.rfind("-w-")
    if cut < 0:
        raise CorruptMetadata(file_name, "postpone-bucket file name lacks the '-w-' writer part")
    return file_name[: cut + 3]


@dataclass
class BucketNums:
    """The bucket number of each partition of a postpone table (see the module docstring)."""

    table: FileStoreTable
    known: dict[bytes, int] = field(default_factory=dict)
    staged_rows: dict[bytes, int] = field(default_factory=dict)
    staged_bytes: dict[bytes, int] = field(default_factory=dict)

    @classmethod
    def of(cls, table: FileStoreTable, entries: Iterable[ManifestEntry]) -> BucketNums:
        nums = cls(table)
        for e in entries:
            if e.bucket == paths.POSTPONE_BUCKET:
                nums.staged_rows[e.partition] = nums.staged_rows.get(e.partition, 0) + e.file.row_count
                nums.staged_bytes[e.partition] = nums.staged_bytes.get(e.partition, 0) + e.file.file_size
            elif e.total_buckets > 0:
                old = nums.known.setdefault(e.partition, e.total_buckets)
                if old != e.total_buckets:
                    label = partition_label(table.schema, e.partition) or str(table.identifier)
                    raise InvalidInput(
                        f"{label} holds files of {old} and {e.total_buckets} buckets; rewrite it with "
                        "`paimon-cli rescale --bucket-num N` first"
                    )
        return nums

    def __call__(self, partition: bytes) -> int:
        n = self.known.get(partition)
        if n is not None:
            return n
        return self.estimate(partition)

    def estimate(self, partition: bytes) -> int:
        """A partition without real buckets yet (Java 2.1 ``determineBucketNum``)."""
        opts = self.table.options
        default = opts.get_int(DEFAULT_BUCKET_NUM_OPTION)
        if default is not None:
            if default <= 0:
                raise InvalidInput(f"{DEFAULT_BUCKET_NUM_OPTION} = {default}: must be positive")
            return default
        target_rows = opts.get_int("postpone.target-row-num-per-bucket")
        if target_rows is not None and target_rows > 0:
            return max(1, math.ceil(self.staged_rows.get(partition, 0) / target_rows))
        target_size = opts.get_memory_bytes("postpone.target-size-per-bucket", "1 gb") or (1 << 30)
        return max(1, math.ceil(self.staged_bytes.get(partition, 0) / target_size))

    def resolved(self, partitions: Iterable[bytes]) -> Mapping[bytes, int]:
        return {p: self(p) for p in partitions}


__all__ = ["BucketNums", "STAGED_SEQUENCE", "is_postpone", "staged_options", "writer_prefix",
           "writes_fixed_buckets"]
