"""``materialize-deletion-vectors`` on data-evolution tables whose rows pypaimon 2.1 deleted by row id.

pypaimon appends three row ranges, updates a column by ``_ROW_ID`` (partial-column files over
every range) and deletes rows by ``_ROW_ID`` (``TableDeleteByRowId``: deletion vectors keyed by
each range's anchor file). Materializing rewrites every range holding a deletion vector as new
files whose surviving rows get new row ids; pypaimon and our ``read`` then return exactly the
surviving rows, and a second run changes nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact import materialize_dv
from paimon_cli.core.errors import NotYetSupported
from paimon_cli.core.manifest.index_manifest import DELETION_VECTORS_INDEX
from paimon_cli.core.mergetree.blob_file_writer import BlobRollingFileWriter
from paimon_cli.core.mergetree.file_writer import RollingFileWriter
from paimon_cli.core.operation import data_evolution_read
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from tests.interop.cli_runner import CLI_ENV, cli, cli_json
from tests.interop.pypaimon_peer import PyPaimon, encode_value

pytestmark = pytest.mark.pypaimon

DB = "peer"
COLUMNS = [("id", "int64"), ("dt", "string"), ("a", "string"), ("b", "int64")]
DE = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
DV = {**DE, "deletion-vectors.enabled": "true"}


def _rows(lo: int, hi: int, dt: str) -> list[dict[str, Any]]:
    return [{"id": i, "dt": dt, "a": f"a{i}", "b": i * 10} for i in range(lo, hi)]


# three ranges of 40 rows: 0..39 (x), 40..79 (y), 80..119 (x); b updated in two ranges; rows
# deleted in two deletes (the second merges into the vectors of the first); range 40..79 untouched
APPENDS = [_rows(0, 40, "x"), _rows(40, 80, "y"), _rows(80, 120, "x")]
UPDATE = [{"_ROW_ID": r, "b": -r} for r in (1, 5, 85)]
DELETES = [[1, 2, 39, 100], [5, 80, 119]]
DELETED = {r for d in DELETES for r in d}
TABLES = {"dv": ([], DV), "dv_part": (["dt"], DV), "de": ([], DE), "plain": ([], {})}


def canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


@pytest.fixture(autouse=True)
def clean_cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in CLI_ENV:
        monkeypatch.delenv(var, raising=False)


def _enc(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: encode_value(v) for k, v in r.items()} for r in rows]


@pytest.fixture(scope="module")
def peer_wh(pypaimon: PyPaimon, tmp_path_factory: pytest.TempPathFactory) -> str:
    wh = str(tmp_path_factory.mktemp("peer-mdv-wh"))
    common = {"warehouse": wh, "db": DB}
    ops: list[dict[str, Any]] = []
    for name, (parts, options) in TABLES.items():
        ops.append({"op": "create_table", **common, "table": name, "columns": [list(c) for c in COLUMNS],
                    "primary_keys": [], "partition_keys": parts, "options": {"bucket": "-1", **options}})
        ops += [{"op": "write", **common, "table": name, "rows": _enc(rows)} for rows in APPENDS]
        if options:
            ops.append({"op": "update_by_row_id", **common, "table": name, "columns": ["b"], "rows": _enc(UPDATE)})
        if options is DV:
            ops += [{"op": "delete_by_row_id", **common, "table": name, "row_ids": d} for d in DELETES]
    results = pypaimon.batch(ops)
    failed = [r for r in results if not r["ok"]]
    assert not failed and len(results) == len(ops), failed[0]["traceback"] if failed else "driver stopped"
    return wh


@pytest.fixture
def own_wh(peer_wh: str, tmp_path: Path) -> str:
    wh = tmp_path / "wh"
    shutil.copytree(peer_wh, wh)
    return str(wh)


def surviving() -> list[dict[str, Any]]:
    rows = {i: r for i, r in enumerate(r for batch in APPENDS for r in batch)}
    for u in UPDATE:
        rows[u["_ROW_ID"]] = {**rows[u["_ROW_ID"]], "b": u["b"]}
    return [rows[i] for i in sorted(rows) if i not in DELETED]


def _files(wh: str, name: str) -> set[str]:
    root = Path(wh) / f"{DB}.db" / name
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def _dv_index_entries(wh: str, name: str) -> list[Any]:
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    snap = table.snapshot_manager.latest_snapshot()
    return [e for e in FileStoreScan(table).index_entries(snap) if e.index_file.index_type == DELETION_VECTORS_INDEX]


def _read_ids(wh: str, name: str) -> list[dict[str, Any]]:
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    return TableRead(table, projection=["id", "_ROW_ID"]).to_arrow().to_pylist()


@pytest.mark.parametrize("name", ["dv", "dv_part"])
def test_materialize_keeps_exactly_the_surviving_rows_with_new_row_ids(pypaimon: PyPaimon, own_wh: str,
                                                                       name: str) -> None:
    cols = [c for c, _ in COLUMNS]
    ident = f"{DB}.{name}"
    assert canon(pypaimon.read(own_wh, DB, name, projection=cols)) == canon(surviving())
    before_ids = {r["id"]: r["_ROW_ID"] for r in _read_ids(own_wh, name)}
    assert before_ids == {r["id"]: r["id"] for r in surviving()}
    snaps_before = cli_json(own_wh, "inspect", "snapshots", ident)

    # the dry run lists the two ranges holding deleted rows, and changes nothing
    files_before = _files(own_wh, name)
    plan = cli_json(own_wh, "materialize-deletion-vectors", ident, "--dry-run")
    assert sorted((p["first_row_id"], p["last_row_id"], p["deleted_rows"], p["rows_kept"]) for p in plan) == \
        [(0, 39, 4, 36), (80, 119, 3, 37)]
    assert all(len(p["files"].split()) == 2 for p in plan)  # the range's file and its partial-column file
    assert _files(own_wh, name) == files_before

    (res,) = cli_json(own_wh, "materialize-deletion-vectors", ident)
    assert (res["ranges"], res["files_rewritten"], res["rows_deleted"], res["rows_kept"]) == (2, 4, 7, 73)
    assert res["snapshot_id"] == snaps_before[-1]["snapshot_id"] + 1
    rewritten = {f for p in plan for f in p["files"].split()}
    live = {f["file_path"].rsplit("/", 1)[-1] for f in cli_json(own_wh, "inspect", "files", ident)}
    assert not live & rewritten

    # pypaimon and our read: exactly the surviving rows
    assert canon(pypaimon.read(own_wh, DB, name, projection=cols)) == canon(surviving())
    mine = TableRead(FileSystemCatalog(own_wh).get_table(ident), projection=cols).to_arrow().to_pylist()
    assert canon(mine) == canon(surviving())
    # row ids: the untouched range keeps its ids, rewritten rows get new unique ids from nextRowId 120
    theirs = {r["id"]: r["_ROW_ID"] for r in pypaimon.read(own_wh, DB, name, projection=["id", "_ROW_ID"])}
    ours = {r["id"]: r["_ROW_ID"] for r in _read_ids(own_wh, name)}
    assert theirs == ours
    assert len(set(ours.values())) == len(ours) == 113
    assert all(ours[i] == i for i in range(40, 80))
    moved = sorted(v for k, v in ours.items() if not 40 <= k < 80)
    assert moved == list(range(120, 120 + 73))
    snap = FileSystemCatalog(own_wh).get_table(ident).snapshot_manager.latest_snapshot()
    assert snap is not None and snap.next_row_id == 193
    # first_row_id ranges of live files do not overlap between different ranges
    spans = sorted({(f["first_row_id"], f["first_row_id"] + f["record_count"] - 1)
                    for f in cli_json(own_wh, "inspect", "files", ident)})
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False)), spans
    assert _dv_index_entries(own_wh, name) == []

    # a second run changes nothing
    (again,) = cli_json(own_wh, "materialize-deletion-vectors", ident)
    assert again["snapshot_id"] is None and again["ranges"] == 0
    assert cli_json(own_wh, "inspect", "snapshots", ident)[-1]["snapshot_id"] == res["snapshot_id"]
    assert cli_json(own_wh, "materialize-deletion-vectors", ident, "--dry-run") == []


def test_partition_filter_rewrites_only_that_partition(pypaimon: PyPaimon, own_wh: str) -> None:
    ident = f"{DB}.dv_part"
    assert cli_json(own_wh, "materialize-deletion-vectors", ident, "--partition", "dt=y", "--dry-run") == []
    res = cli(own_wh, "materialize-deletion-vectors", ident, "--partition", "dt=nope", code=3)  # as compact's
    assert "dt=nope" in res.stderr
    (res,) = cli_json(own_wh, "materialize-deletion-vectors", ident, "--where", "dt = 'x'")
    assert res["ranges"] == 2
    cols = [c for c, _ in COLUMNS]
    assert canon(pypaimon.read(own_wh, DB, "dv_part", projection=cols)) == canon(surviving())


def test_batch_bound_takes_whole_ranges_and_leaves_the_rest_for_the_next_run(pypaimon: PyPaimon,
                                                                              own_wh: str) -> None:
    table = FileSystemCatalog(own_wh).get_table(f"{DB}.dv")
    first = materialize_dv.materialize_deletion_vectors(table, max_vectors=1)
    assert len(first.groups) == 1 and first.left_over == 1 and first.snapshot_id is not None
    assert (first.groups[0].first_row_id, first.groups[0].last_row_id) == (0, 39)
    assert len(_dv_index_entries(own_wh, "dv")) == 1  # the other range's vector moved to a new index file
    cols = [c for c, _ in COLUMNS]
    assert canon(pypaimon.read(own_wh, DB, "dv", projection=cols)) == canon(surviving())
    second = materialize_dv.materialize_deletion_vectors(table, max_vectors=1)
    assert len(second.groups) == 1 and second.left_over == 0
    third = materialize_dv.materialize_deletion_vectors(table, max_vectors=1)
    assert third.groups == [] and third.snapshot_id is None
    assert canon(pypaimon.read(own_wh, DB, "dv", projection=cols)) == canon(surviving())
    assert _dv_index_entries(own_wh, "dv") == []


def test_concurrent_delete_fails_the_commit_and_leaves_nothing(pypaimon: PyPaimon, own_wh: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    ident = f"{DB}.dv"
    files_before = _files(own_wh, "dv")
    snaps_before = cli_json(own_wh, "inspect", "snapshots", ident)
    rewrite = materialize_dv._rewrite

    def rewrite_then_peer_deletes(*args: Any, **kwargs: Any) -> Any:
        out = rewrite(*args, **kwargs)
        pypaimon.call("delete_by_row_id", warehouse=own_wh, db=DB, table="dv", row_ids=[10])
        return out

    monkeypatch.setattr(materialize_dv, "_rewrite", rewrite_then_peer_deletes)
    res = cli(own_wh, "materialize-deletion-vectors", ident, code=5)
    assert "changed while they were materialized" in res.stderr
    added = _files(own_wh, "dv") - files_before
    # only the peer's commit: its DV index file, manifests and snapshot -- none of our data files
    assert not any(f.startswith("bucket-") for f in added), added
    assert len(cli_json(own_wh, "inspect", "snapshots", ident)) == len(snaps_before) + 1  # the peer's only
    cols = [c for c, _ in COLUMNS]
    want = [r for r in surviving() if r["id"] != 10]
    assert canon(pypaimon.read(own_wh, DB, "dv", projection=cols)) == canon(want)
    monkeypatch.setattr(materialize_dv, "_rewrite", rewrite)
    (again,) = cli_json(own_wh, "materialize-deletion-vectors", ident)
    assert again["rows_deleted"] == 8
    assert canon(pypaimon.read(own_wh, DB, "dv", projection=cols)) == canon(want)


def test_concurrent_append_commits_with_ids_after_it(pypaimon: PyPaimon, own_wh: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """An append of new rows changes no range: the run commits on top, numbering after it."""
    rewrite = materialize_dv._rewrite

    def rewrite_then_peer_appends(*args: Any, **kwargs: Any) -> Any:
        out = rewrite(*args, **kwargs)
        pypaimon.call("write", warehouse=own_wh, db=DB, table="dv", rows=_enc(_rows(500, 505, "z")))
        return out

    monkeypatch.setattr(materialize_dv, "_rewrite", rewrite_then_peer_appends)
    (res,) = cli_json(own_wh, "materialize-deletion-vectors", f"{DB}.dv")
    assert res["snapshot_id"] is not None
    ids = {r["id"]: r["_ROW_ID"] for r in _read_ids(own_wh, "dv")}
    assert [ids[i] for i in range(500, 505)] == list(range(120, 125))
    assert sorted(v for k, v in ids.items() if k < 40 or 80 <= k < 120) == list(range(125, 125 + 73))
    cols = [c for c, _ in COLUMNS]
    assert canon(pypaimon.read(own_wh, DB, "dv", projection=cols)) == canon(surviving() + _rows(500, 505, "z"))


@pytest.mark.parametrize(("name", "args", "code", "message"), [
    ("plain", (), 4, "is not a data-evolution table"),
    ("de", (), 4, "does not have deletion vectors enabled"),
    ("dv", ("--partition", "dt=x", "--where", "dt = 'x'"), 4, "give --partition or --where, not both"),
])
def test_refusals_change_nothing(own_wh: str, name: str, args: tuple[str, ...], code: int, message: str) -> None:
    before = _files(own_wh, name)
    res = cli(own_wh, "materialize-deletion-vectors", f"{DB}.{name}", *args, code=code)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in res.stderr, res.stderr
    assert _files(own_wh, name) == before


def test_vector_store_files_are_refused_by_name(own_wh: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A range holding a vector-store file (``.vector.<format>``) cannot be rewritten here."""
    table = FileSystemCatalog(own_wh).get_table(f"{DB}.dv")
    plan = FileStoreScan.plan

    def with_vector_file(self: FileStoreScan, *args: Any, **kwargs: Any) -> Any:
        entries = plan(self, *args, **kwargs)
        import dataclasses
        e = next(e for e in entries if e.file.first_row_id == 0 and e.file.write_cols)
        vec = dataclasses.replace(e.file, file_name="data-x-0.vector.parquet")
        return [*entries, dataclasses.replace(e, file=vec)]

    monkeypatch.setattr(FileStoreScan, "plan", with_vector_file)
    before = _files(own_wh, "dv")
    with pytest.raises(NotYetSupported, match=r"vector-store file\(s\) data-x-0.vector.parquet"):
        materialize_dv.materialize_deletion_vectors(table)
    assert _files(own_wh, "dv") == before



