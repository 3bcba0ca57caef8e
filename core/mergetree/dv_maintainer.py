"""Deletion vectors of one bucket during a compaction (Java ``DeletionVectorsMaintainer`` /
``BucketedDvMaintainer``).

Why: in a deletion-vector table every key has at most one live record on levels >= 1. When a
compaction moves a newer record of a key up, the older record in a file that stays where it
is must be marked deleted instead of rewritten; files the compaction rewrites lose their
vectors. A primary-key bucket keeps ALL its vectors in ONE index file, so any change rewrites
that file: the new file is added, the bucket's old one is deleted (the index manifest keeps at
most one DV file per bucket), and when no vector is left Java still writes an (empty) file.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from ..index.deletion_vectors import MAX_32_POSITION, DeletionVector, read_deletion_vectors, write_deletion_vector_index
from ..index.index_paths import index_file_dir, index_file_path, new_index_file_path
from ..io.fileio import parent
from ..manifest.index_manifest import DELETION_VECTORS_INDEX, IndexFileMeta

if TYPE_CHECKING:
    import numpy as np

    from ..table.file_store_table import FileStoreTable


class DvMaintainer:
    """The deletion vectors of one (partition, bucket), restored from its DV index files."""

    def __init__(self, table: FileStoreTable, partition: bytes, bucket: int,
                 index_files: tuple[IndexFileMeta, ...] | list[IndexFileMeta] = (),
                 vectors: dict[str, DeletionVector] | None = None) -> None:
        """``vectors``: the bucket's DVs when the caller already read them from ``index_files``."""
        self.table = table
        self.partition = partition
        self.bucket = bucket
        self.bitmap64 = table.options.deletion_vectors_bitmap64
        self.old_files = [f for f in index_files if f.index_type == DELETION_VECTORS_INDEX]
        self.vectors: dict[str, DeletionVector] = dict(vectors) if vectors is not None else {}
        for f in self.old_files if vectors is None else ():
            if f.dv_ranges:
                path = index_file_path(table, partition, bucket, f)
                self.vectors.update(read_deletion_vectors(table.file_io, path, f.dv_ranges))
        self.modified = False

    def vector_of(self, file_name: str) -> DeletionVector | None:
        return self.vectors.get(file_name)

    def notify_deletions(self, file_name: str, positions: np.ndarray | Any) -> None:
        """Mark ``positions`` (any int array) of ``file_name`` deleted (Java notifyNewDeletion)."""
        import numpy as np
        from pyroaring import BitMap, BitMap64

        pos = np.asarray(positions, dtype=np.int64)
        if pos.size == 0:
            return
        dv = self.vectors.get(file_name)
        if dv is None:
            dv = self.vectors[file_name] = DeletionVector(bitmap64=self.bitmap64)
        if not dv.is_64 and (int(pos.min()) < 0 or int(pos.max()) > MAX_32_POSITION):
            dv = self.vectors[file_name] = DeletionVector(BitMap64(dv.positions()), True)
        before = len(dv.bitmap)
        add = BitMap64(pos.astype(np.uint64)) if dv.is_64 else BitMap(pos.astype(np.uint32))
        dv.bitmap |= add
        if len(dv.bitmap) != before:
            self.modified = True

    def remove(self, file_name: str) -> None:
        """A rewritten file's vector goes away with it (Java removeDeletionVectorOf)."""
        if self.vectors.pop(file_name, None) is not None:
            self.modified = True

    def write(self) -> tuple[list[IndexFileMeta], list[IndexFileMeta], list[str]]:
        """(new index files, deleted index files, written paths); nothing when unmodified.

        One file with every vector of the bucket, in the table's bitmap variant; the old
        file(s) of the bucket are deleted. Java writes an empty (version-byte-only) file when
        no vector is left, which keeps readers of either version happy.
        """
        if not self.modified:
            return [], [], []
        vectors = {n: dv for n, dv in sorted(self.vectors.items()) if not dv.is_empty()}
        name = f"index-{uuid.uuid4()}-0"
        path, external = new_index_file_path(self.table, self.partition, self.bucket, name)
        self.table.file_io.mkdirs(parent(path))
        size, metas = write_deletion_vector_index(self.table.file_io, path, vectors, self.bitmap64)
        meta = IndexFileMeta(DELETION_VECTORS_INDEX, name, size, len(metas), tuple(metas), external)
        self.modified = False
        return [meta], list(self.old_files), [path]


__all__ = ["DvMaintainer", "index_file_dir", "index_file_path"]
