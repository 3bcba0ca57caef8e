"""Row-group pruning on files Java Paimon 0.9 wrote with many row groups (a small
``parquet.block.size``): every pruned read returns exactly Java's rows filtered by the
predicate, in our unpruned read's order, and ``--explain`` counts the row groups skipped."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.predicate_parser import parse_predicate
from paimon_cli.core.operation.read import TableRead

pytestmark = pytest.mark.java

WHERES = ["id < 300", "id >= 4700 OR id = 2500", "name = 'n02345'", "name > 'n04900'", "v IS NULL",
          "d = DATE '2024-01-05'", "id IN (1, 4999) AND v IS NOT NULL", "k = 2", "id > 99999"]


def _canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def test_pruned_reads_of_java_files(java_paimon: Any, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    java_paimon.create_table(wh, "db", "t", [("k", "INT"), ("id", "INT"), ("name", "STRING"), ("d", "DATE"),
                                             ("v", "BIGINT")], partition_keys=["k"],
                             options={"bucket": "-1", "file.format": "parquet", "parquet.block.size": "4096"})
    for start in (0, 2500):
        java_paimon.write(wh, "db", "t", [
            {"k": i % 3, "id": i, "name": f"n{i:05d}", "d": dt.date(2024, 1, 1) + dt.timedelta(days=i // 500),
             "v": None if 1000 <= i < 1400 else i} for i in range(start, start + 2500)])
    files = list((wh / "db.db" / "t").glob("k=*/bucket-0/*.parquet"))
    assert files and all(pq.ParquetFile(f).metadata.num_row_groups > 3 for f in files)
    java_rows = [{k: v for k, v in r.items() if k != "_row_kind"} for r in java_paimon.read(wh, "db", "t")]
    table = FileSystemCatalog(str(wh)).get_table("db.t")
    everything = TableRead(table).to_arrow()
    assert _canon(everything.to_pylist()) == _canon(java_rows)
    skipped = 0
    for where in WHERES:
        pred = parse_predicate(where, table.schema.fields)
        tr = TableRead(table, predicate=pred)
        out = tr.to_arrow()
        assert out.equals(pred.filter(everything)), where
        step = {r["step"]: r for r in TableRead(table, predicate=pred).explain().rows}["pruned by row-group stats"]
        skipped += int(step["note"].split(" of ")[0])
    assert skipped > 0
    id_lt = {r["step"]: r for r in TableRead(table, predicate=parse_predicate("id < 300", table.schema.fields))
             .explain().rows}["pruned by row-group stats"]
    assert int(id_lt["note"].split(" of ")[0]) > 0 and id_lt["records"] > 0
