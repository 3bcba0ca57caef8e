"""Dynamic-bucket tables (``bucket`` = -1): HASH index files and the bucket assigner.

A dynamic-bucket primary-key table remembers which bucket each key went to only through
per-(partition, bucket) HASH index files (FORMAT-FACTS 13: bare big-endian int32 key
hashes, no header). A writer must load them so updated keys land in the bucket that
already holds them (else reads show duplicates), and must fill buckets in Java's order so
the table stays shaped as a Java writer would leave it. Semantics follow Java's
``HashBucketAssigner`` / ``PartitionIndex`` (and ``SimpleHashBucketAssigner`` for
overwrites), vectorised over batches of hashes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ..data.binary_row import hash_row_bytes
from ..errors import CorruptMetadata, InvalidInput, NotYetSupported, PaimonError
from ..io import paths
from ..io.fileio import FileIO, basename, join, parent
from ..manifest.index_manifest import HASH_INDEX, IndexFileMeta, IndexManifestFile
from ..utils.interrupt import discard
from . import index_paths

if TYPE_CHECKING:
    import numpy as np

    from ..manifest.index_manifest import IndexManifestEntry
    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable

_SHORT_MAX = 32767  # Java stores bucket ids as short: ids 0..32766
_LATEST: Any = object()


# ---------------------------------------------------------------------------------------
# HASH index files
# ---------------------------------------------------------------------------------------


def decode_hashes(data: bytes, path: str = "<hash index>") -> np.ndarray:
    """The int32 hashes of a HASH index file, in file order."""
    import numpy as np

    if len(data) % 4:
        raise CorruptMetadata(path, f"HASH index has {len(data)} bytes, not a multiple of 4")
    return np.frombuffer(data, dtype=">i4").astype(np.int32)


def encode_hashes(hashes: np.ndarray) -> bytes:
    """Java ``IntFileUtils.writeInts``: each hash as a big-endian int32, nothing else."""
    import numpy as np

    return np.asarray(hashes, dtype=np.int32).astype(">i4").tobytes()


def index_file_path(table_path: str, meta: IndexFileMeta) -> str:
    """Index files live in ``<table>/index/`` unless the meta records an external path."""
    return meta.external_path or join(paths.index_dir(table_path), meta.file_name)


def read_hash_index(file_io: FileIO, path: str) -> np.ndarray:
    return decode_hashes(file_io.read_bytes(path), path)


class IndexFileNamer:
    """``index-<uuid>-<n>``: one UUID per writer, a counter from 0 (Java IndexPathFactory)."""

    def __init__(self) -> None:
        self.base = str(uuid.uuid4())
        self.counter = 0

    def next(self) -> str:
        name = f"index-{self.base}-{self.counter}"
        self.counter += 1
        return name


def write_hash_index(file_io: FileIO, index_dir: str, hashes: np.ndarray, namer: IndexFileNamer) -> IndexFileMeta:
    """Write one HASH index file into ``index_dir`` and describe it."""
    name = namer.next()
    return write_hash_file(file_io, join(index_dir, name), hashes)


def write_hash_file(file_io: FileIO, path: str, hashes: np.ndarray, external_path: str | None = None) -> IndexFileMeta:
    """Write one HASH index file at ``path`` and describe it (row_count = number of hashes)."""
    data = encode_hashes(hashes)
    file_io.write_bytes(path, data)
    return IndexFileMeta(index_type=HASH_INDEX, file_name=basename(path), file_size=len(data),
                         row_count=len(data) // 4, external_path=external_path)


# ---------------------------------------------------------------------------------------
# Java HashMap<Integer, Long> iteration order
# ---------------------------------------------------------------------------------------


class _JavaBucketMap:
    """Bucket -> row count, iterated in java.util.HashMap order.

    ``PartitionIndex`` hands a new key to the first bucket with room *in HashMap iteration
    order*: by table slot (``bucket & (capacity - 1)`` for small ints), then insertion order
    within a slot. With bucket ids below the capacity that is ascending order; sparse ids
    (several assigners, dropped buckets) wrap, so the capacity growth is modelled too.
    """

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self._seq: dict[int, int] = {}
        self._next_seq = 0
        self.capacity = 0

    @property
    def _threshold(self) -> int:
        return self.capacity * 3 // 4

    def _resize(self) -> None:
        self.capacity = 16 if self.capacity == 0 else self.capacity * 2

    def _insert(self, bucket: int, count: int) -> None:
        self.counts[bucket] = count
        self._seq[bucket] = self._next_seq
        self._next_seq += 1

    def load_file(self, bucket: int, rows: int) -> None:
        """``buckets.compute(bucket, +1)`` once per hash of a file (PartitionIndex.loadIndex).

        ``compute`` resizes lazily at the start of a call when size > threshold.
        """
        if rows <= 0:
            return
        if self.capacity == 0 or len(self.counts) > self._threshold:
            self._resize()
        if bucket in self.counts:
            self.counts[bucket] += rows
            return
        self._insert(bucket, rows)
        if rows >= 2 and len(self.counts) > self._threshold:
            self._resize()

    def put_new(self, bucket: int, count: int) -> None:
        """``put`` of an absent key: resize after the insert when size > threshold."""
        if self.capacity == 0:
            self._resize()
        self._insert(bucket, count)
        if len(self.counts) > self._threshold:
            self._resize()

    def remove(self, bucket: int) -> None:
        del self.counts[bucket]
        del self._seq[bucket]

    def ordered(self) -> list[int]:
        mask = max(self.capacity, 1) - 1
        # Integer.hashCode is the value; HashMap spreads it with h ^ (h >>> 16).
        return sorted(self.counts, key=lambda b: (((b ^ (b >> 16)) & mask), self._seq[b]))


# ---------------------------------------------------------------------------------------
# Assigner
# ---------------------------------------------------------------------------------------


class HashIndexChange(NamedTuple):
    """A bucket's replaced HASH file: commit ``new_file`` and delete ``old_file`` (if any)."""

    partition: bytes
    bucket: int
    new_file: IndexFileMeta
    old_file: IndexFileMeta | None


