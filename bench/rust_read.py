"""Worker run by bench_startup.py with the pypaimon-rust venv's interpreter: one small read.

Usage: ``<rust-venv-python> bench/rust_read.py WAREHOUSE read|snapshots|list [DB.TABLE]``

What ``paimon-cli read`` / ``inspect snapshots`` / ``list`` do, through pypaimon-rust 0.4's
own API (``pypaimon_rust.datafusion.PaimonCatalog``; no pypaimon Python code): the rows (or
snapshots, or tables) are printed as JSON lines on stdout, so the output work is counted as
it is for ``paimon-cli -o jsonl``. Must not import paimon-cli code.
"""

import json
import sys


def main() -> int:
    warehouse, mode = sys.argv[1], sys.argv[2]
    from pypaimon_rust.datafusion import PaimonCatalog

    catalog = PaimonCatalog({"warehouse": warehouse})
    out = sys.stdout
    if mode == "list":
        for db in catalog.list_databases():
            for name in catalog.list_tables(db):
                out.write(json.dumps({"database": db, "table": name}) + "\n")
        return 0
    table = catalog.get_table(sys.argv[3])
    if mode == "snapshots":
        for s in table.list_snapshots():
            out.write(json.dumps({"snapshot_id": s.id(), "commit_kind": s.commit_kind(),
                                  "commit_time": s.commit_time_ms(), "total_record_count": s.total_record_count(),
                                  "delta_record_count": s.delta_record_count()}) + "\n")
        return 0
    if mode != "read":
        raise SystemExit(f"unknown mode {mode}")
    rb = table.new_read_builder()
    for batch in rb.new_read().read(rb.new_scan().plan().splits()):
        for row in batch.to_pylist():
            out.write(json.dumps(row, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
