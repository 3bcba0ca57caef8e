"""Worker run by bench_write_read.py with paimon-cli's interpreter: write or read in-process.

Usage::

    <paimon-cli-python> bench/wr_ours.py write WAREHOUSE db.table IN1.parquet [IN2 ...] [--option K=V]
    <paimon-cli-python> bench/wr_ours.py read WAREHOUSE db.table ROWS BATCHES
    <paimon-cli-python> bench/wr_ours.py read-append WAREHOUSE db.table ["id < 30000"]

``write`` calls ``core.operation.write.write_table`` once per input file (one commit each, Parquet
read included, as ``paimon-cli write`` does it); ``read`` runs ``TableRead.to_arrow`` and
checks the rows in full (``wr_data.check_merged``; the check is not timed); ``read-append``
reads an append table, optionally with a ``--where`` predicate, and reports rows and id sum. Prints one JSON
line with the phases to stdout.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    mode, warehouse, ident = sys.argv[1], sys.argv[2], sys.argv[3]
    rest = sys.argv[4:]
    t0 = time.perf_counter()
    # The libraries the read and write paths load lazily are loaded here, outside the timed
    # phases, as the peer's ``import pypaimon`` loads fastavro and pyarrow's Parquet and dataset
    # modules before its timer: "in process" times the work, not the imports.
    import fastavro  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    from paimon_cli.core.catalog.filesystem import FileSystemCatalog

    t1 = time.perf_counter()
    out: dict[str, object] = {"import_s": t1 - t0}
    catalog = FileSystemCatalog(warehouse)
    if mode == "write":
        from paimon_cli.core.compact.write_job import write_table

        options: dict[str, str] = {}
        files = []
        it = iter(rest)
        for a in it:
            if a == "--option":
                k, _, v = next(it).partition("=")
                options[k] = v
            else:
                files.append(a)
        batches = []
        for f in files:
            s = time.perf_counter()
            snap = write_table(catalog.get_table(ident), [f], options=options or None)
            batches.append(time.perf_counter() - s)
            assert snap is not None
        out.update(batches_s=batches, write_s=sum(batches), snapshot=snap.id)
    elif mode == "read":
        from wr_data import check_merged

        from paimon_cli.core.operation.read import TableRead

        rows, batches = int(rest[0]), int(rest[1])
        s = time.perf_counter()
        table = TableRead(catalog.get_table(ident)).to_arrow()
        out["read_s"] = time.perf_counter() - s
        out.update(check_merged(table, rows, batches))
    elif mode == "read-append":
        import pyarrow.compute as pc

        from paimon_cli.core.data.predicate_parser import parse_predicate
        from paimon_cli.core.operation.read import TableRead

        s = time.perf_counter()
        t = catalog.get_table(ident)
        pred = parse_predicate(rest[0], t.schema.fields) if rest else None
        table = TableRead(t, predicate=pred).to_arrow()
        out["read_s"] = time.perf_counter() - s
        out.update(rows=table.num_rows, id_sum=pc.sum(table.column("id")).as_py())
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
