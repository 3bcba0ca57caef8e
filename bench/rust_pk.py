"""Worker run by bench_pk_rust.py with the pypaimon-rust venv's interpreter (issue 28).

Usage::

    <rust-venv-python> bench/rust_pk.py read-to WAREHOUSE db.table OUT.parquet
    <rust-venv-python> bench/rust_pk.py files WAREHOUSE db.table [--check]

``read-to``: what ``paimon-cli read --to OUT.parquet`` does, through pypaimon-rust 0.4's own
API (``PaimonCatalog`` -> read builder -> ``read_arrow`` batch by batch -> one
``pq.ParquetWriter``, zstd like ours): the merged rows of a primary-key table streamed into
a Parquet file. ``files``: the ``$files`` system table through its DataFusion SQL context,
collected into one Arrow table (no text rendering; paimon-cli's ``-o jsonl`` does more).
Prints one JSON line (rows, seconds in process, and for ``files --check`` a digest of the
file paths and the record-count sum, to compare with paimon-cli's output). Must not import paimon-cli.
"""

import hashlib
import json
import sys
import time


def main() -> int:
    mode, warehouse, ident = sys.argv[1], sys.argv[2], sys.argv[3]
    t0 = time.perf_counter()
    if mode == "read-to":
        import pyarrow.parquet as pq
        from pypaimon_rust.datafusion import PaimonCatalog

        table = PaimonCatalog({"warehouse": warehouse}).get_table(ident)
        rb = table.new_read_builder()
        rows = 0
        writer = None
        for batch in rb.new_read().read_arrow(rb.new_scan().plan().splits()):
            if writer is None:
                writer = pq.ParquetWriter(sys.argv[4], batch.schema, compression="zstd")
            writer.write_batch(batch)
            rows += batch.num_rows
        if writer is not None:
            writer.close()
        print(json.dumps({"rows": rows, "read_s": time.perf_counter() - t0}))
        return 0
    if mode == "files":
        import pyarrow as pa
        import pyarrow.compute as pc
        from pypaimon_rust.datafusion import SQLContext

        ctx = SQLContext()
        ctx.register_catalog("p", {"warehouse": warehouse})
        ctx.set_current_catalog("p")
        db, name = ident.split(".", 1)
        t = pa.Table.from_batches(ctx.sql(f"SELECT * FROM {db}.`{name}$files`"))
        out = {"rows": t.num_rows, "read_s": time.perf_counter() - t0}
        if "--check" in sys.argv[4:]:  # the warm-up's check; timed runs skip it
            paths = sorted(t.column("file_path").to_pylist())
            out.update(paths_sha=hashlib.sha256("\n".join(paths).encode()).hexdigest(),
                       record_count=pc.sum(t.column("record_count")).as_py())
        print(json.dumps(out))
        return 0
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    raise SystemExit(main())
