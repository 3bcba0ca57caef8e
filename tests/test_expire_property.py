"""Property: over random histories and settings, `expire` never deletes a file that a retained
snapshot, a tag or a branch references, and every one of them reads the same rows afterwards.

Histories are written with our own writer: appends, partition overwrites (DELETE entries),
full compactions (when the compaction package is present), tags, consumers and a branch.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.write_job import write_table
from paimon_cli.core.data.types import parse_data_type
from paimon_cli.core.io import paths
from paimon_cli.core.manifest.index_manifest import IndexManifestFile
from paimon_cli.core.manifest.manifest import FileKind, ManifestFile, ManifestList
from paimon_cli.core.operation.expire import expire
from paimon_cli.core.operation.expire_plan import ExpirePolicy
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.refs.snapshot import Snapshot
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.table.file_store_table import FileStoreTable, TimeTravel

pytestmark = pytest.mark.slow

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.integers(0, 30), st.sampled_from(["a", "b"])),
        st.tuples(st.just("overwrite"), st.integers(0, 30), st.sampled_from(["a", "b"])),
        st.tuples(st.just("compact"), st.just(0), st.just("")),
        st.tuples(st.just("tag"), st.integers(0, 100), st.just("")),
        st.tuples(st.just("consumer"), st.integers(0, 100), st.just("")),
        st.tuples(st.just("branch"), st.integers(0, 100), st.just("")),
    ),
    min_size=3, max_size=14,
)
SETTINGS = st.tuples(st.integers(1, 4), st.one_of(st.none(), st.integers(0, 4)), st.integers(1, 20))


def _table(wh: str, pk: bool, extra: dict[str, str] | None = None) -> FileStoreTable:
    cat = FileSystemCatalog(wh)
    cat.create_database("db", True)
    schema = Schema.of(
        [("id", parse_data_type("INT NOT NULL"), None), ("dt", parse_data_type("STRING NOT NULL"), None),
         ("v", parse_data_type("BIGINT"), None)],
        partition_keys=["dt"], primary_keys=["id", "dt"] if pk else [],
        options={"bucket": "2" if pk else "-1", "write-only": "true", **(extra or {})},
    )
    return cat.create_table("db.t", schema)


def _reload(t: FileStoreTable, branch: str | None = None) -> FileStoreTable:
    return FileStoreTable.load(t.file_io, t.path, t.identifier, branch)


def _write(t: FileStoreTable, wh: str, start: int, dt: str, overwrite: bool, n: list[int]) -> None:
    n[0] += 1
    f = os.path.join(wh, f"in-{n[0]}.parquet")
    ids = list(range(start, start + 4))
    pq.write_table(pa.table({"id": pa.array(ids, pa.int32()), "dt": [dt] * 4,
                             "v": pa.array([n[0]] * 4, pa.int64())}), f)
    write_table(_reload(t), [f], overwrite=overwrite, overwrite_partition={"dt": dt} if overwrite else None)
    os.remove(f)


def _compact(t: FileStoreTable) -> None:
    try:
        from paimon_cli.core.compact.job import compact_table
    except ImportError:
        return
    compact_table(_reload(t), full=True)


def referenced(t: FileStoreTable, snap: Snapshot) -> set[str]:
    """Every file path a reader of ``snap`` opens (data + extra, manifests, lists, index, stats)."""
    fio = t.file_io
    mdir = paths.manifest_dir(t.path)
    ml, mf = ManifestList(fio, mdir), ManifestFile(fio, mdir, t.schema.logical_partition_type)
    out = {os.path.join(mdir, snap.base_manifest_list), os.path.join(mdir, snap.delta_manifest_list)}
    live: dict[tuple[bytes, int, str], Any] = {}
    for ln in (snap.base_manifest_list, snap.delta_manifest_list):
        for m in ml.read(ln):
            out.add(os.path.join(mdir, m.file_name))
            for e in mf.read(m.file_name):
                k = (e.partition, e.bucket, e.file.file_name)
                if e.kind == FileKind.ADD:
                    live[k] = e
                else:
                    live.pop(k, None)
    from paimon_cli.core.data.binary_row import deserialize

    for e in live.values():
        part = paths.partition_path_for(t.schema, deserialize(e.partition, t.schema.partition_types))
        bdir = os.path.join(t.path, part, paths.bucket_dir(e.bucket))
        out.add(os.path.join(bdir, e.file.file_name))
        out |= {os.path.join(bdir, x) for x in e.file.extra_files}
    if snap.index_manifest:
        out.add(os.path.join(mdir, snap.index_manifest))
        for ie in IndexManifestFile(fio, mdir).read(snap.index_manifest):
            out.add(os.path.join(paths.index_dir(t.path), ie.index_file.file_name))
    if snap.statistics:
        out.add(os.path.join(paths.statistics_dir(t.path), snap.statistics))
    return out


def _rows(t: FileStoreTable, at: TimeTravel | None) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in TableRead(t, at).to_arrow().to_pylist())


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(ops=OPS, setting=SETTINGS, pk=st.booleans(), decoupled=st.booleans())
def test_never_deletes_what_a_retained_snapshot_tag_or_branch_uses(
    ops: list[tuple[str, int, str]], setting: tuple[int, int | None, int], pk: bool, decoupled: bool
) -> None:
    retain_min, extra_max, max_deletes = setting
    # decoupled: expired snapshots move to changelog/ and a changelog expiry follows
    extra = {"changelog.num-retained.min": str(retain_min + 2)} if decoupled else None
    with tempfile.TemporaryDirectory() as wh:
        t = _table(wh, pk, extra)
        n = [0]
        branch: str | None = None
        for op, arg, dt in ops:
            latest = t.snapshot_manager.latest_snapshot_id()
            if op in ("write", "overwrite") or latest is None:
                _write(t, wh, arg, dt or "a", op == "overwrite" and latest is not None, n)
            elif op == "compact":
                _compact(t)
            elif op == "tag":
                sid = 1 + arg % latest
                s = t.snapshot_manager.try_snapshot(sid)
                if s is not None:
                    t.tag_manager.create_tag(f"tag{arg}", s, ignore_if_exists=True)
            elif op == "consumer":
                t.consumer_manager.reset_consumer("c", 1 + arg % latest)
            elif op == "branch" and branch is None and t.tag_manager.tag_names():
                from paimon_cli.core.operation.branch_ops import create_branch

                branch = "br"
                tag = t.tag_manager.tag_names()[0]
                create_branch(_reload(t), branch, tag=tag)
                t.tag_manager.delete_tag(tag)  # the branch alone must keep its files
        t = _reload(t)
        sm = t.snapshot_manager
        before_snaps = {s.id: s for s in sm.snapshots()}
        before_rows = {i: _rows(t, TimeTravel(snapshot_id=i)) for i in before_snaps}
        tags = {tg.name: (tg.snapshot, _rows(t, TimeTravel(tag=tg.name))) for tg in t.tag_manager.tags()}
        br_rows = None
        br_snaps: list[Snapshot] = []
        if branch is not None:
            bt = _reload(t, branch)
            br_rows = _rows(bt, None)
            br_snaps = bt.snapshot_manager.snapshots()
        retain_max = None if extra_max is None else retain_min + extra_max
        res = expire(t, ExpirePolicy(retain_min=retain_min, retain_max=retain_max, time_retained_millis=0,
                                     max_deletes=max_deletes))
        assert res.plan is not None
        assert res.plan.policy.changelog_decoupled == decoupled
        deleted = {f.path for f in res.plan.files}
        if decoupled:
            cres = expire(_reload(t), ExpirePolicy(retain_min=retain_min, retain_max=retain_max,
                                                   time_retained_millis=0, max_deletes=max_deletes, changelog=True))
            assert cres.plan is not None
            deleted |= {f.path for f in cres.plan.files}
        t = _reload(t)
        retained = [before_snaps[i] for i in sm.snapshot_ids()]
        assert [s.id for s in retained] == [i for i in sorted(before_snaps) if i not in set(res.plan.expired_ids)]
        needed: set[str] = set()
        for s in retained:
            needed |= referenced(t, s)
        for snap, _ in tags.values():
            needed |= referenced(t, snap)
        for s in br_snaps:
            needed |= referenced(t, s)
        missing = sorted(p for p in needed if not os.path.exists(p))
        assert not missing, f"expire deleted files still referenced: {missing[:5]}"
        assert not deleted & needed
        for s in retained:
            assert _rows(t, TimeTravel(snapshot_id=s.id)) == before_rows[s.id]
        for name, (_, rows) in tags.items():
            assert _rows(t, TimeTravel(tag=name)) == rows
        if branch is not None:
            assert _rows(_reload(t, branch), None) == br_rows
