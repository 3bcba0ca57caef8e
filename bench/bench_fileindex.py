"""File-index benchmark (issue 6).

1. rewrite-file-index vs Java Paimon 0.9's extra write time.
   Java writes the same N generated rows (id BIGINT, s STRING high-cardinality, c INT with 10
   values) twice into append tables -- once without indexes, once with a bloom filter on ``s``
   and a bitmap (v1, all Java 0.9 writes) on ``c`` -- through FileIndexHelper.benchWrite (rows
   generated inside the JVM: no JSON). Java's index cost = T(with) - T(without). Ours: the
   same un-indexed Java table, ``alter --set`` the same options, then ``rewrite_file_index``
   (which also has to READ the two columns back from the data files, Java does not).
   Java runs alternate plain / indexed ``--reps`` times; medians are compared.
2. A selective equality ``read --where`` on the bloom-indexed column of a table built for it
   (many files whose min/max overlap): files read with indexes vs without.

Run: ``.venv/bin/python bench/bench_fileindex.py [--rows 10000000]``; prints a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OPTIONS = {
    "file-index.bloom-filter.columns": "s",
    "file-index.bloom-filter.s.items": "2000000",
    "file-index.bloom-filter.s.fpp": "0.05",
    "file-index.bitmap.columns": "c",
    "file-index.bitmap.c.version": "1",
}
BASE = {"bucket": "-1", "target-file-size": "64 mb"}


def rewrite_vs_java(rows: int, tmp: Path, reps: int = 3) -> dict:
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog
    from paimon_cli.core.compact.rewrite_file_index import rewrite_file_index
    from paimon_cli.core.operation.scan import FileStoreScan
    from paimon_cli.core.schema.schema_change import SetOption
    from tests.interop.java_harness import JavaPaimon

    wh = str(tmp / "wh")
    cols = [("id", "BIGINT"), ("s", "STRING"), ("c", "INT")]
    jp = JavaPaimon.start(log_path=tmp / "jvm.log", temp_dir=tmp / "io")
    try:
        helper = jp._gateway.jvm.FileIndexHelper
        jp.create_table(wh, "db", "warm", cols, [], [], BASE)
        helper.benchWrite(wh, "db", "warm", min(rows, 1_000_000))  # JIT warm-up
        # alternate plain / indexed writes (fresh tables each), medians of `reps` pairs: single
        # JVM runs vary by several seconds (GC, JIT), more than the index cost itself
        plains, indexed = [], []
        for r in range(reps):
            jp.create_table(wh, "db", f"plain{r}", cols, [], [], BASE)
            jp.create_table(wh, "db", f"indexed{r}", cols, [], [], {**BASE, **OPTIONS})
            plains.append(helper.benchWrite(wh, "db", f"plain{r}", rows) / 1000)
            indexed.append(helper.benchWrite(wh, "db", f"indexed{r}", rows) / 1000)
        t_plain, t_indexed = statistics.median(plains), statistics.median(indexed)
    finally:
        jp.close()
    cat = FileSystemCatalog(wh)
    cat.alter_table("db.plain0", [SetOption(k, v) for k, v in OPTIONS.items()])
    table = cat.get_table("db.plain0")
    files = len(FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot()))
    start = time.monotonic()
    res = rewrite_file_index(table)
    ours = time.monotonic() - start
    # same payloads as Java for the bloom filter (bitmap bytes may order keys differently)
    java_table = cat.get_table("db.indexed0")
    return {
        "rows": rows, "data_files": files,
        "java_write_plain_s": round(t_plain, 2), "java_write_indexed_s": round(t_indexed, 2),
        "java_plain_runs_s": [round(x, 2) for x in plains], "java_indexed_runs_s": [round(x, 2) for x in indexed],
        "java_index_extra_s": round(t_indexed - t_plain, 2),
        "ours_rewrite_s": round(ours, 2), "ours_rows_read": res.rows_read,
        "ratio_java_extra_over_ours": round((t_indexed - t_plain) / ours, 2) if ours else None,
        "java_files": len(FileStoreScan(java_table).plan(java_table.snapshot_manager.latest_snapshot())),
    }


def selective_read(tmp: Path, files: int = 100, rows_per_file: int = 20_000) -> dict:
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    from paimon_cli.core.catalog.filesystem import FileSystemCatalog
    from paimon_cli.core.compact.rewrite_file_index import rewrite_file_index
    from paimon_cli.core.compact.write_job import write_table
    from paimon_cli.core.data.predicate_parser import parse_predicate
    from paimon_cli.core.data.types import parse_columns
    from paimon_cli.core.operation.read import TableRead
    from paimon_cli.core.schema.schema_change import SetOption
    from paimon_cli.core.schema.table_schema import Schema

    wh = str(tmp / "wh2")
    cat = FileSystemCatalog(wh)
    cat.create_table("db.r", Schema.of(parse_columns("id BIGINT, s STRING, c INT"), options={"bucket": "-1"}))
    table = cat.get_table("db.r")
    rnd = random.Random(1)
    nid = 0
    for k in range(files):
        ids = pa.array(range(nid, nid + rows_per_file), pa.int64())
        s = pa.array([f"user-{rnd.getrandbits(40):011x}" for _ in range(rows_per_file)])
        c = pa.array([rnd.randint(0, 9) for _ in range(rows_per_file)], pa.int32())
        p = tmp / f"r{k}.parquet"
        pq.write_table(pa.table({"id": ids, "s": s, "c": c}), p)
        write_table(table, [str(p)])
        nid += rows_per_file
    probe = s[123].as_py()  # a value of the last file
    fields = list(cat.get_table("db.r").schema.fields)
    pred = parse_predicate(f"s = '{probe}'", fields)
    before = TableRead(cat.get_table("db.r"), predicate=pred)
    files_without = before.plan().remaining.files
    rows_without = before.to_arrow().num_rows
    cat.alter_table("db.r", [SetOption("file-index.bloom-filter.columns", "s"),
                             SetOption("file-index.bloom-filter.s.items", str(rows_per_file)),
                             SetOption("file-index.bloom-filter.s.fpp", "0.01")])
    t0 = time.monotonic()
    rewrite_file_index(cat.get_table("db.r"))
    t_rewrite = time.monotonic() - t0
    after = TableRead(cat.get_table("db.r"), predicate=pred)
    t0 = time.monotonic()
    rows_with = after.to_arrow().num_rows
    t_read = time.monotonic() - t0
    files_with = after.plan().remaining.files
    return {"files": files, "rows": files * rows_per_file, "files_read_without_index": files_without,
            "files_read_with_index": files_with, "reduction": round(files_without / max(files_with, 1), 1),
            "rows_match": rows_with == rows_without == 1, "rewrite_s": round(t_rewrite, 2),
            "indexed_read_s": round(t_read, 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--skip-java", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-fileindex-") as d:
        tmp = Path(d)
        out = {}
        if not args.skip_java:
            out["rewrite_vs_java"] = rewrite_vs_java(args.rows, tmp, args.reps)
        out["selective_read"] = selective_read(tmp)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
