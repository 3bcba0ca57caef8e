"""Expire, tag deletion and rollback on the columnar path decide exactly what the object path did.

The "old" side is the object path these operations used before (ExpireFileEntry lists merged by
``merge_entries``, deltas replayed entry by entry), patched back in; both plan the same table
and every field of the plans must agree (files with kinds, sizes and owners in order, notes,
holds, EARLIEST hint, dry-run listings).
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.manifest.columnar import ENTRY_SCHEMA
from paimon_cli.core.manifest.expire_file_entry import ExpireFileEntry, merge_entries
from paimon_cli.core.manifest.manifest import FileKind, FileSource
from paimon_cli.core.operation import changelog_expire, live_files, snapshot_deletion
from paimon_cli.core.operation.branch_ops import create_branch
from paimon_cli.core.operation.expire import plan_expire
from paimon_cli.core.operation.expire_plan import ExpirePlan, ExpirePolicy
from paimon_cli.core.operation.file_deletion import GuardedReader
from paimon_cli.core.operation.live_files import KEY, LIGHT, live_rows, rows_in
from paimon_cli.core.operation.rollback import plan_rollback
from paimon_cli.core.operation.tag_deletion import plan_tag_deletion
from paimon_cli.core.refs.snapshot import Snapshot
from paimon_cli.core.table.file_store_table import FileStoreTable
from tests.test_expire_property import _compact, _reload, _table, _write

# -- the object path, as it was -------------------------------------------------------------------


def _as_table(entries: list[ExpireFileEntry], columns: Any) -> pa.Table:
    cols = {"_KIND": [e.kind for e in entries], "_PARTITION": [e.partition for e in entries],
            "_BUCKET": [e.bucket for e in entries], "_LEVEL": [e.level for e in entries],
            "_FILE_NAME": [e.file_name for e in entries], "_FILE_SIZE": [e.file_size for e in entries],
            "_EXTRA_FILES": [list(e.extra_files) for e in entries],
            "_EMBEDDED_FILE_INDEX": [e.embedded_index for e in entries],
            "_FILE_SOURCE": [e.file_source for e in entries], "_EXTERNAL_PATH": [e.external_path for e in entries]}
    schema = pa.schema([ENTRY_SCHEMA.field(c) for c in columns])
    return pa.table([pa.array(cols[c], schema.field(c).type) for c in columns], schema=schema)


def _old_live_table(self: GuardedReader, snap: Snapshot, columns: Any = KEY, ordered: bool = False) -> pa.Table:
    entries = self.entries_of_lists([snap.base_manifest_list, snap.delta_manifest_list])
    assert entries is not None
    return _as_table(merge_entries(entries), columns)


def _old_deleted_in_delta(reader: GuardedReader, snap: Snapshot, missing_ok: bool) -> Any:
    metas = reader.manifest_list(snap.delta_manifest_list, missing_ok)
    if metas is not None and all(m.num_deleted_files == 0 for m in metas):
        return {}
    entries = reader.entries_of_lists([snap.delta_manifest_list], missing_ok)
    if entries is None:
        return None
    pending: dict[Any, ExpireFileEntry] = {}
    for e in entries:
        if e.kind == FileKind.ADD:
            pending.pop(e.key, None)
        else:
            pending[e.key] = e
    return pending


def _old_plan_data_files(planner: Any, expiring: list[Snapshot], end_snap: Snapshot, refs: Any, rp: Any, sm: Any,
                         latest: int, deltas: Any = None) -> None:
    """The per-snapshot loop over Python sets, as it was (``deltas``, the Spark engine's hook,
    is not used: the old path read each delta here)."""
    reader = planner.reader
    end_live = reader.live_keys(end_snap)
    if not end_live and (end_snap.total_record_count or 0) > 0:
        raise reader.refuse(sm.snapshot_path(end_snap.id), "empty used-file set")
    tags = live_files.TagSkipper(reader, refs.tags, latest)
    for s in [*expiring[1:], end_snap]:
        skip = tags.keys_before(s.id)
        pending = _old_deleted_in_delta(reader, s, missing_ok=s.id != end_snap.id)
        if pending is None:
            planner.notes.append(
                f"snapshot {s.id}: a delta manifest is already gone (an interrupted run?); "
                "its deleted data files, if any are left, are orphans now"
            )
            continue
        for k, e in pending.items():
            if k in skip:
                continue
            if rp.changelog_decoupled and not rp.produce_changelog and e.file_source in (None, FileSource.APPEND):
                continue
            if k in end_live:
                raise reader.refuse(sm.snapshot_path(s.id), f"deletes data file {e.file_name} that retained "
                                    f"snapshot {end_snap.id} still lists (inconsistent history)")
            if k not in refs.branches.data:
                planner.data_file(e, s.id)


def _old_path(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(GuardedReader, "live_table", _old_live_table)
    mp.setattr(snapshot_deletion, "_plan_data_files", _old_plan_data_files)
    mp.setattr(snapshot_deletion, "deleted_in_delta", _old_deleted_in_delta)
    mp.setattr(changelog_expire, "deleted_in_delta", _old_deleted_in_delta)


def _plan_view(p: ExpirePlan) -> dict[str, Any]:
    return {"expired": p.expired_ids, "end": p.end_id, "files": [f.to_dict() for f in p.files], "notes": p.notes,
            "earliest": p.earliest_hint, "copies": p.changelog_copies, "holds": p.holds,
            "per_snapshot": p.per_snapshot, "dirs": p.empty_dir_candidates, "fingerprint": p.fingerprint}


def _both(t: FileStoreTable, plan: Any) -> None:
    """Plan with the object path, the columnar path, and the columnar path for every delta too."""
    with pytest.MonkeyPatch.context() as mp:
        _old_path(mp)
        old = plan(_reload(t, t.branch))
    new = plan(_reload(t, t.branch))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(live_files, "OBJECTS_UP_TO", 0)
        all_columnar = plan(_reload(t, t.branch))
    assert new == old
    assert all_columnar == old


# -- varied tables --------------------------------------------------------------------------------


def _history(wh: str, pk: bool, seed: int, n: int = 14, extra: dict[str, str] | None = None) -> FileStoreTable:
    """Appends, partition overwrites (DELETEs) and full compactions (level upgrades, re-adds)."""
    rnd = random.Random(seed)
    t = _table(wh, pk, extra)
    counter = [0]
    for i in range(n):
        op = rnd.random()
        if op < 0.2 and i:
            _compact(t)
        else:
            _write(t, wh, rnd.randrange(0, 12), rnd.choice("ab"), op > 0.8, counter)
    return _reload(t)


VARIANTS = {
    "append": (False, {}),
    "pk": (True, {}),
    "deletion-vectors": (True, {"deletion-vectors.enabled": "true"}),
    "changelog-decoupled": (True, {"changelog.num-retained.max": "40", "changelog.num-retained.min": "12",
                                   "changelog-producer": "input"}),
    "changelog-decoupled-no-producer": (False, {"changelog.num-retained.max": "40"}),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("seed", [1, 2])
def test_expire_plans_match_the_object_path(tmp_path: Path, variant: str, seed: int) -> None:
    pk, extra = VARIANTS[variant]
    t = _history(str(tmp_path), pk, seed, extra=extra)
    sm = t.snapshot_manager
    ids = sm.snapshot_ids()
    t.tag_manager.create_tag("early", sm.snapshot(ids[2]))
    t.tag_manager.create_tag("mid", sm.snapshot(ids[len(ids) // 2]))
    t.consumer_manager.reset_consumer("c1", ids[-3])
    for policy in (ExpirePolicy(retain_min=2, time_retained_millis=0),
                   ExpirePolicy(retain_min=1, retain_max=3, time_retained_millis=0, max_deletes=5),
                   ExpirePolicy(retain_min=1, time_retained_millis=0, changelog=True)):
        _both(t, lambda tb, p=policy: _plan_view(plan_expire(tb, p)))
    t.consumer_manager.delete_consumer("c1")
    _both(t, lambda tb: _plan_view(plan_expire(tb, ExpirePolicy(retain_min=1, time_retained_millis=0))))


def test_branches_and_external_paths(tmp_path: Path) -> None:
    ext = f"file://{tmp_path}/ext"
    t = _history(str(tmp_path / "wh"), True, 7, extra={"data-file.external-paths": ext,
                                                      "data-file.external-paths.strategy": "round-robin"})
    sm = t.snapshot_manager
    t.tag_manager.create_tag("base", sm.snapshot(sm.snapshot_ids()[4]))
    create_branch(t, "audit", tag="base")
    t.tag_manager.create_tag("late", sm.snapshot(sm.snapshot_ids()[-4]))
    _both(t, lambda tb: _plan_view(plan_expire(tb, ExpirePolicy(retain_min=1, time_retained_millis=0))))
    _both(t, lambda tb: plan_tag_deletion(tb, ["late"]).rows().rows)
    _both(t, lambda tb: [vars(f) for f in plan_rollback(tb, snapshot_id=sm.snapshot_ids()[3]).files])


def test_tag_deletion_of_an_expired_tag(tmp_path: Path) -> None:
    t = _history(str(tmp_path), True, 3, n=16)
    sm = t.snapshot_manager
    ids = sm.snapshot_ids()
    for name, i in (("a", 2), ("b", 6), ("c", 9)):
        t.tag_manager.create_tag(name, sm.snapshot(ids[i]))
    from paimon_cli.core.operation.expire import expire

    expire(t, ExpirePolicy(retain_min=3, time_retained_millis=0))
    _both(t, lambda tb: plan_tag_deletion(tb, ["b"]).rows().rows)
    _both(t, lambda tb: plan_tag_deletion(tb, ["a", "c"]).rows().rows)


# -- the Arrow pieces -----------------------------------------------------------------------------


def _e(kind: int, name: str, part: bytes = b"p", bucket: int = 0, level: int = 0,
       extra: tuple[str, ...] = (), ext: str | None = None) -> ExpireFileEntry:
    return ExpireFileEntry(kind, part, bucket, level, name, 10, extra, None, 0, ext)


A, D = FileKind.ADD, FileKind.DELETE
CASES = {
    "plain": [[_e(A, "f1"), _e(A, "f2")]],
    "delete-across-manifests": [[_e(A, "f1"), _e(A, "f2")], [_e(D, "f1")]],
    "level-upgrade": [[_e(A, "f1", level=0)], [_e(D, "f1", level=0), _e(A, "f1", level=5)]],
    "re-add-after-delete": [[_e(A, "f1")], [_e(D, "f1")], [_e(A, "f1")]],
    "delete-before-add": [[_e(D, "f1"), _e(A, "f1")]],
    "add-twice": [[_e(A, "f1"), _e(A, "f1")], [_e(A, "f2")]],
    "other-extra-files": [[_e(A, "f1", extra=("f1.index",))], [_e(D, "f1")]],
    "other-external-path": [[_e(A, "f1", ext="file:/x/f1")], [_e(D, "f1")], [_e(D, "f1", ext="file:/x/f1")]],
    "same-name-two-buckets": [[_e(A, "f1", bucket=0), _e(A, "f1", bucket=1)], [_e(D, "f1", bucket=1)]],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_live_rows_equal_merge_entries(case: str) -> None:
    manifests = CASES[case]
    want = {e.key for e in merge_entries([e for m in manifests for e in m])}
    read = ["_KIND", "_PARTITION", "_BUCKET", "_LEVEL", "_FILE_NAME", "_EXTRA_FILES", "_EMBEDDED_FILE_INDEX",
            "_EXTERNAL_PATH"]
    live = live_rows([_as_table(m, read) for m in manifests], KEY)
    if live is None:  # a name twice outside a DELETE: the caller merges exactly
        assert case == "add-twice"
        return
    got = list(zip(*(live.column(c).to_pylist() for c in KEY), strict=True))
    assert sorted(got) == sorted(want) and len(got) == len(want)


def test_rows_in_is_exact_on_the_whole_key() -> None:
    live = _as_table([_e(A, "f1", b"p", 0), _e(A, "f2", b"q", 1)], KEY)
    keys = _as_table([_e(A, "f1", b"p", 0), _e(A, "f1", b"q", 0), _e(A, "f2", b"q", 0), _e(A, "f2", b"q", 1),
                      _e(A, "f3")], KEY)
    assert rows_in(keys, live).tolist() == [True, False, False, True, False]
    assert rows_in(keys.slice(0, 0), live).tolist() == []


def test_live_table_orders_like_merge_entries(tmp_path: Path) -> None:
    t = _history(str(tmp_path), True, 5)
    snap = t.snapshot_manager.latest_snapshot()
    assert snap is not None
    r = GuardedReader(t.file_io, t.path, "test")
    new = r.live_table(snap, LIGHT, ordered=True)
    assert new.to_pylist() == _old_live_table(r, snap, LIGHT).to_pylist()
    assert os.path.isdir(t.path)
