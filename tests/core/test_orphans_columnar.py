"""remove-orphan-files on the columnar path gives what the object path gave.

The reference below is the previous planner, kept as a test oracle: every name the object
path (fastavro ``ExpireFileEntry`` reads through the guarded reader) finds in the lists,
manifests and index manifests of every snapshot, tag and changelog of every branch, and the
candidates filtered by that full set. The plan now matches only the candidates against the
manifests' name columns; both must pick the same files, on varied histories and layouts.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from paimon_cli.core.io.fileio import basename
from paimon_cli.core.operation.file_deletion import GuardedReader
from paimon_cli.core.operation.orphans import _UNCHECKED, plan_remove_orphans, remove_orphans, scan_candidates
from paimon_cli.core.operation.used_files import CandidateNames, DirLister, branch_refs, list_branches
from tests.core.test_orphans_support import age_all, files_under, make_table, plant, reload, write_rows


def object_path_names(table: Any) -> set[str]:
    """Every used name, read the old way (objects, one set)."""
    reader = GuardedReader(table.file_io, table.path, "test")
    lister = DirLister(table.file_io)
    names: set[str] = set()
    for br in list_branches(reader, lister):
        for _, snap in branch_refs(reader, br, lister):
            names |= reader.skipping_names(snap, changelog=True)  # lists, manifests, index files, statistics
            lists = [snap.base_manifest_list, snap.delta_manifest_list, snap.changelog_manifest_list]
            metas = [m for ml in lists if ml for m in reader.manifest_list(ml) or []]
            entries = [e for m in metas for e in reader.manifest(m.file_name) or []]
            names.update(e.file_name for e in entries)
            names.update(x for e in entries for x in e.extra_files)
    return names


def reference_orphans(table: Any, cutoff: int) -> list[str]:
    used = object_path_names(table)
    return sorted(f.path for f in scan_candidates(table, cutoff)
                  if f.kind in _UNCHECKED or basename(f.path) not in used)


def _same_as_reference(t: Any) -> list[str]:
    now = int(time.time() * 1000) + 2000
    plan = plan_remove_orphans(t, "P0D", force=True, now_millis=now)
    got = [f.path for f in plan.files]
    assert got == reference_orphans(t, plan.cutoff_millis)
    # only metadata names are held in full; data names were matched against the candidates
    assert not any(n.startswith("data-") for n in plan.used.names)
    return got


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.lists(st.tuples(st.integers(0, 6), st.sampled_from("abc")), min_size=1, max_size=4)),
        st.tuples(st.just("compact"), st.just(0)),
        st.tuples(st.just("tag"), st.integers(0, 20)),
        st.tuples(st.just("orphan"), st.sampled_from("abc")),
        st.tuples(st.just("copy"), st.sampled_from("abc")),  # a used file's name again in another bucket
    ),
    min_size=2,
    max_size=8,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, pk=st.booleans())
@example(ops=[("write", [(0, "b")]), ("copy", "b"), ("compact", 0)], pk=True)  # the used file is in bucket-1
def test_random_histories_match_the_object_path(ops: list[tuple[str, Any]], pk: bool) -> None:
    from paimon_cli.core.compact.job import compact_table

    tmp = Path(tempfile.mkdtemp(prefix="orph-col-"))
    try:
        opts = {"file-index.bloom-filter.columns": "v", "file-index.in-manifest-threshold": "1 b"}
        t = make_table(tmp / "wh", pk=pk, **opts)
        n = 0
        for op, arg in ops:
            t = reload(t)
            ids = t.snapshot_manager.snapshot_ids()
            if op == "write":
                n += 1
                write_rows(t, [(i, d, f"v{n}") for i, d in arg], tmp)
            elif op == "compact" and ids:
                compact_table(t, full=True)
            elif op == "tag" and ids:
                sid = ids[arg % len(ids)]
                if not t.tag_manager.tag_exists(f"t{sid}"):
                    t.tag_manager.create_tag(f"t{sid}", t.snapshot_manager.snapshot(sid))
            elif op == "orphan":
                n += 1
                plant(Path(t.path) / f"dt={arg}" / "bucket-0" / f"data-orphan{n}-0.parquet")
            elif op == "copy":
                used = sorted(f for f in files_under(t.path) if f.startswith("dt=") and f.endswith(".parquet"))
                if used:  # never over the used file itself: that would corrupt the table, not copy a name
                    other = "bucket-0" if "/bucket-1/" in used[0] else "bucket-1"
                    plant(Path(t.path) / f"dt={arg}" / other / basename(used[0]))
        t = reload(t)
        if not t.snapshot_manager.snapshot_ids():
            return
        _same_as_reference(t)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_extra_files_index_files_and_a_branch(tmp_path: Path) -> None:
    from paimon_cli.core.operation.branch_ops import create_branch

    t = make_table(tmp_path / "wh", "dyn", bucket="-1", **{"file-index.bloom-filter.columns": "v",
                                                           "file-index.in-manifest-threshold": "1 b"})
    write_rows(t, [(1, "a", "x"), (2, "b", "y")], tmp_path)
    write_rows(t, [(1, "a", "x2")], tmp_path)
    t.tag_manager.create_tag("t1", t.snapshot_manager.latest_snapshot())
    create_branch(reload(t), "b1", tag="t1")
    write_rows(reload(t, "b1"), [(3, "c", "z")], tmp_path)
    plant(Path(t.path) / "dt=a" / "bucket-0" / "data-orphan-0.parquet")
    plant(Path(t.path) / "index" / "index-orphan-0")
    plant(Path(t.path) / "manifest" / "manifest-orphan-0")
    assert any(f.endswith(".index") for f in files_under(t.path))  # extra files
    assert any(f.startswith("index/") for f in files_under(t.path))  # HASH index files
    age_all(t.path)
    got = _same_as_reference(reload(t))
    assert sorted(basename(p) for p in got) == ["data-orphan-0.parquet", "index-orphan-0", "manifest-orphan-0"]


def test_real_run_deletes_what_the_plan_listed(tmp_path: Path) -> None:
    t = make_table(tmp_path / "wh")
    write_rows(t, [(1, "a", "x")], tmp_path)
    planted = {plant(Path(t.path) / "dt=a" / "bucket-0" / f"data-orphan{i}-0.parquet") for i in range(3)}
    age_all(t.path)
    plan = plan_remove_orphans(t)
    assert {f.path for f in plan.files} == planted
    result = remove_orphans(t, plan)
    assert {f.path for f in result.deleted} == planted and not result.kept


# ------------------------------------------------------------------ CandidateNames


def test_candidate_names_batches_and_duplicates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CandidateNames, "BATCH", 3)
    c = CandidateNames(pa.array(["a", "b", "a", "c", "d"]))
    c.mark(pa.array(["x", "a"]))  # pending
    c.mark(pa.chunked_array([pa.array(["y"], pa.large_string()), pa.array(["d", "z"], pa.large_string())]))  # flushes
    c.mark(pa.array([], pa.string()))
    assert c.used_mask().tolist() == [True, False, True, False, True]
    assert c.is_used(["a", "b", "nope", "d"]) == [True, False, False, True]
    assert c.used_count() == 2 and len(c) == 5


def test_candidate_names_empty() -> None:
    c = CandidateNames(pa.array([], pa.large_string()))
    c.mark(pa.array(["a"]))
    assert c.used_mask().tolist() == [] and c.is_used(["a"]) == [False]
