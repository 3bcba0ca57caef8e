from __future__ import annotations

from pathlib import Path

import pytest

from paimon_cli.core.errors import CorruptMetadata, MissingMetadata
from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.refs.statistics import ColStats, Statistics, read_statistics, write_statistics

JAVA = """{
  "snapshotId" : 3,
  "schemaId" : 0,
  "mergedRecordCount" : 10,
  "mergedRecordSize" : 4096,
  "colStats" : {
    "id" : {
      "colId" : 0,
      "distinctCount" : 10,
      "min" : "1",
      "max" : "10",
      "nullCount" : 0,
      "avgLen" : 4,
      "maxLen" : 4
    },
    "name" : {
      "colId" : 1,
      "nullCount" : 2
    }
  }
}"""


def test_parse_and_write_byte_exact() -> None:
    s = Statistics.from_json(JAVA, "stat-x-0")
    assert (s.snapshot_id, s.schema_id, s.merged_record_count, s.merged_record_size) == (3, 0, 10, 4096)
    cols = s.column_stats()
    assert cols["id"] == ColStats(col_id=0, distinct_count=10, min="1", max="10", null_count=0, avg_len=4, max_len=4)
    assert cols["name"].min is None and cols["name"].null_count == 2
    # the raw form is plain JSON data (system tables dump it directly)
    assert s.col_stats["name"] == {"colId": 1, "nullCount": 2}
    import json
    assert json.loads(json.dumps(s.col_stats)) == s.col_stats
    assert s.to_json() == JAVA
    assert s.col_stats_json().startswith('{\n  "id" : {\n    "colId" : 0,')


def test_minimal_statistics() -> None:
    s = Statistics.from_json('{"snapshotId": 1, "schemaId": 2}', "p")
    assert s.merged_record_count is None and s.col_stats == {}
    assert s.to_json() == '{\n  "snapshotId" : 1,\n  "schemaId" : 2,\n  "colStats" : { }\n}'


@pytest.mark.parametrize("text, problem", [
    ('{"schemaId": 2}', "snapshotId"),
    ('{"snapshotId": "a", "schemaId": 2}', "snapshotId"),
    ('{"snapshotId": 1, "schemaId": 2, "colStats": {"c": {"nullCount": 1}}}', "colId"),
    ('{"snapshotId": 1, "schemaId": 2, "colStats": []}', "colStats"),
    ("{", "invalid JSON"),
])
def test_corrupt(text: str, problem: str) -> None:
    with pytest.raises(CorruptMetadata) as ei:
        Statistics.from_json(text, "/t/statistics/stat-1")
    assert "/t/statistics/stat-1" in str(ei.value) and problem in str(ei.value)


def test_write_and_read_at_table_root(tmp_path: Path) -> None:
    fio = FileIO(str(tmp_path))
    t = str(tmp_path / "t")
    s = Statistics(snapshot_id=4, schema_id=1, merged_record_count=5, merged_record_size=None,
                   col_stats={"a": ColStats(col_id=0, min="x", max="y").to_dict()})
    name = write_statistics(fio, t, s)
    assert name.startswith("stat-") and name.endswith("-0")
    assert (tmp_path / "t" / "statistics" / name).exists()
    assert read_statistics(fio, t, name) == s
    with pytest.raises(MissingMetadata, match="stat-missing") as ei:  # a snapshot names it: broken metadata
        read_statistics(fio, t, "stat-missing")
    assert ei.value.exit_code == 4
