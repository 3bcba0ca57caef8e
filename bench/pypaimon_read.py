"""Worker run by bench_inspect.py with pypaimon 2.1's interpreter: read one system table.

Usage: ``<pypaimon-python> bench/pypaimon_read.py WAREHOUSE 'db.table$files' [--json]``

Prints one JSON line to stdout: rows read, seconds spent importing pypaimon and seconds
spent reading (catalog -> get_table -> read builder -> to_arrow), plus, with ``--json``,
the seconds spent turning the Arrow table into a JSON document (to compare with
``paimon-cli -o json``, which does that work too). Must not import paimon-cli code.
"""

import json
import sys
import time


def main() -> int:
    warehouse, name = sys.argv[1], sys.argv[2]
    as_json = "--json" in sys.argv[3:]
    t0 = time.perf_counter()
    from pypaimon import CatalogFactory

    t1 = time.perf_counter()
    catalog = CatalogFactory.create({"warehouse": warehouse})
    table = catalog.get_table(name)
    rb = table.new_read_builder()
    arrow = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    t2 = time.perf_counter()
    json_s = None
    if as_json:
        text = json.dumps(arrow.to_pylist(), default=str, ensure_ascii=False, indent=2)
        json_s = time.perf_counter() - t2
        del text
    print(json.dumps({"rows": arrow.num_rows, "import_s": t1 - t0, "read_s": t2 - t1, "json_s": json_s}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