def test_global_index_over_a_rewritten_range_is_dropped(pypaimon: PyPaimon, tmp_path: Path) -> None:
    """A btree global index maps values to row ids; rows that get new ids make it stale, so the
    run drops it in the same snapshot (Java drops affected global indexes) and pypaimon's
    filtered read still finds every surviving row."""
    wh = str(tmp_path / "wh")
    pypaimon.create_table(wh, DB, "gi", [("id", "int64"), ("v", "string")], options={"bucket": "-1", **DV})
    pypaimon.write(wh, DB, "gi", [{"id": i, "v": f"v{i}"} for i in range(10)])
    pypaimon.write(wh, DB, "gi", [{"id": i, "v": f"v{i}"} for i in range(10, 20)])
    assert pypaimon.create_global_index(wh, DB, "gi", "id", "btree") >= 1
    pypaimon.call("delete_by_row_id", warehouse=wh, db=DB, table="gi", row_ids=[3, 4])
    table = FileSystemCatalog(wh).get_table(f"{DB}.gi")
    globals_before = [e for e in FileStoreScan(table).index_entries(table.snapshot_manager.latest_snapshot())
                      if e.index_file.global_index is not None]
    assert [(e.index_file.global_index.row_range_start, e.index_file.global_index.row_range_end)
            for e in globals_before if e.index_file.global_index is not None] == [(0, 19)]  # one over both ranges
    (res,) = cli_json(wh, "materialize-deletion-vectors", f"{DB}.gi")
    assert res["ranges"] == 1 and res["global_indexes_dropped"] == 1
    snap = table.snapshot_manager.latest_snapshot()
    left = [e for e in FileStoreScan(table).index_entries(snap) if e.index_file.global_index is not None]
    assert left == []
    want = sorted(i for i in range(20) if i not in (3, 4))
    assert sorted(r["id"] for r in pypaimon.read(wh, DB, "gi")) == want
    got = pypaimon.call("read_filtered", warehouse=wh, db=DB, table="gi", filters=[["equal", "id", [7]]])
    assert [r["id"] for r in got["rows"]] == [7]