@dataclass
class _Channel:
    """One Java assigner's view of a partition (PartitionIndex minus hash2Bucket)."""

    assign_id: int
    buckets: _JavaBucketMap
    total: list[int]
    total_set: set[int]
    upper_bound_reached: bool = False
    free_cursor: int = 0  # no free owned id below this


@dataclass
class _Partition:
    partition: bytes
    partition_hash: int
    entries: list[IndexManifestEntry]
    keys: np.ndarray  # sorted int32 hashes (hash2Bucket keys)
    values: np.ndarray  # int32 buckets, aligned with keys
    file_hashes: dict[int, np.ndarray] = field(default_factory=dict)  # bucket -> hashes in file order
    old_files: dict[int, IndexFileMeta] = field(default_factory=dict)
    added: dict[int, list[np.ndarray]] = field(default_factory=dict)  # bucket -> new hashes, in order
    channels: dict[int, _Channel] = field(default_factory=dict)


def _java_mod_abs(values: np.ndarray, n: int) -> np.ndarray:
    import numpy as np

    return np.abs(np.fmod(values.astype(np.int64), n))


class DynamicBucketAssigner:
    """Bucket ids for key hashes of a dynamic-bucket table, one writer, many batches.

    * Keys (hashes) found in the partition's HASH files keep their bucket; a hash seen
      twice in one or several batches always gets the same bucket.
    * New hashes go, in order of first appearance, to the first bucket with fewer than
      ``dynamic-bucket.target-row-num`` hashes in Java HashMap order; when none has room the
      lowest free bucket id is opened. With ``dynamic-bucket.max-buckets`` reached, a random
      existing bucket is picked (as Java does; the choice is remembered in the index).
    * Assigners: like a Java job whose assigner parallelism is
      ``dynamic-bucket.assigner-parallelism`` (else ``dynamic-bucket.initial-buckets``,
      else 1) with ``min(initial-buckets, parallelism)`` assigners: each key is routed by
      ``BucketAssigner.computeAssigner`` and each assigner owns the buckets
      ``b % assigners == id % assigners``. The default, one assigner, is what a single
      Java writer does.
    * ``ignore_existing=True`` is Java's overwrite path (SimpleHashBucketAssigner): no
      index is loaded and the new HASH files replace nothing.

    After the data files are written, ``index_changes()`` writes one new HASH file per
    (partition, bucket) that gained hashes (old hashes in file order, then the new ones)
    and returns what the commit must add and delete.
    """

    def __init__(
        self,
        table: FileStoreTable,
        snapshot: Snapshot | None = _LATEST,
        *,
        ignore_existing: bool = False,
        num_channels: int | None = None,
        num_assigners: int | None = None,
        seed: int | None = None,
    ) -> None:
        import numpy as np

        schema = table.schema
        opts = table.options
        if not schema.primary_keys:
            raise InvalidInput(f"table {table.identifier}: dynamic bucket assignment needs a primary-key table")
        if opts.bucket != -1:
            raise InvalidInput(f"table {table.identifier}: dynamic bucket assignment needs bucket = -1, got {opts.bucket}")
        if not set(schema.partition_keys) <= set(schema.primary_keys):
            raise NotYetSupported(
                f"table {table.identifier}: cross-partition upsert (primary key without every partition key) "
                "with bucket = -1 is not supported"
            )
        self.table = table
        self.file_io = table.file_io
        self.target_row_num = opts.dynamic_bucket_target_row_num
        if self.target_row_num <= 0:
            raise InvalidInput(f"dynamic-bucket.target-row-num must be positive, got {self.target_row_num}")
        self.max_buckets = opts.dynamic_bucket_max_buckets
        if self.max_buckets == 0 or self.max_buckets < -1:
            raise InvalidInput(f"dynamic-bucket.max-buckets must be -1 or positive, got {self.max_buckets}")
        initial = opts.dynamic_bucket_initial_buckets
        parallelism = opts.get_int("dynamic-bucket.assigner-parallelism")
        channels = num_channels or parallelism or initial or 1
        if self.max_buckets != -1:
            channels = min(channels, self.max_buckets)
        assigners = num_assigners or min(initial or channels, channels)
        if channels <= 0 or assigners <= 0 or assigners > channels:
            raise InvalidInput(f"dynamic bucket: invalid assigner layout ({assigners} assigners, {channels} channels)")
        self.num_channels = channels
        self.num_assigners = assigners
        self.ignore_existing = ignore_existing
        if ignore_existing:
            self.snapshot = None
        else:
            self.snapshot = table.snapshot_manager.latest_snapshot() if snapshot is _LATEST else snapshot
        self._entries_by_partition: dict[bytes, list[IndexManifestEntry]] | None = None
        self._partitions: dict[bytes, _Partition] = {}
        self._namer = IndexFileNamer()
        self._written: list[str] = []
        self._rng = np.random.default_rng(seed)

    # -- loading ----------------------------------------------------------------------

    def _hash_entries(self, partition: bytes) -> list[IndexManifestEntry]:
        if self.snapshot is None:
            return []
        if self._entries_by_partition is None:
            by: dict[bytes, list[IndexManifestEntry]] = {}
            index_manifests = IndexManifestFile(self.table.file_io, paths.manifest_dir(self.table.path))
            for e in index_manifests.live_entries(self.snapshot.index_manifest):
                if e.index_file.index_type == HASH_INDEX:
                    by.setdefault(e.partition, []).append(e)
            self._entries_by_partition = by
        return self._entries_by_partition.get(partition, [])

    def _partition(self, partition: bytes) -> _Partition:
        import numpy as np

        st = self._partitions.get(partition)
        if st is not None:
            return st
        entries = self._hash_entries(partition)
        file_hashes: dict[int, np.ndarray] = {}
        old_files: dict[int, IndexFileMeta] = {}
        all_h: list[np.ndarray] = []
        all_b: list[np.ndarray] = []
        for e in entries:
            path = index_paths.index_file_path(self.table, partition, e.bucket, e.index_file)
            hs = read_hash_index(self.file_io, path)
            if len(hs) != e.index_file.row_count:
                raise CorruptMetadata(path, f"HASH index holds {len(hs)} hashes, its manifest says {e.index_file.row_count}")
            file_hashes[e.bucket] = hs
            old_files[e.bucket] = e.index_file
            all_h.append(hs)
            all_b.append(np.full(len(hs), e.bucket, dtype=np.int32))
        if all_h:
            # Int2ShortHashMap.Builder: a later put of the same hash wins.
            h = np.concatenate(all_h)[::-1]
            b = np.concatenate(all_b)[::-1]
            keys, first = np.unique(h, return_index=True)
            values = b[first]
        else:
            keys = np.zeros(0, dtype=np.int32)
            values = np.zeros(0, dtype=np.int32)
        st = _Partition(
            partition=partition,
            partition_hash=hash_row_bytes(partition[4:]),
            entries=entries,
            keys=keys.astype(np.int32),
            values=values.astype(np.int32),
            file_hashes=file_hashes,
            old_files=old_files,
        )
        self._partitions[partition] = st
        return st

    def _is_my_bucket(self, bucket: int, assign_id: int) -> bool:
        return bucket % self.num_assigners == assign_id % self.num_assigners

    def _channel(self, st: _Partition, assign_id: int) -> _Channel:
        ch = st.channels.get(assign_id)
        if ch is not None:
            return ch
        bmap = _JavaBucketMap()
        for e in st.entries:
            if self._is_my_bucket(e.bucket, assign_id):
                bmap.load_file(e.bucket, e.index_file.row_count)
        order = bmap.ordered()
        ch = _Channel(assign_id, bmap, list(order), set(order), free_cursor=assign_id % self.num_assigners)
        st.channels[assign_id] = ch
        return ch

    # -- assignment -------------------------------------------------------------------

    def assign(self, partition: bytes, hashes: np.ndarray) -> np.ndarray:
        """Bucket of every hash (int32, same order) for rows of one partition.

        ``partition`` is the serialized partition BinaryRow as in manifests
        (``binary_row.EMPTY_ROW`` for unpartitioned tables).
        """
        import numpy as np

        h = np.asarray(hashes, dtype=np.int32)
        st = self._partition(partition)
        out = np.empty(len(h), dtype=np.int32)
        if len(h) == 0:
            return out
        found = np.zeros(len(h), dtype=bool)
        if len(st.keys):
            pos = np.minimum(np.searchsorted(st.keys, h), len(st.keys) - 1)
            found = st.keys[pos] == h
            out[found] = st.values[pos[found]]
        if found.all():
            return out
        new = h[~found]
        uniq, first = np.unique(new, return_index=True)
        perm = np.argsort(first, kind="stable")
        seq = uniq[perm]  # new hashes in order of first appearance
        assigned = np.empty(len(seq), dtype=np.int32)
        if self.num_channels == 1:
            assigned[:] = self._assign_new(self._channel(st, 0), seq)
        else:
            start = abs(int(np.fmod(np.int64(st.partition_hash), self.num_channels)))
            chan = (start + _java_mod_abs(seq, self.num_assigners)) % self.num_channels
            for c in np.unique(chan).tolist():
                sel = chan == c
                assigned[sel] = self._assign_new(self._channel(st, int(c)), seq[sel])
        for b in np.unique(assigned).tolist():
            st.added.setdefault(int(b), []).append(seq[assigned == b])
        # remember the new keys (sorted insert keeps lookups O(log n))
        o = np.argsort(seq, kind="stable")
        ins = np.searchsorted(st.keys, seq[o])
        st.keys = np.insert(st.keys, ins, seq[o])
        st.values = np.insert(st.values, ins, assigned[o])
        by_uniq = np.empty(len(uniq), dtype=np.int32)
        by_uniq[perm] = assigned
        out[~found] = by_uniq[np.searchsorted(uniq, new)]
        return out

    def _assign_new(self, ch: _Channel, seq: np.ndarray) -> np.ndarray:
        """PartitionIndex.assign for distinct new hashes, one bucket fill at a time."""
        import numpy as np

        out = np.empty(len(seq), dtype=np.int32)
        target = self.target_row_num
        i, m = 0, len(seq)
        while i < m:
            placed = False
            for b in ch.buckets.ordered():
                count = ch.buckets.counts[b]
                if count < target:
                    take = min(target - count, m - i)
                    out[i : i + take] = b
                    ch.buckets.counts[b] = count + take
                    i += take
                    placed = True
                    break
                ch.buckets.remove(b)  # full: Java's iterator drops it
            if placed:
                continue
            if not ch.upper_bound_reached:
                # Every bucket with room is used up: open fresh ones. Java opens one, fills it
                # to the target, drops it from the map when the next key arrives, opens the
                # next; so all but the last end up full and only the last stays in the map.
                rest = m - i
                fresh = self._free_buckets(ch, -(-rest // target))
                if fresh:
                    take = min(rest, len(fresh) * target)
                    out[i : i + take] = np.repeat(np.asarray(fresh, dtype=np.int32), target)[:take]
                    ch.total.extend(fresh)
                    ch.total_set.update(fresh)
                    ch.buckets.put_new(fresh[-1], take - (len(fresh) - 1) * target)
                    i += take
                    continue
                if self.max_buckets == -1:
                    raise PaimonError(
                        f"table {self.table.identifier}: no free dynamic bucket id below {_SHORT_MAX}; "
                        f"increase dynamic-bucket.target-row-num ({target})"
                    )
                ch.upper_bound_reached = True
            if not ch.total:
                raise PaimonError(
                    f"table {self.table.identifier}: assigner {ch.assign_id} owns no bucket below "
                    f"dynamic-bucket.max-buckets ({self.max_buckets})"
                )
            pool = np.asarray(ch.total, dtype=np.int32)
            out[i:] = pool[self._rng.integers(0, len(pool), m - i)]
            i = m
        return out

    def _free_buckets(self, ch: _Channel, count: int) -> list[int]:
        """The ``count`` lowest unused bucket ids this assigner owns (fewer at the limit)."""
        limit = (_SHORT_MAX if self.max_buckets == -1 else self.max_buckets) - 1
        out: list[int] = []
        b = ch.free_cursor
        while b <= limit and len(out) < count:
            if b not in ch.total_set:
                out.append(b)
            b += self.num_assigners
        ch.free_cursor = b  # ids are never freed: every owned id below b is taken now
        return out

    # -- index files ------------------------------------------------------------------

    def bucket_row_counts(self, partition: bytes) -> dict[int, int]:
        """Hashes per bucket of a loaded partition (existing plus assigned so far)."""
        st = self._partition(partition)
        counts = {b: len(h) for b, h in st.file_hashes.items()}
        for b, parts in st.added.items():
            counts[b] = counts.get(b, 0) + sum(len(p) for p in parts)
        return counts

    def index_changes(self) -> list[HashIndexChange]:
        """Write a new HASH file for every (partition, bucket) that gained hashes.

        Old hashes keep their file order and the new ones follow, so re-writing an
        unchanged Java file reproduces it byte for byte. Calling again only reports
        buckets changed since (like Java's prepareCommit).
        """
        import numpy as np

        changes: list[HashIndexChange] = []
        if not any(st.added for st in self._partitions.values()):
            return changes
        for st in self._partitions.values():
            for b in sorted(st.added):
                parts = st.added[b]
                old = st.file_hashes.get(b)
                content = np.concatenate(([old] if old is not None else []) + parts)
                path, external = index_paths.new_index_file_path(self.table, st.partition, b, self._namer.next())
                self.file_io.mkdirs(parent(path))
                meta = write_hash_file(self.file_io, path, content, external)
                self._written.append(path)
                changes.append(HashIndexChange(st.partition, b, meta, st.old_files.get(b)))
                st.file_hashes[b] = content
                st.old_files[b] = meta
            st.added.clear()
        return changes

    @property
    def written_files(self) -> list[str]:
        """Paths of the HASH files written so far (for cleanup on abort)."""
        return list(self._written)

    def abort(self) -> None:
        """Delete the HASH files this assigner wrote (best effort)."""
        discard(self.file_io, self._written)
        self._written.clear()
