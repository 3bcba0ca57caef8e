"""Worker run by bench_inspect.py with paimon-cli's interpreter: one system table in-process.

Usage: ``<paimon-cli-python> bench/ours_inprocess.py WAREHOUSE db.table KIND``

Splits ``paimon-cli inspect KIND db.table -o json`` into its phases without the CLI layer
(typer parsing is not included): import, compute (catalog -> table -> rows, the part
comparable to pypaimon's ``to_arrow``) and render (rows -> JSON text, into memory).
Prints one JSON line to stdout.
"""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    warehouse, ident, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    t0 = time.perf_counter()
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog
    from paimon_cli.core.system.registry import SYSTEM_TABLES
    from paimon_cli.output import render_json

    t1 = time.perf_counter()
    table = FileSystemCatalog(warehouse).get_table(ident)
    rows = SYSTEM_TABLES[kind](table, None)
    t2 = time.perf_counter()
    buf = io.StringIO()
    render_json(rows, buf)
    t3 = time.perf_counter()
    print(json.dumps({"rows": len(rows.rows), "import_s": t1 - t0, "read_s": t2 - t1, "json_s": t3 - t2}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