def test_a_fully_deleted_range_leaves_no_file(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    pypaimon.create_table(wh, DB, "t", [("id", "int64"), ("v", "string")], options={"bucket": "-1", **DV})
    pypaimon.write(wh, DB, "t", [{"id": i, "v": f"v{i}"} for i in range(5)])
    pypaimon.write(wh, DB, "t", [{"id": i, "v": f"v{i}"} for i in range(5, 10)])
    pypaimon.call("delete_by_row_id", warehouse=wh, db=DB, table="t", row_ids=[0, 1, 2, 3, 4, 7])
    (res,) = cli_json(wh, "materialize-deletion-vectors", f"{DB}.t")
    assert (res["ranges"], res["files_rewritten"], res["files_written"], res["rows_deleted"]) == (2, 2, 1, 6)
    files = cli_json(wh, "inspect", "files", f"{DB}.t")
    assert [(f["first_row_id"], f["record_count"]) for f in files] == [(10, 4)]
    assert sorted((r["id"], r["_ROW_ID"]) for r in pypaimon.read(wh, DB, "t", projection=["id", "_ROW_ID"])) == \
        [(5, 10), (6, 11), (8, 12), (9, 13)]
    assert _dv_index_entries(wh, "t") == []


def test_dynamic_option_applies_to_the_run(pypaimon: PyPaimon, own_wh: str) -> None:
    """``--option target-file-size=1b``: each range's rows roll into their own file (one by default)."""
    (res,) = cli_json(own_wh, "materialize-deletion-vectors", f"{DB}.dv", "--option", "target-file-size=1b")
    assert (res["ranges"], res["files_written"]) == (2, 2)
    files = [f for f in cli_json(own_wh, "inspect", "files", f"{DB}.dv") if f["first_row_id"] >= 120]
    assert sorted((f["first_row_id"], f["record_count"]) for f in files) == [(120, 36), (156, 37)]
    cols = [c for c, _ in COLUMNS]
    assert canon(pypaimon.read(own_wh, DB, "dv", projection=cols)) == canon(surviving())
    assert "target-file-size" not in json.dumps(cli_json(own_wh, "inspect", "options", f"{DB}.dv"))


BLOB_COLUMNS = [("id", "int64"), ("name", "string"), ("pic", "large_binary")]


def _blob_rows(lo: int, hi: int) -> list[dict[str, Any]]:
    return [{"id": i, "name": f"n{i}", "pic": None if i % 5 == 2 else bytes([i % 256]) * (i * 7 % 50)}
            for i in range(lo, hi)]


@pytest.mark.parametrize("blob_target", ["200 b", "64 mb"])
def test_blob_table_rows_and_blob_values_survive(pypaimon: PyPaimon, tmp_path: Path, blob_target: str) -> None:
    """BLOB values live in ``.blob`` files over sub-ranges of their data file's row ids (several
    per data file with a small ``blob.target-file-size``; an update of the column adds one over
    the whole range). As Java master, the run reads every column of a range -- the blob bytes
    from its ``.blob`` files -- and writes the surviving rows as new data files plus new
    ``.blob`` files, replacing the old ones; pypaimon reads the same rows, blob bytes included."""
    wh = str(tmp_path / "wh")
    opts = {"bucket": "-1", **DV, "blob.target-file-size": blob_target}
    pypaimon.create_table(wh, DB, "b", BLOB_COLUMNS, options=opts)
    appends = [_blob_rows(0, 20), _blob_rows(20, 30)]
    for rows in appends:
        pypaimon.write(wh, DB, "b", rows)
    rows = {r["id"]: r for batch in appends for r in batch}
    update = [{"_ROW_ID": 4, "pic": b"NEW4"}, {"_ROW_ID": 6, "pic": None}, {"_ROW_ID": 25, "pic": b""}]
    pypaimon.update_by_row_id(wh, DB, "b", ["pic"], update)
    for u in update:
        rows[u["_ROW_ID"]] = {**rows[u["_ROW_ID"]], "pic": u["pic"]}
    pypaimon.call("delete_by_row_id", warehouse=wh, db=DB, table="b", row_ids=[0, 4, 13, 27])
    want = [r for i, r in rows.items() if i not in (0, 4, 13, 27)]
    cols = [c for c, _ in BLOB_COLUMNS]

    def theirs() -> list[str]:
        return canon([{k: encode_value(v) for k, v in r.items()} for r in pypaimon.read(wh, DB, "b", projection=cols)])

    expected = canon([{k: encode_value(v) for k, v in r.items()} for r in want])
    assert theirs() == expected
    ident = f"{DB}.b"
    blobs_before = {f["file_path"].rsplit("/", 1)[-1] for f in cli_json(wh, "inspect", "files", ident)
                    if f["file_path"].endswith(".blob")}
    assert blobs_before
    (res,) = cli_json(wh, "materialize-deletion-vectors", ident)
    assert (res["ranges"], res["rows_deleted"], res["rows_kept"]) == (2, 4, 26)
    assert theirs() == expected
    mine = TableRead(FileSystemCatalog(wh).get_table(ident), projection=cols).to_arrow().to_pylist()
    assert canon([{k: encode_value(v) for k, v in r.items()} for r in mine]) == expected
    files = cli_json(wh, "inspect", "files", ident)
    assert not blobs_before & {f["file_path"].rsplit("/", 1)[-1] for f in files}
    assert any(f["file_path"].endswith(".blob") for f in files)  # the blob values were written anew
    ids = sorted(r["_ROW_ID"] for r in pypaimon.read(wh, DB, "b", projection=["id", "_ROW_ID"]))
    assert ids == list(range(30, 56))
    assert _dv_index_entries(wh, "b") == []
    (again,) = cli_json(wh, "materialize-deletion-vectors", ident)
    assert again["snapshot_id"] is None and again["ranges"] == 0


def test_blob_update_during_the_run_fails_the_commit(pypaimon: PyPaimon, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A concurrent update of a blob column adds a ``.blob`` file over a rewritten range: the
    run's commit would leave it over row ids no data file holds, so it fails (exit 5)."""
    wh = str(tmp_path / "wh")
    pypaimon.create_table(wh, DB, "b", BLOB_COLUMNS, options={"bucket": "-1", **DV})
    pypaimon.write(wh, DB, "b", _blob_rows(0, 10))
    pypaimon.call("delete_by_row_id", warehouse=wh, db=DB, table="b", row_ids=[3])
    rewrite = materialize_dv._rewrite

    def rewrite_then_peer_updates(*args: Any, **kwargs: Any) -> Any:
        out = rewrite(*args, **kwargs)
        pypaimon.update_by_row_id(wh, DB, "b", ["pic"], [{"_ROW_ID": 5, "pic": b"late"}])
        return out

    monkeypatch.setattr(materialize_dv, "_rewrite", rewrite_then_peer_updates)
    res = cli(wh, "materialize-deletion-vectors", f"{DB}.b", code=5)
    assert "materialize-deletion-vectors: rows 0..9 of peer.b changed" in res.stderr
    got = {r["id"]: r["pic"] for r in pypaimon.read(wh, DB, "b", projection=["id", "pic"])}
    assert sorted(got) == [i for i in range(10) if i != 3] and got[5] == b"late"


def test_a_deletion_vector_keyed_by_a_blob_file_is_refused(pypaimon: PyPaimon, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Readers apply a range's vector through its normal anchor file; one keyed by a ``.blob``
    file would be dropped by the rewrite without its rows being deleted: refused (exit 4), as Java."""
    import dataclasses

    wh = str(tmp_path / "wh")
    pypaimon.create_table(wh, DB, "b", BLOB_COLUMNS, options={"bucket": "-1", **DV})
    pypaimon.write(wh, DB, "b", _blob_rows(0, 10))
    pypaimon.call("delete_by_row_id", warehouse=wh, db=DB, table="b", row_ids=[3])
    table = FileSystemCatalog(wh).get_table(f"{DB}.b")
    blob = next(e.file.file_name for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())
                if e.file.file_name.endswith(".blob"))
    index_entries = FileStoreScan.index_entries

    def keyed_by_blob(self: FileStoreScan, *args: Any, **kwargs: Any) -> Any:
        out = []
        for e in index_entries(self, *args, **kwargs):
            f = e.index_file
            if f.dv_ranges:
                f = dataclasses.replace(f, dv_ranges=tuple(dataclasses.replace(m, data_file_name=blob)
                                                           for m in f.dv_ranges))
            out.append(dataclasses.replace(e, index_file=f))
        return out

    monkeypatch.setattr(FileStoreScan, "index_entries", keyed_by_blob)
    before = _files(wh, "b")
    res = cli(wh, "materialize-deletion-vectors", f"{DB}.b", code=4)
    assert f"deletion vector(s) keyed by .blob file(s) {blob}" in res.stderr
    assert _files(wh, "b") == before


def _materialize_recording_writes(wh: str, name: str, monkeypatch: pytest.MonkeyPatch, writer: type,
                                  batch_rows: int | None) -> tuple[list[int], list[dict[str, Any]]]:
    """Materialize ``name`` (``batch_rows`` per range batch, default otherwise), recording the
    rows of every batch the rolling writer receives; returns those and the rows read after."""
    writes: list[int] = []
    real = writer.write

    def write(self: Any, table: Any) -> None:
        writes.append(table.num_rows)
        real(self, table)

    with monkeypatch.context() as m:
        m.setattr(writer, "write", write)
        if batch_rows is not None:
            m.setattr(data_evolution_read, "BATCH_ROWS", batch_rows)
        table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
        res = materialize_dv.materialize_deletion_vectors(table)
        assert res.snapshot_id is not None
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    return writes, TableRead(table, projection=[*table.schema.field_names, "_ROW_ID"]).to_arrow().to_pylist()


def test_ranges_reach_the_writer_in_bounded_batches_with_the_same_rows(own_wh: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory stays bounded by a batch: each 40-row range (partial-column files, deletion
    vector) is read and written 7 rows at a time, and the table holds exactly the rows, in
    the same order and with the same new row ids, as with one batch per range."""
    whole_wh = str(tmp_path / "whole")
    shutil.copytree(own_wh, whole_wh)
    whole_writes, whole = _materialize_recording_writes(whole_wh, "dv", monkeypatch, RollingFileWriter, None)
    writes, batched = _materialize_recording_writes(own_wh, "dv", monkeypatch, RollingFileWriter, 7)
    assert whole_writes == [40 - 4, 40 - 3]  # ranges 0..39 and 80..119, whole
    assert len(writes) == 2 * 6 and max(writes) <= 7 and sum(writes) == sum(whole_writes)
    assert batched == whole
    assert canon([{k: r[k] for k, _ in COLUMNS} for r in batched]) == canon(surviving())


def test_blob_ranges_reach_the_writer_in_bounded_batches_with_the_same_rows(pypaimon: PyPaimon, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    wh = str(tmp_path / "wh")
    pypaimon.create_table(wh, DB, "b", BLOB_COLUMNS, options={"bucket": "-1", **DV, "blob.target-file-size": "200 b"})
    pypaimon.write(wh, DB, "b", _blob_rows(0, 30))
    pypaimon.update_by_row_id(wh, DB, "b", ["pic"], [{"_ROW_ID": 4, "pic": b"NEW4"}, {"_ROW_ID": 6, "pic": None}])
    pypaimon.call("delete_by_row_id", warehouse=wh, db=DB, table="b", row_ids=[0, 4, 13, 27])
    whole_wh = str(tmp_path / "whole")
    shutil.copytree(wh, whole_wh)
    whole_writes, whole = _materialize_recording_writes(whole_wh, "b", monkeypatch, BlobRollingFileWriter, None)
    writes, batched = _materialize_recording_writes(wh, "b", monkeypatch, BlobRollingFileWriter, 4)
    assert whole_writes == [26]
    assert writes == [3, 3, 4, 3, 4, 4, 3, 2]  # rows 0..3, 4..7, ..., 28..29; deleted: 0, 4, 13, 27
    assert batched == whole
    assert [r["pic"] for r in batched if r["id"] in (5, 6, 7)] == [_blob_rows(5, 6)[0]["pic"], None,
                                                                    _blob_rows(7, 8)[0]["pic"]]
