"""Property: over random histories (writes, overwrites, tags, branches, rollbacks, planted
orphans) rollback leaves no orphans and remove-orphan-files deletes exactly the planted files,
while every remaining snapshot, tag and branch reads the same rows before and after."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_cli.core.compact.write_job import write_table
from paimon_cli.core.errors import UnsafeRefused
from paimon_cli.core.operation.orphans import plan_remove_orphans, remove_orphans
from paimon_cli.core.operation.rollback import rollback
from tests.core.test_orphans_support import files_under, make_table, read_rows, reload, write_rows

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.lists(st.tuples(st.integers(0, 6), st.sampled_from("abc")), min_size=1, max_size=4)),
        st.tuples(st.just("overwrite"), st.sampled_from("abc")),
        st.tuples(st.just("tag"), st.integers(0, 20)),
        st.tuples(st.just("branch"), st.integers(0, 20)),
        st.tuples(st.just("rollback"), st.integers(0, 20)),
        st.tuples(st.just("orphan"), st.sampled_from("abc")),
    ),
    min_size=2,
    max_size=9,
)


def _cleanup_now(t: Any) -> list[str]:
    plan = plan_remove_orphans(t, "P0D", force=True, now_millis=int(time.time() * 1000) + 2000)
    return sorted(f.path for f in plan.files)


def _view(t: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for sid in t.snapshot_manager.snapshot_ids():
        out[f"s{sid}"] = read_rows(t, sid)
    for name in t.tag_manager.tag_names():
        out[f"tag {name}"] = read_rows(t, tag=name)
    for b in t.branch_manager.branch_names():
        out[f"branch {b}"] = read_rows(reload(t, b))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_random_histories(ops: list[tuple[str, Any]]) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="orph-prop-"))
    try:
        t = make_table(tmp / "wh", bucket="1")
        planted: set[str] = set()
        n = 0
        for op, arg in ops:
            t = reload(t)
            sm = t.snapshot_manager
            ids = sm.snapshot_ids()
            if op == "write":
                n += 1
                write_rows(t, [(i, d, f"v{n}") for i, d in arg], tmp)
            elif op == "overwrite" and ids:
                n += 1
                p = tmp / f"ow{n}.csv"
                p.write_text(f"id,dt,v\n1,{arg},ow{n}\n")
                write_table(t, [str(p)], overwrite=True, overwrite_partition={"dt": arg})
            elif op == "tag" and ids:
                sid = ids[arg % len(ids)]
                if not t.tag_manager.tag_exists(f"t{sid}"):
                    t.tag_manager.create_tag(f"t{sid}", sm.snapshot(sid))
            elif op == "branch" and ids:
                sid = ids[arg % len(ids)]
                b = Path(t.path) / "branch" / f"branch-b{sid}"
                if not b.exists():
                    shutil.copytree(Path(t.path) / "schema", b / "schema")
                    (b / "snapshot").mkdir()
                    (b / "snapshot" / f"snapshot-{sid}").write_text(sm.snapshot(sid).to_json())
                    (b / "snapshot" / "LATEST").write_text(str(sid))
                    n += 1
                    write_rows(reload(t, f"b{sid}"), [(9, "z", f"branch{n}")], tmp)
            elif op == "rollback" and ids:
                target = ids[arg % len(ids)]
                before = read_rows(t, target)
                rollback(t, snapshot_id=target)
                t = reload(t)
                assert read_rows(t) == before
                assert sorted(_cleanup_now(t)) == sorted(planted)  # the rollback left no orphans
            elif op == "orphan":
                p = Path(t.path) / f"dt={arg}" / "bucket-0" / f"data-orphan{len(planted)}-0.parquet"
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(b"orphan")
                planted.add(str(p))
        t = reload(t)
        if not t.snapshot_manager.snapshot_ids() and planted:
            # files but no snapshot at all: refused, never "everything is an orphan"
            with pytest.raises(UnsafeRefused):
                plan_remove_orphans(t, "P0D", force=True, now_millis=int(time.time() * 1000) + 2000)
            return
        view = _view(t)
        time.sleep(0.01)
        plan = plan_remove_orphans(t, "P0D", force=True, now_millis=int(time.time() * 1000) + 2000)
        assert sorted(f.path for f in plan.files) == sorted(planted)
        before = files_under(t.path)
        remove_orphans(t, plan)
        assert before - files_under(t.path) == {str(Path(p).relative_to(t.path)) for p in planted}
        assert _view(reload(t)) == view
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
