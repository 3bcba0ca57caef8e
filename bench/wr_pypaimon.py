"""Worker run by bench_write_read.py with pypaimon 2.1's interpreter: write or read.

Usage::

    <pypaimon-python> bench/wr_pypaimon.py write WAREHOUSE db.table IN1.parquet [IN2 ...] [--native]
    <pypaimon-python> bench/wr_pypaimon.py read WAREHOUSE db.table ROWS BATCHES [--native]
    <pypaimon-python> bench/wr_pypaimon.py read-append WAREHOUSE db.table ["id < N" | "qty = N"] [--native]

``write`` creates the table (``Schema.from_pyarrow_schema``, bucket 4, ``write-only``), then
per input file: ``pq.read_table`` -> ``new_write().write_arrow`` -> ``new_commit().commit``
(one commit per file; the Parquet read is timed too, as ours includes it). ``--native`` sets
``write.native.enabled`` (the ``pypaimon-rust`` writer) on the table copy used for writing,
or ``read.native.enabled`` for reads, and reports which writer/reader class actually ran.
Prints one JSON line to stdout. Must not import paimon-cli code.
"""

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    mode, warehouse, ident = sys.argv[1], sys.argv[2], sys.argv[3]
    native = "--native" in sys.argv[4:]
    rest = [a for a in sys.argv[4:] if a != "--native"]
    t0 = time.perf_counter()
    import pyarrow.parquet as pq
    from pypaimon import CatalogFactory, Schema
    from wr_data import PARTITION_KEYS, PRIMARY_KEYS, arrow_schema, check_merged

    t1 = time.perf_counter()
    out = {"import_s": t1 - t0}
    catalog = CatalogFactory.create({"warehouse": warehouse})
    db = ident.split(".")[0]
    if mode == "write":
        catalog.create_database(db, True)
        schema = Schema.from_pyarrow_schema(
            arrow_schema(), partition_keys=list(PARTITION_KEYS), primary_keys=list(PRIMARY_KEYS),
            options={"bucket": "4", "write-only": "true"},
        )
        catalog.create_table(ident, schema, False)
        batches, writers = [], set()
        for f in rest:
            s = time.perf_counter()
            table = catalog.get_table(ident)
            if native:
                table = table.copy({"write.native.enabled": "true"})
            data = pq.read_table(f)
            builder = table.new_batch_write_builder()
            w = builder.new_write()
            writers.add(type(w).__name__)
            c = builder.new_commit()
            try:
                w.write_arrow(data)
                c.commit(w.prepare_commit())
            finally:
                w.close()
                c.close()
            batches.append(time.perf_counter() - s)
        out.update(batches_s=batches, write_s=sum(batches), writer=sorted(writers))
    elif mode == "read":
        rows, nb = int(rest[0]), int(rest[1])
        s = time.perf_counter()
        table = catalog.get_table(ident)
        if native:
            table = table.copy({"read.native.enabled": "true"})
        rb = table.new_read_builder()
        read = rb.new_read()
        arrow = read.to_arrow(rb.new_scan().plan().splits())
        out["read_s"] = time.perf_counter() - s
        out["reader"] = type(read).__name__
        out.update(check_merged(arrow, rows, nb))
    elif mode == "read-append":
        import pyarrow.compute as pc

        s = time.perf_counter()
        table = catalog.get_table(ident)
        if native:
            table = table.copy({"read.native.enabled": "true"})
        rb = table.new_read_builder()
        if rest:  # only "id < N" and "qty = N" are used by the drivers
            col, op, value = rest[0].split()
            assert (col, op) in (("id", "<"), ("qty", "=")), rest[0]
            pb = rb.new_predicate_builder()
            rb = rb.with_filter(pb.less_than(col, int(value)) if op == "<" else pb.equal(col, int(value)))
        read = rb.new_read()
        arrow = read.to_arrow(rb.new_scan().plan().splits())
        out["read_s"] = time.perf_counter() - s
        out["reader"] = type(read).__name__
        out.update(rows=arrow.num_rows, id_sum=pc.sum(arrow.column("id")).as_py())
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
