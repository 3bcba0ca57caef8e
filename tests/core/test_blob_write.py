"""Writing BLOB columns of data-evolution tables (Paimon 1.4+): ``.blob`` files beside the data files.

The byte layout is checked against the spec in tests/core/test_blob_file.py; here: what the
writer puts in which file, how it rolls, what an update by ``_ROW_ID`` writes, and what stays
refused by name. pypaimon reading our tables: tests/interop/test_blob_write_pypaimon.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_cli.core.api import Table, Warehouse
from paimon_cli.core.errors import NotYetSupported
from paimon_cli.core.format.blob_file import PLACEHOLDER_LENGTH, blob_values, read_blob_index
from paimon_cli.core.manifest.manifest import DataFileMeta
from paimon_cli.core.operation.scan import FileStoreScan

DE = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"}


def _table(tmp_path: Path, **options: str) -> Table:
    return Warehouse(str(tmp_path / "wh")).create_table("db.b", "id BIGINT, pic BLOB, v STRING",
                                                        options={**DE, **options})


def _files(t: Table) -> list[DataFileMeta]:
    ft = t.warehouse.catalog.get_table(t.identifier)
    return [e.file for e in FileStoreScan(ft).plan(ft.snapshot_manager.latest_snapshot())]


def _blob_bytes(t: Table, m: DataFileMeta, root: Path) -> list[Any]:
    ft = t.warehouse.catalog.get_table(t.identifier)
    path = str(next(root.rglob(m.file_name)))
    idx = read_blob_index(ft.file_io, path)
    return blob_values(ft.file_io, path, idx, np.arange(idx.row_count), "bytes").to_pylist()


def test_blob_files_roll_at_their_target_and_close_with_their_data_file(tmp_path: Path) -> None:
    t = _table(tmp_path, **{"blob.target-file-size": "100 b"})
    pics = [b"a" * 30, None, b"b" * 60, b"c" * 500, b"", b"d" * 40, b"e" * 10]  # 500 bytes > the target
    t.write(pa.table({"id": pa.array(range(7), pa.int64()), "pic": pics, "v": list("abcdefg")}))
    files = _files(t)
    data = [m for m in files if not m.file_name.endswith(".blob")]
    blobs = [m for m in files if m.file_name.endswith(".blob")]
    assert len(data) == 1 and data[0].write_cols == ("id", "v") and data[0].row_count == 7
    # checked after each value, as Java (record = bytes + 16, NULL none): 46+0+76 >= 100 closes the first
    # file, the big one fills one alone, 16+56+26 < 100 stays open until the data file closes
    assert [m.row_count for m in blobs] == [3, 1, 3]
    assert [m.first_row_id for m in blobs] == [0, 3, 4]
    assert all(m.write_cols == ("pic",) and m.value_stats_cols == () and m.min_sequence_number == 1
               and m.max_sequence_number == 1 for m in blobs)
    uuid = data[0].file_name.rsplit("-", 1)[0]
    assert [m.file_name for m in files] == [f"{uuid}-{k}.{ext}" for k, ext in
                                            enumerate(["parquet", "blob", "blob", "blob"])]
    assert [v for m in blobs for v in _blob_bytes(t, m, tmp_path)] == pics
    assert t.read("id,pic,_ROW_ID").to_pylist() == [{"id": i, "pic": p, "_ROW_ID": i} for i, p in enumerate(pics)]


def test_data_evolution_files_number_rows_from_zero(tmp_path: Path) -> None:
    """Java starts a new sequence counter per data-evolution file, so the commit stamps every
    file with the snapshot id; a later file numbered on (1000..) kept those numbers and beat
    newer updates of its rows in the merge (the update was silently lost)."""
    t = Warehouse(str(tmp_path / "wh")).create_table("db.de", "id BIGINT, v STRING", options=DE)
    n = 2500
    t.write(pa.table({"id": pa.array(range(n), pa.int64()), "v": [f"v{i}" for i in range(n)]}),
            options={"target-file-size": "1 kb"})
    files = _files(t)
    assert len(files) >= 2 and all(f.min_sequence_number == f.max_sequence_number == 1 for f in files)
    t.write(pa.table({"_ROW_ID": pa.array([5, 2400], pa.int64()), "v": ["new5", "new2400"]}), columns=["v"])
    got = {r["id"]: r["v"] for r in t.read("id,v", where="id = 5 OR id = 2400").to_pylist()}
    assert got == {5: "new5", 2400: "new2400"}


def test_update_of_a_blob_column_writes_placeholders_over_older_blob_files(tmp_path: Path) -> None:
    t = _table(tmp_path)
    pics = [bytes([65 + i]) * 5 for i in range(6)]
    t.write(pa.table({"id": pa.array(range(6), pa.int64()), "pic": pics, "v": list("abcdef")}))
    t.write(pa.table({"_ROW_ID": pa.array([3, 1], pa.int64()), "pic": [None, b"NEW"]}), columns=["pic"])
    (delta,) = [m for m in _files(t) if m.file_name.endswith(".blob") and m.min_sequence_number == 2]
    assert (delta.first_row_id, delta.row_count, delta.write_cols) == (0, 4, ("pic",))  # up to the last update
    ft = t.warehouse.catalog.get_table(t.identifier)
    path = str(next((tmp_path / "wh").rglob(delta.file_name)))
    lengths = read_blob_index(ft.file_io, path).lengths.tolist()
    assert lengths == [PLACEHOLDER_LENGTH, 3 + 16, PLACEHOLDER_LENGTH, -1]
    want = [pics[0], b"NEW", pics[2], None, pics[4], pics[5]]
    assert [r["pic"] for r in t.read("id,pic").to_pylist()] == want


@pytest.mark.parametrize(("options", "schema", "named"), [
    ({**DE, "blob-as-descriptor": "true"}, "id BIGINT, pic BLOB", "blob-as-descriptor=true"),
    ({**DE, "blob-descriptor-field": "pic"}, "id BIGINT, pic BLOB", "blob-descriptor-field=pic"),
    ({"bucket": "-1"}, "id BIGINT, pic BLOB", "BLOB column 'pic'"),
    ({**DE}, "id BIGINT, pics ARRAY<BLOB>", "BLOB column 'pics'"),
])
def test_blob_layouts_we_do_not_write_are_refused_by_name(tmp_path: Path, options: dict[str, str], schema: str,
                                                         named: str) -> None:
    t = Warehouse(str(tmp_path / "wh")).create_table("db.r", schema, options=options)
    before = sorted(p.name for p in (tmp_path / "wh").rglob("*"))
    with pytest.raises(NotYetSupported, match=named.replace("(", r"\(")):
        t.write(pa.table({"id": pa.array([1], pa.int64())}))
    assert sorted(p.name for p in (tmp_path / "wh").rglob("*")) == before


def test_failed_write_leaves_no_blob_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.errors import InvalidInput
    from paimon_cli.core.operation.write import TableWrite

    aborted: list[str] = []
    abort = TableWrite.abort

    def spy(self: TableWrite) -> None:
        aborted.extend(self.written)
        abort(self)

    monkeypatch.setattr(TableWrite, "abort", spy)
    t = Warehouse(str(tmp_path / "wh")).create_table("db.f", "id BIGINT NOT NULL, pic BLOB", options=DE)
    good = pa.record_batch({"id": pa.array(range(4), pa.int64()), "pic": [b"x" * 2000] * 4})
    bad = pa.record_batch({"id": pa.array([1, None], pa.int64()), "pic": [b"y", b"z"]})
    with pytest.raises(InvalidInput):
        t.write(pa.Table.from_batches([good, bad]), options={"write-buffer-size": "4 kb"})
    assert [p for p in aborted if p.endswith(".blob")]  # the full buffer flushed before the bad batch came
    assert not [p for p in (tmp_path / "wh").rglob("*") if p.is_file() and "schema" not in str(p)]
