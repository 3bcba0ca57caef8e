"""How a commit writes manifests, as Java Paimon 0.9 does.

* :class:`ManifestFileMerger` -- manifest files rolled at ``manifest.target-file-size``, and
  the new base manifest list from the previous snapshot's manifests (Java's
  ``ManifestFileMerger``): full compaction of small / has-deletes manifests past
  ``manifest.full-compaction-threshold-size``, otherwise adjacent small manifests merged at
  ``manifest.target-file-size`` or when ``manifest.merge-min-count`` remain;
* :func:`write_index_manifest` -- the index manifest is a full listing: the previous entries
  combined with a commit's changes per index type (Java's ``IndexManifestFileHandler``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..data.binary_row import deserialize
from ..errors import CommitConflict, CorruptMetadata
from ..io.fileio import join
from ..manifest.columnar import entries_from_table, iter_manifest_tables
from ..manifest.index_manifest import DELETION_VECTORS_INDEX, HASH_INDEX, IndexManifestEntry, IndexManifestFile
from ..manifest.manifest import FileKind, ManifestEntry, ManifestFile, ManifestFileMeta

if TYPE_CHECKING:
    from ..data.types import DataType
    from ..schema.options import CoreOptions


ROLL_SAMPLE = 2_000  # entries encoded to size a big write before it is cut into files


class ManifestFileMerger:
    """Writes and merges the data manifests of one commit attempt.

    Every file written is appended to the caller's ``written`` list (deleted again when the
    attempt does not publish); ``delete`` removes a file best-effort.
    """

    def __init__(
        self,
        manifest_file: ManifestFile,
        manifest_dir: str,
        options: CoreOptions,
        partition_types: list[DataType],
        delete: Callable[[str], None],
    ) -> None:
        self.manifest_file = manifest_file
        self.manifest_dir = manifest_dir
        self.target_size = options.manifest_target_file_size
        self.merge_min_count = options.manifest_merge_min_count
        self.full_compaction_size = options.manifest_full_compaction_threshold_size
        self.partition_types = partition_types
        self._delete = delete

    def write(self, entries: list[ManifestEntry], written: list[str], schema_id: int) -> list[ManifestFileMeta]:
        """Write entries rolling at ``manifest.target-file-size`` (as Java's rolling writer).

        Many entries are sized from a sample first and written straight into evenly sized
        files: encoding a million entries once and then again in pieces doubled the cost of
        a full manifest compaction."""
        if not entries:
            return []
        if len(entries) > ROLL_SAMPLE:
            estimate = self.manifest_file.encoded_size(entries[:ROLL_SAMPLE]) * len(entries) / ROLL_SAMPLE
            if estimate > self.target_size:
                return self._write_chunks(entries, math.ceil(estimate / self.target_size), written, schema_id)
        meta = self.manifest_file.write(entries, schema_id)
        written.append(meta.file_name)
        if meta.file_size <= self.target_size or len(entries) == 1:
            return [meta]
        self._delete(join(self.manifest_dir, meta.file_name))
        written.remove(meta.file_name)
        return self._write_chunks(entries, math.ceil(meta.file_size / self.target_size), written, schema_id)

    def _write_chunks(self, entries: list[ManifestEntry], chunks: int, written: list[str],
                      schema_id: int) -> list[ManifestFileMeta]:
        """``entries`` in order, in ``chunks`` files of (nearly) equal entry counts."""
        per = math.ceil(len(entries) / min(len(entries), max(1, chunks)))
        out = []
        for i in range(0, len(entries), per):
            m = self.manifest_file.write(entries[i : i + per], schema_id)
            written.append(m.file_name)
            out.append(m)
        return out

    def merge(self, inputs: list[ManifestFileMeta], written: list[str], schema_id: int) -> list[ManifestFileMeta]:
        """The base manifest list of the new snapshot from the previous one's manifests."""
        full = self._try_full_compaction(inputs, written, schema_id)
        if full is not None:
            return full
        result: list[ManifestFileMeta] = []
        candidates: list[ManifestFileMeta] = []
        total = 0
        for m in inputs:
            total += m.file_size
            candidates.append(m)
            if total >= self.target_size:
                self._merge_candidates(candidates, result, written, schema_id)
                candidates = []
                total = 0
        if len(candidates) >= self.merge_min_count:
            self._merge_candidates(candidates, result, written, schema_id)
        else:
            result.extend(candidates)
        return result

    def may_contain(self, meta: ManifestFileMeta, partitions: set[bytes]) -> bool:
        """Whether a manifest's partition stats admit any of ``partitions`` (True if unsure)."""
        if not self.partition_types:
            return True
        try:
            nullable = [t.copy(nullable=True) for t in self.partition_types]
            mins = deserialize(meta.partition_stats.min_values, nullable)
            maxs = deserialize(meta.partition_stats.max_values, nullable)
            nulls = meta.partition_stats.null_counts
            return any(self._admits(deserialize(p, self.partition_types), mins, maxs, nulls) for p in partitions)
        except Exception:
            return True

    @staticmethod
    def _admits(values: list[Any], mins: list[Any], maxs: list[Any], nulls: Any) -> bool:
        for k, v in enumerate(values):
            if v is None:
                if nulls is not None and nulls[k] == 0:
                    return False
            elif mins[k] is None or maxs[k] is None or not (mins[k] <= v <= maxs[k]):
                return False
        return True

    def _merge_candidates(
        self, candidates: list[ManifestFileMeta], result: list[ManifestFileMeta], written: list[str], schema_id: int
    ) -> None:
        if len(candidates) == 1:
            result.append(candidates[0])
            return
        merged = self._merge_entry_map(candidates)
        if merged:
            result.extend(self.write(list(merged.values()), written, schema_id))

    def _read(self, manifests: list[ManifestFileMeta]) -> Iterator[tuple[ManifestFileMeta, list[ManifestEntry]]]:
        """Each manifest with its entries, decoded on the columnar path (a batch at a time, so
        memory holds one batch of tables besides the objects the caller keeps)."""
        tables = iter_manifest_tables(self.manifest_file.file_io, self.manifest_dir, manifests)
        for m, table in zip(manifests, tables, strict=True):
            yield m, entries_from_table(table)

    def _merge_entry_map(self, manifests: list[ManifestFileMeta]) -> dict[tuple[Any, ...], ManifestEntry]:
        """Java FileEntry.mergeEntries: ADD then DELETE cancel; an unmatched DELETE is kept."""
        out: dict[tuple[Any, ...], ManifestEntry] = {}
        for m, entries in self._read(manifests):
            for e in entries:
                ident = e.identifier()
                if e.kind == FileKind.ADD:
                    if ident in out:
                        raise CorruptMetadata(
                            join(self.manifest_dir, m.file_name), f"data file {e.file.file_name} is added twice"
                        )
                    out[ident] = e
                elif ident in out:
                    del out[ident]
                else:
                    out[ident] = e
        return out

    def _try_full_compaction(
        self, inputs: list[ManifestFileMeta], written: list[str], schema_id: int
    ) -> list[ManifestFileMeta] | None:
        """Rewrite everything after the leading run of big, delete-free manifests once the rest
        reaches ``manifest.full-compaction-threshold-size``; DELETEs are resolved and dropped."""
        i = 0
        while i < len(inputs) and inputs[i].num_deleted_files == 0 and inputs[i].file_size >= self.target_size:
            i += 1
        base, delta = inputs[:i], inputs[i:]
        if sum(m.file_size for m in delta) < self.full_compaction_size:
            return None
        delta_merged = self._merge_entry_map(delta)
        deletes = {k for k, e in delta_merged.items() if e.kind == FileKind.DELETE}
        result, j = self._untouched_base(base, deletes)
        # skip further base files that hold none of the deleted files
        carried: list[ManifestEntry] = []
        while j < len(base):
            entries = self.manifest_file.read(base[j].file_name)
            kept = [e for e in entries if e.identifier() not in deletes]
            j += 1
            if len(kept) != len(entries):
                carried = kept
                break
            result.append(base[j - 1])
        rest: list[ManifestEntry] = list(carried)
        for _, entries in self._read(base[j:]):
            rest += [e for e in entries if e.identifier() not in deletes]
        rest += [e for e in delta_merged.values() if e.kind == FileKind.ADD]
        result.extend(self.write(rest, written, schema_id))
        return result

    def _untouched_base(
        self, base: list[ManifestFileMeta], deletes: set[tuple[Any, ...]]
    ) -> tuple[list[ManifestFileMeta], int]:
        """The leading base manifests whose partition stats rule out every deleted file (kept
        as they are), and the index of the first one that must be read."""
        if not self.partition_types:
            return [], 0
        delete_parts = {k[0] for k in deletes}
        if not delete_parts:
            return list(base), len(base)
        j = 0
        while j < len(base) and not self.may_contain(base[j], delete_parts):
            j += 1
        return list(base[:j]), j


# ---------------------------------------------------------------------------------------
# The index manifest (IndexManifestFileHandler)
# ---------------------------------------------------------------------------------------


def write_index_manifest(
    index_manifest_file: IndexManifestFile,
    manifest_dir: str,
    previous: str | None,
    changes: list[IndexManifestEntry],
    bucket_unaware: bool,
) -> str:
    """Full listing: previous entries combined with the changes per Java's combiners."""
    prev = index_manifest_file.read(previous) if previous else []
    for e in prev:
        if e.kind != FileKind.ADD:
            raise CorruptMetadata(join(manifest_dir, previous or ""), "index manifest holds a DELETE entry")
    by_type_prev: dict[str, list[IndexManifestEntry]] = {}
    by_type_new: dict[str, list[IndexManifestEntry]] = {}
    for e in prev:
        by_type_prev.setdefault(e.index_file.index_type, []).append(e)
    for e in changes:
        by_type_new.setdefault(e.index_file.index_type, []).append(e)
    out: list[IndexManifestEntry] = []
    for itype in list(dict.fromkeys([*by_type_prev, *by_type_new])):
        p = by_type_prev.get(itype, [])
        n = by_type_new.get(itype, [])
        if itype in (HASH_INDEX, DELETION_VECTORS_INDEX) and not (itype == DELETION_VECTORS_INDEX and bucket_unaware):
            out += _combine_bucketed(p, n)
        else:
            out += _combine_by_file_name(p, n, strict=itype == DELETION_VECTORS_INDEX)
    return index_manifest_file.write(out)


def _combine_bucketed(prev: list[IndexManifestEntry], new: list[IndexManifestEntry]) -> list[IndexManifestEntry]:
    """At most one file per (partition, bucket, type): DELETEs first, then ADDs replace."""
    out: dict[tuple[bytes, int, str], IndexManifestEntry] = {}
    for e in prev:
        out[(e.partition, e.bucket, e.index_file.index_type)] = e
    for e in new:
        if e.kind == FileKind.DELETE:
            out.pop((e.partition, e.bucket, e.index_file.index_type), None)
    for e in new:
        if e.kind == FileKind.ADD:
            out[(e.partition, e.bucket, e.index_file.index_type)] = e
    return list(out.values())


def _combine_by_file_name(
    prev: list[IndexManifestEntry], new: list[IndexManifestEntry], strict: bool
) -> list[IndexManifestEntry]:
    """Bucket-unaware DV (strict) and global indexes: combined per index file name."""
    out: dict[str, IndexManifestEntry] = {e.index_file.file_name: e for e in prev}
    # Java's GlobalCombiner (unaware DV) applies changes in order; GlobalIndexCombiner deletes first
    ordered = list(new) if strict else sorted(new, key=lambda e: e.kind != FileKind.DELETE)
    for e in ordered:
        name = e.index_file.file_name
        if e.kind == FileKind.ADD:
            if strict and name in out:
                raise CommitConflict(f"index file {name} is already in the index manifest")
            out[name] = e
        else:
            if name not in out:
                raise CommitConflict(f"index file {name} to delete is not in the index manifest")
            del out[name]
    return list(out.values())
