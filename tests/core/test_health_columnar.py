"""``health`` on the columnar path finds what the object path found.

The oracle is the previous per-entry code of the file rules (small files, sorted runs, size
amplification, delete ratio), run over the live ``ManifestEntry`` objects of the object path
(``FileStoreScan.plan``); the rules now aggregate Arrow columns. Random histories of writes,
deletes and compactions over several partitions and buckets, with thresholds low enough that
every rule fires on some of them.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_cli.core.api import Warehouse
from paimon_cli.core.maintain import health
from paimon_cli.core.manifest.manifest import ManifestEntry
from paimon_cli.core.operation.scan import FileStoreScan

COLUMNS = "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING"


def _old_runs(files: list[ManifestEntry]) -> list[int]:
    l0 = sorted((e.file for e in files if e.file.level == 0), key=lambda f: -f.max_sequence_number)
    levels: dict[int, int] = {}
    for e in files:
        if e.file.level > 0:
            levels[e.file.level] = levels.get(e.file.level, 0) + e.file.file_size
    return [f.file_size for f in l0] + [levels[lv] for lv in sorted(levels)]


def old_values(table: Any, entries: list[ManifestEntry]) -> dict[str, Any]:
    """What the object-path rules measured."""
    opts, pk = table.options, bool(table.schema.primary_keys)
    target = opts.target_file_size(pk)
    min_num = opts.get_int("compaction.min.file-num") or health.DEFAULT_MIN_FILE_NUM
    small = Counter((e.partition, e.bucket) for e in entries if e.file.file_size < target and not (pk and e.file.level == 0))
    buckets: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        if pk and e.bucket != -2:
            buckets.setdefault((e.partition, e.bucket), []).append(e)
    runs = [len(_old_runs(fs)) for fs in buckets.values()]
    trigger = opts.num_sorted_run_compaction_trigger
    amps = []
    for fs in buckets.values():
        r = _old_runs(fs)
        if len(r) < max(2, trigger) or not any(e.file.level > 0 for e in fs) or r[-1] <= 0:
            continue
        amps.append(sum(r[:-1]) * 100 / r[-1])
    return {"small": sorted(n for n in small.values() if n >= min_num), "runs": sorted(runs), "amps": sorted(amps),
            "rows": sum(e.file.row_count for e in entries),
            "deleted": sum(e.file.delete_row_count or 0 for e in entries)}


def new_values(table: Any) -> dict[str, Any]:
    ctx = health._Context.read(table, int(time.time() * 1000), "wh")
    keyed = health._key_buckets(ctx)
    trigger = table.options.num_sorted_run_compaction_trigger
    amps = [(b["total"] - b["top"]) * 100 / b["top"] for b in keyed
            if b["runs"] >= max(2, trigger) and b["levels"] and b["top"] > 0]
    live = ctx.live
    pk = bool(table.schema.primary_keys)
    target = table.options.target_file_size(pk)
    min_num = table.options.get_int("compaction.min.file-num") or health.DEFAULT_MIN_FILE_NUM
    found = health.small_files(ctx)
    return {"small": found, "runs": sorted(b["runs"] for b in keyed), "amps": sorted(amps),
            "rows": sum(live.column("_ROW_COUNT").to_pylist()),
            "deleted": sum(x or 0 for x in live.column("_DELETE_ROW_COUNT").to_pylist()),
            "target": target, "min_num": min_num}


OPS = st.lists(st.one_of(
    st.tuples(st.just("write"), st.lists(st.tuples(st.integers(0, 30), st.sampled_from(["a", "b"])), min_size=1,
                                         max_size=6)),
    st.tuples(st.just("delete"), st.integers(0, 30)),
    st.tuples(st.just("compact"), st.booleans()),
), min_size=1, max_size=8)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, pk=st.booleans())
def test_rules_match_the_object_path(ops: list[tuple[str, Any]], pk: bool) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="health-col-"))
    try:
        w = Warehouse(str(tmp))
        opts = {"bucket": "2", "num-sorted-run.compaction-trigger": "2", "compaction.min.file-num": "2",
                "target-file-size": "4 kb"}
        if not pk:
            opts["bucket-key"] = "id"
        t = w.create_table("db.t", COLUMNS, partition_by="dt", primary_key="id,dt" if pk else None, options=opts)
        # a compacted level first, so later writes make size amplification measurable
        for op, arg in [("write", [(1, "a"), (2, "b")]), ("compact", True), *ops]:
            if op == "write":
                t.write(pa.table({"id": pa.array([i for i, _ in arg], pa.int64()), "dt": [d for _, d in arg],
                                  "v": ["x" * (i * 40) for i, _ in arg]}), write_only=True)
            elif op == "delete" and pk:
                t.write(pa.table({"id": pa.array([arg], pa.int64()), "dt": ["a"], "v": ["gone"]}), delete=True,
                        write_only=True)
            elif op == "compact":
                t.compact(full=arg)
        table = w.catalog.get_table("db.t")
        entries = FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())
        old = old_values(table, entries)
        new = new_values(table)
        assert new["runs"] == old["runs"]
        assert new["amps"] == old["amps"]
        assert (new["rows"], new["deleted"]) == (old["rows"], old["deleted"])
        if old["small"]:
            (f,) = new["small"]
            assert f.value == sum(old["small"]) and f"up to {max(old['small'])})" in f.message
            assert f"in {len(old['small'])} bucket(s)" in f.message and f"of {len(entries)} live files" in f.message
        else:
            assert new["small"] == []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
