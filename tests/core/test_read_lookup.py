"""Reads of lookup-mode tables use one high-level record per key (Java's LookupMergeFunction).

In lookup mode a compaction writes a key's MERGED value to a lower level while the older
record stays on a higher level; merging both again would count the old value twice.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.job import compact_table
from paimon_cli.core.data.types import parse_data_type
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.table_schema import Schema


def _write(cat: FileSystemCatalog, ids: list[int], v: int) -> None:
    t = cat.get_table("db.t")
    tw = TableWrite(t)
    tw.write_arrow(pa.table({"id": pa.array(ids, pa.int32()), "v": pa.array([v] * len(ids), pa.int64())}))
    FileStoreCommit(t).commit(tw.prepare_commit())


@pytest.mark.parametrize("options", [
    {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum", "changelog-producer": "lookup"},
    {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum", "force-lookup": "true"},
])
def test_lookup_table_reads_one_high_level_record(tmp_path: Path, options: dict[str, str]) -> None:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_table("db.t", Schema.of(
        [("id", parse_data_type("INT NOT NULL"), None), ("v", parse_data_type("BIGINT"), None)],
        primary_keys=["id"], options={"bucket": "1", "write-only": "true", **options},
    ))
    _write(cat, list(range(5000)), 10)
    compact_table(cat.get_table("db.t"), expire=False)
    _write(cat, [1], 1)
    compact_table(cat.get_table("db.t"), expire=False)  # merged 11 goes to level 4, 10 stays on level 5
    t = cat.get_table("db.t")
    levels = sorted(e.file.level for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot()))
    assert levels == [4, 5]
    rows = {r["id"]: r["v"] for r in TableRead(t).to_arrow().to_pylist()}
    assert rows[1] == 11 and rows[0] == 10 and len(rows) == 5000
