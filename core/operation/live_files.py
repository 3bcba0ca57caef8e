"""Which files a snapshot or tag still lists, as Arrow key tables (the columnar path of deleters).

Expiring 10,000 snapshots of a 1,000,000-file table asks, for every file a delta deleted,
"does the end snapshot (or the last tag before it) still list it?". Holding those live sets
as ``ExpireFileEntry`` objects in Python sets costs ~0.5 KiB and ~50 µs a file (hundreds of
MiB, a minute); as an Arrow table of ``(_PARTITION, _BUCKET, _FILE_NAME)`` decoded by the
columnar manifest path it costs ~80 bytes and ~1 µs. Membership is asked in batches
(:class:`PendingDeletes`): a vectorised name filter, then an exact join on the whole key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..manifest.expire_file_entry import ExpireFileEntry, FileKey
from ..manifest.manifest import FileKind

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ..manifest.manifest import ManifestFileMeta
    from ..refs.snapshot import Snapshot
    from .file_deletion import GuardedReader

# how deleters tell data files apart (FileKey)
KEY = ("_PARTITION", "_BUCKET", "_FILE_NAME")
# a delta of up to this many entries is decoded to objects (polars' per-file cost is ~2-10 ms)
OBJECTS_UP_TO = 5000
# what ExpireFileEntry holds
LIGHT = ("_KIND", "_PARTITION", "_BUCKET", "_LEVEL", "_FILE_NAME", "_FILE_SIZE", "_EXTRA_FILES",
         "_EMBEDDED_FILE_INDEX", "_FILE_SOURCE", "_EXTERNAL_PATH")


def empty_keys() -> pa.Table:
    return _empty(KEY)


def keys_table(keys: Sequence[FileKey]) -> pa.Table:
    import pyarrow as pa

    schema = empty_keys().schema
    return pa.table([pa.array([k[i] for k in keys], schema.field(i).type) for i in range(3)], schema=schema)


def fresh_copy(table: pa.Table) -> pa.Table:
    """``table`` in buffers of its own: a projection of a decoded manifest would otherwise keep
    the whole decode (every statistic) alive."""
    import numpy as np
    import pyarrow as pa

    return table.take(pa.array(np.arange(table.num_rows, dtype=np.int64)))


def live_rows(tables: list[pa.Table], columns: Sequence[str]) -> pa.Table | None:
    """The live rows' ``columns`` of these manifests (columns ``_KIND`` + the identifier), in no
    particular order; None if a file name repeats outside any DELETE (the caller merges exactly).

    Only rows whose name some DELETE names can cancel: they go through the exact merge; every
    other row is an ADD of its own file and is live. ``tables`` is emptied as it is consumed."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..manifest.columnar import merge_live

    deleted = [t.column("_FILE_NAME").filter(pc.equal(t.column("_KIND"), int(FileKind.DELETE))) for t in tables]
    names = pa.chunked_array(deleted, pa.large_string()).combine_chunks()
    kept: list[pa.Table] = []
    touched: list[pa.Table] = []
    while tables:
        t = tables.pop(0)
        mask = pc.is_in(t.column("_FILE_NAME"), value_set=names) if len(names) else None
        if mask is None or not pc.any(mask).as_py():
            kept.append(t.select(list(columns)))
            continue
        kept.append(t.filter(pc.invert(mask)).select(list(columns)))
        touched.append(t.filter(mask))
    live = pa.concat_tables(kept) if kept else None
    if live is not None and pc.count_distinct(live.column("_FILE_NAME")).as_py() != live.num_rows:
        return None
    merged = merge_live(touched).select(list(columns)) if touched else None
    parts = [p for p in (live, merged) if p is not None]
    return pa.concat_tables(parts) if parts else _empty(columns)


def _empty(columns: Sequence[str]) -> pa.Table:
    from ..manifest.columnar import ENTRY_SCHEMA

    return ENTRY_SCHEMA.empty_table().select(list(columns))


def rows_in(keys: pa.Table, live: pa.Table) -> np.ndarray:
    """Per row of ``keys``: whether ``live`` has a row with the same FileKey (exact)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    out = np.zeros(keys.num_rows, dtype=bool)
    if keys.num_rows == 0 or live.num_rows == 0:
        return out
    names = keys.column("_FILE_NAME").combine_chunks()
    cand = live.filter(pc.is_in(live.column("_FILE_NAME"), value_set=names))  # names are UUIDs: few hits
    if cand.num_rows == 0:
        return out
    rows = keys.select(list(KEY)).append_column("__row", pa.array(np.arange(keys.num_rows, dtype=np.int64)))
    hit = rows.join(cand.select(list(KEY)), keys=list(KEY), join_type="inner",
                    use_threads=False).column("__row")  # no Acero work outlives the call (utils.workers)
    out[hit.to_numpy()] = True
    return out


def expire_entries(table: pa.Table) -> list[ExpireFileEntry]:
    """``ExpireFileEntry`` objects of the rows (columns :data:`LIGHT`), what the object path gives."""
    cols = {c: table.column(c).to_pylist() for c in LIGHT}
    return [
        ExpireFileEntry(kind=k, partition=p, bucket=b, level=lv, file_name=n, file_size=s,
                        extra_files=tuple(x or ()), embedded_index=i, file_source=src, external_path=ext)
        for k, p, b, lv, n, s, x, i, src, ext in zip(*(cols[c] for c in LIGHT), strict=True)
    ]


def deleted_in_delta(reader: GuardedReader, snap: Snapshot, missing_ok: bool) -> dict[FileKey, ExpireFileEntry] | None:
    """Files the snapshot's delta DELETEs and does not ADD back (a level upgrade deletes and
    re-adds the same file): Java's planDeletedInDeltaManifest. None if a manifest is gone."""
    import pyarrow as pa
    import pyarrow.compute as pc

    metas = reader.manifest_list(snap.delta_manifest_list, missing_ok)
    if metas is None:
        return None
    if all(m.num_deleted_files == 0 for m in metas):
        return {}  # an append-only delta deletes nothing
    if sum(m.num_added_files + m.num_deleted_files for m in metas) <= OBJECTS_UP_TO:
        entries: list[ExpireFileEntry] = []
        for m in metas:
            part = reader.manifest(m.file_name, missing_ok, cache=False)
            if part is None:
                return None
            entries += part
        return _replay(entries)
    tables = []
    for m in metas:
        t = reader.manifest_table(m.file_name, LIGHT, missing_ok)
        if t is None:
            return None
        tables.append(t)
    table = pa.concat_tables(tables)
    if pc.count_distinct(table.column("_FILE_NAME")).as_py() == table.num_rows:  # no file twice: no re-add
        return {e.key: e for e in expire_entries(table.filter(pc.equal(table.column("_KIND"), int(FileKind.DELETE))))}
    return _replay(expire_entries(table))


