"""``read --to FILE.parquet``: the export writer's encoding choices (issue 28)."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq

from paimon_cli.record_batches import write_export


def _export(batches: list[pa.RecordBatch], schema: pa.Schema) -> tuple[int, bytes]:
    out = io.BytesIO()
    n = write_export(iter(batches), schema, "parquet", out)
    return n, out.getvalue()


def test_parquet_export_uses_dictionaries_only_where_values_repeat() -> None:
    """Unique keys and measures are stored plain (a dictionary there doubled the encode time
    and grew the file); a column of few values keeps its dictionary. Rows stay identical."""
    rows = 20_000
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("name", pa.string())])
    ids = pa.array(range(rows), pa.int64())
    table = pa.table({"id": ids, "dt": pa.array([f"2024-01-0{i % 4}" for i in range(rows)]),
                      "name": pa.array([f"v-{i}" for i in range(rows)])}, schema=schema)
    batches = table.to_batches(max_chunksize=6_000)
    n, data = _export(batches, schema)
    assert n == rows
    f = pq.ParquetFile(io.BytesIO(data))
    assert f.read().equals(table)
    dictionary = {f.metadata.row_group(g).column(c).path_in_schema: f.metadata.row_group(g).column(c).has_dictionary_page
                  for g in range(f.metadata.num_row_groups) for c in range(3)}
    assert dictionary == {"id": False, "dt": True, "name": False}
    assert f.metadata.row_group(0).column(0).compression == "ZSTD"


def test_parquet_export_of_no_rows_is_a_valid_file() -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    n, data = _export([], schema)
    assert n == 0
    back = pq.read_table(io.BytesIO(data))
    assert back.num_rows == 0 and back.schema.equals(schema)
