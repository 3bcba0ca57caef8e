"""What Iceberg-compatible metadata (``metadata.iceberg.storage``) adds to a commit.

Run by hand (not part of pytest)::

    .venv/bin/python bench/bench_iceberg.py --warehouse /tmp/icebench --commits 200

In one process, two identical append tables (``plain``: no Iceberg metadata; ``ice``:
``metadata.iceberg.storage=table-location``) get the same writes, one commit each, a few
rows into ``--partitions-per-commit`` of ``--partitions`` partitions; then a full compaction;
then a table of ``--files`` files gets Iceberg metadata switched on, so its next commit builds
the metadata afresh. Timed with ``time.perf_counter``:

* ``commit``: ``FileStoreCommit.commit`` without the callback (manifests, snapshot, publish);
* ``iceberg``: ``IcebergCommitCallback.call`` (what the metadata adds);
* ``write``: the whole ``Table.write`` (Parquet files included), plain vs ice.

The ratio that matters is ``iceberg / commit``: the cost of the metadata relative to the
commit it follows. Manifest compaction (10 small manifests of 8 MB in total) and Iceberg
snapshot expiry keep it bounded as commits accumulate (the last decile is reported apart).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from typing import Any

import pyarrow as pa

from paimon_cli.core.api import Warehouse
from paimon_cli.core.iceberg.callback import IcebergCommitCallback
from paimon_cli.core.operation.commit import FileStoreCommit

_timings: dict[str, list[float]] = {"commit_total": [], "iceberg": []}


def _instrument() -> None:
    commit = FileStoreCommit.commit
    call = IcebergCommitCallback.call

    def timed_commit(self: Any, *a: Any, **k: Any) -> Any:
        start = time.perf_counter()
        try:
            return commit(self, *a, **k)
        finally:
            _timings["commit_total"].append(time.perf_counter() - start)

    def timed_call(self: Any, *a: Any, **k: Any) -> Any:
        start = time.perf_counter()
        try:
            return call(self, *a, **k)
        finally:
            _timings["iceberg"].append(time.perf_counter() - start)

    FileStoreCommit.commit = timed_commit  # type: ignore[method-assign]
    IcebergCommitCallback.call = timed_call  # type: ignore[method-assign]


def _batch(i: int, partitions: int, per_commit: int, rows: int) -> pa.Table:
    parts = [f"p{(i * per_commit + j) % partitions:04d}" for j in range(per_commit)]
    n = rows * per_commit
    return pa.table({
        "id": pa.array(range(i * n, (i + 1) * n), pa.int64()),
        "dt": [p for p in parts for _ in range(rows)],
        "v": [f"value-{k}" for k in range(n)],
        "d": [k * 0.5 for k in range(n)],
    })


def _reset() -> None:
    for v in _timings.values():
        v.clear()


def _ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.1f}" if xs else "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True, help="scratch directory (wiped)")
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--partitions", type=int, default=50)
    ap.add_argument("--partitions-per-commit", type=int, default=2)
    ap.add_argument("--rows", type=int, default=100, help="rows per partition per commit")
    ap.add_argument("--files", type=int, default=2000, help="files of the table switched on later")
    args = ap.parse_args(argv)
    shutil.rmtree(args.warehouse, ignore_errors=True)
    wh = Warehouse(args.warehouse)
    _instrument()
    schema = "id BIGINT, dt STRING, v STRING, d DOUBLE"
    opts = {"bucket": "-1", "snapshot.num-retained.min": "10", "snapshot.num-retained.max": "20"}
    plain = wh.create_table("bench.plain", schema, partition_by="dt", options=opts)
    ice = wh.create_table("bench.ice", schema, partition_by="dt",
                          options={**opts, "metadata.iceberg.storage": "table-location"})

    results: dict[str, dict[str, list[float]]] = {}
    for label, t in (("plain", plain), ("ice", ice)):
        _reset()
        writes = []
        for i in range(args.commits):
            start = time.perf_counter()
            t.write(_batch(i, args.partitions, args.partitions_per_commit, args.rows))
            writes.append(time.perf_counter() - start)
        results[label] = {"write": writes, "commit_total": list(_timings["commit_total"]),
                          "iceberg": list(_timings["iceberg"])}

    ice_r = results["ice"]
    commit_only = [c - g for c, g in zip(ice_r["commit_total"], ice_r["iceberg"], strict=True)]
    tail = max(1, args.commits // 10)
    print(f"# {args.commits} append commits, {args.partitions_per_commit} of {args.partitions} partitions each, "
          f"{args.rows} rows per partition")
    print("| measure | median ms | last 10% median ms |")
    print("|---|---:|---:|")
    print(f"| plain commit | {_ms(results['plain']['commit_total'])} | {_ms(results['plain']['commit_total'][-tail:])} |")
    print(f"| ice commit without the callback | {_ms(commit_only)} | {_ms(commit_only[-tail:])} |")
    print(f"| Iceberg callback | {_ms(ice_r['iceberg'])} | {_ms(ice_r['iceberg'][-tail:])} |")
    print(f"| plain write (whole) | {_ms(results['plain']['write'])} | {_ms(results['plain']['write'][-tail:])} |")
    print(f"| ice write (whole) | {_ms(ice_r['write'])} | {_ms(ice_r['write'][-tail:])} |")
    ratio = statistics.median(ice_r["iceberg"]) / statistics.median(commit_only)
    ratio_tail = statistics.median(ice_r["iceberg"][-tail:]) / statistics.median(commit_only[-tail:])
    wratio = statistics.median(ice_r["write"]) / statistics.median(results["plain"]["write"])
    print(f"\niceberg / commit: {ratio:.2f} (last 10%: {ratio_tail:.2f}); ice write / plain write: {wratio:.2f}")

    _reset()
    start = time.perf_counter()
    ice.compact(full=True)
    total = time.perf_counter() - start
    print(f"\nfull compaction of ice: whole {total * 1000:.0f} ms, commit {_ms(_timings['commit_total'])} ms "
          f"(callback included), callback {_ms(_timings['iceberg'])} ms")

    big = wh.create_table("bench.big", schema, partition_by="dt", options={"bucket": "-1", "write-only": "true"})
    per = max(1, args.files // 100)
    for i in range(100):
        big.write(_batch(i, args.partitions, per, 2))
    big.alter(set_options={"metadata.iceberg.storage": "table-location"})
    _reset()
    big.write(_batch(10_000, args.partitions, 1, 2))
    live = len(big.inspect("files").rows)
    fresh, commit = _timings["iceberg"][0], _timings["commit_total"][0] - _timings["iceberg"][0]
    print(f"\nfresh build over {live} live files: callback {fresh * 1000:.0f} ms, commit without it "
          f"{commit * 1000:.0f} ms, ratio {fresh / commit:.1f}")
    _reset()
    big.write(_batch(10_001, args.partitions, 1, 2))
    inc, commit = _timings["iceberg"][0], _timings["commit_total"][0] - _timings["iceberg"][0]
    print(f"next (incremental) commit on it: callback {inc * 1000:.0f} ms, commit without it {commit * 1000:.0f} ms, "
          f"ratio {inc / commit:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