def unused_entries(reader: GuardedReader, meta: ManifestFileMeta, used: set[str]) -> list[ExpireFileEntry] | None:
    """The manifest's entries whose file name ``used`` does not hold, in order; None if the
    manifest is gone. Large manifests are decoded columnar, only those rows become objects."""
    import numpy as np

    if meta.num_added_files + meta.num_deleted_files <= OBJECTS_UP_TO:
        entries = reader.manifest(meta.file_name, missing_ok=True, cache=False)
        return None if entries is None else [e for e in entries if e.file_name not in used]
    table = reader.manifest_table(meta.file_name, LIGHT, missing_ok=True)
    if table is None:
        return None
    free = np.fromiter((n not in used for n in table.column("_FILE_NAME").to_pylist()), bool, table.num_rows)
    return expire_entries(table.filter(free))


def _replay(entries: list[ExpireFileEntry]) -> dict[FileKey, ExpireFileEntry]:
    """A delta's entries in order: an ADD takes back an earlier DELETE of the same file."""
    pending: dict[FileKey, ExpireFileEntry] = {}
    for e in entries:
        if e.kind == FileKind.ADD:
            pending.pop(e.key, None)
        else:
            pending[e.key] = e
    return pending


class TagSkipper:
    """Java's createDataFileSkipperForTags: a file deleted by snapshot N stays while the last
    tag before N still lists it (read once per tag); so do the files of the tags past the
    ``latest`` snapshot (``beyond``)."""

    def __init__(self, reader: GuardedReader, tags: Sequence[Snapshot], latest: int) -> None:
        import pyarrow as pa

        from .file_deletion import beyond_latest

        self.reader = reader
        self.tags = tags
        self._live: dict[int, pa.Table] = {}
        beyond = beyond_latest(tags, latest)
        self.beyond = pa.concat_tables([reader.live_table(t) for t in beyond]) if beyond else empty_keys()

    def segment(self, sid: int) -> int:
        """The index of the last tag before ``sid`` (-1: none), its live files read now."""
        from .file_deletion import previous_index

        i = previous_index(self.tags, sid)
        if i >= 0 and self.tags[i].id not in self._live:
            self._live[self.tags[i].id] = self.reader.live_table(self.tags[i])
        return i

    def live(self, i: int) -> pa.Table:
        return self._live[self.tags[i].id] if i >= 0 else empty_keys()

    def keys_before(self, sid: int) -> set[FileKey]:
        """The FileKeys the deletions of snapshot ``sid`` must keep, as a set (small tables)."""
        i = self.segment(sid)
        out = set(_key_tuples(self.live(i)))
        return out | set(_key_tuples(self.beyond)) if self.beyond.num_rows else out


def _key_tuples(t: pa.Table) -> Any:
    return zip(*(t.column(c).to_pylist() for c in KEY), strict=True)


@dataclass
class PendingDeletes:
    """The data files the deltas of a range delete, in order, with the tag segment of each:
    membership in the tags' and the guard's live sets is then asked once per segment."""

    owners: list[int] = field(default_factory=list)
    segments: list[int] = field(default_factory=list)
    entries: list[ExpireFileEntry] = field(default_factory=list)

    def add(self, owner: int, segment: int, pending: dict[FileKey, ExpireFileEntry]) -> None:
        self.owners += [owner] * len(pending)
        self.segments += [segment] * len(pending)
        self.entries += pending.values()

    def keys(self) -> pa.Table:
        return keys_table([e.key for e in self.entries])

    def skipped(self, keys: pa.Table, tags: TagSkipper) -> np.ndarray:
        """Per entry: the last tag before its snapshot, or a tag past the latest, lists it."""
        import numpy as np

        out = rows_in(keys, tags.beyond)
        seg = np.asarray(self.segments, dtype=np.int64)
        for i in sorted(set(self.segments) - {-1}):
            sel = np.flatnonzero(seg == i)
            out[sel] |= rows_in(keys.take(sel), tags.live(i))
        return out
