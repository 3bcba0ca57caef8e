"""Data-evolution tables (``data-evolution.enabled``) written by pypaimon 2.1 read as pypaimon reads them.

pypaimon appends rows (each commit gets a row-id range) and updates columns of existing rows by
``_ROW_ID`` (``update_by_arrow_with_row_id``): every file whose range holds an updated row gets a
partial-column file (``_WRITE_COLS``) with that column for its whole range. A read merges the
files of a range (newest max sequence number wins per column); ``inspect files`` decodes stats
over the write columns only; ``inspect table`` counts each range once.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.data_evolution import ranges_unchanged
from paimon_cli.core.compact.plan import plan_compaction
from paimon_cli.core.errors import CommitConflict
from paimon_cli.core.operation import data_evolution_update as dataevo_update
from paimon_cli.core.operation.read import TableRead
from tests.interop.cli_runner import CLI_ENV, cli, cli_json
from tests.interop.pypaimon_peer import PyPaimon, encode_value

pytestmark = pytest.mark.pypaimon

DB = "peer"
COLUMNS = [("id", "int64"), ("dt", "string"), ("a", "string"), ("b", "int64"), ("c", "float64")]
DE = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}


def _rows(lo: int, hi: int, dt: str) -> list[dict[str, Any]]:
    return [{"id": i, "dt": dt, "a": f"a{i}", "b": i * 10, "c": None if i % 7 == 3 else i / 2} for i in range(lo, hi)]


# three appends of 40 rows (120 rows), then updates: b of rows in every range, c of a few,
# b again of some rows (the newer partial file wins)
APPENDS = [_rows(0, 40, "x"), _rows(40, 80, "y"), _rows(80, 120, "x")]
UPDATES: list[tuple[list[str], list[dict[str, Any]]]] = [
    (["b"], [{"_ROW_ID": r, "b": -r} for r in (1, 5, 39, 41, 79, 80, 119)]),
    (["c", "a"], [{"_ROW_ID": r, "c": 1000.5 + r, "a": f"upd{r}"} for r in (2, 3, 100)]),
    (["b"], [{"_ROW_ID": r, "b": 7000 + r} for r in (5, 80)]),
]
TABLES = {
    "de": {**DE},
    "de_part": {**DE, "metadata.stats-mode": "full"},  # partitioned by dt; stats over write columns
}


def canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


@pytest.fixture(autouse=True)
def clean_cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in CLI_ENV:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def peer_wh(pypaimon: PyPaimon, tmp_path_factory: pytest.TempPathFactory) -> str:
    wh = str(tmp_path_factory.mktemp("peer-de-wh"))
    common = {"warehouse": wh, "db": DB}
    ops: list[dict[str, Any]] = []
    for name, options in TABLES.items():
        parts = ["dt"] if name == "de_part" else []
        ops.append({"op": "create_table", **common, "table": name, "columns": [list(c) for c in COLUMNS],
                    "primary_keys": [], "partition_keys": parts, "options": options})
        ops += [{"op": "write", **common, "table": name,
                 "rows": [{k: encode_value(v) for k, v in r.items()} for r in rows]} for rows in APPENDS]
        ops += [{"op": "update_by_row_id", **common, "table": name, "columns": cols,
                 "rows": [{k: encode_value(v) for k, v in r.items()} for r in rows]} for cols, rows in UPDATES]
    results = pypaimon.batch(ops)
    failed = [r for r in results if not r["ok"]]
    assert not failed and len(results) == len(ops), failed[0]["traceback"] if failed else "driver stopped"
    return wh


def expected_rows() -> list[dict[str, Any]]:
    rows = {i: {**r, "_ROW_ID": i} for i, r in enumerate(r for batch in APPENDS for r in batch)}
    for _, updates in UPDATES:
        for u in updates:
            rows[u["_ROW_ID"]].update(u)
    return [rows[i] for i in sorted(rows)]


@pytest.mark.parametrize("name", list(TABLES))
def test_read_matches_pypaimon_row_for_row(pypaimon: PyPaimon, peer_wh: str, name: str) -> None:
    cols = [c for c, _ in COLUMNS] + ["_ROW_ID"]
    theirs = pypaimon.read(peer_wh, DB, name, projection=cols)
    table = FileSystemCatalog(peer_wh).get_table(f"{DB}.{name}")
    mine = TableRead(table, projection=cols).to_arrow().to_pylist()
    assert canon(mine) == canon(theirs) == canon(expected_rows())
    assert len(mine) == 120


@pytest.mark.parametrize("name", list(TABLES))
def test_read_cli_where_and_select(peer_wh: str, name: str) -> None:
    got = cli_json(peer_wh, "read", f"{DB}.{name}", "--select", "_ROW_ID,b", "--where", "b < 0 OR b >= 7000")
    want = [{"_ROW_ID": r["_ROW_ID"], "b": r["b"]} for r in expected_rows() if r["b"] < 0 or r["b"] >= 7000]
    assert canon(got) == canon(want)
    assert len(got) == 7  # every updated b; rows 5 and 80 read their newest value
    got = cli_json(peer_wh, "read", f"{DB}.{name}", "--where", "a = 'upd100'")
    assert [r["id"] for r in got] == [100]


@pytest.mark.parametrize("name", list(TABLES))
def test_inspect_table_counts_each_row_range_once(pypaimon: PyPaimon, peer_wh: str, name: str) -> None:
    props = {r["property"]: r["value"] for r in cli_json(peer_wh, "inspect", "table", f"{DB}.{name}")}
    assert props["live_rows"] == len(pypaimon.read(peer_wh, DB, name)) == 120
    assert props["total_record_count"] > 120  # the snapshot sums partial-column files too, as Java does


@pytest.mark.parametrize("name", list(TABLES))
def test_inspect_files_stats_over_write_columns(pypaimon: PyPaimon, peer_wh: str, name: str) -> None:
    mine = cli_json(peer_wh, "inspect", "files", f"{DB}.{name}")
    theirs = pypaimon.system_table(peer_wh, DB, name, "files").rows
    key = lambda r: r["file_path"].rsplit("/", 1)[-1]  # noqa: E731
    assert sorted((key(r), r["record_count"], r["first_row_id"], r["write_cols"]) for r in mine) == \
        sorted((key(r), r["record_count"], r["first_row_id"], r["write_cols"]) for r in theirs)
    partial = [r for r in mine if r["write_cols"] is not None]
    assert {tuple(r["write_cols"]) for r in partial} == {("b",), ("c", "a")}  # in update order
    if TABLES[name].get("metadata.stats-mode") != "full":
        return
    by_name = {key(r): r for r in theirs}
    for r in partial:
        peer_min = json.loads(by_name[key(r)]["min_value_stats"])
        peer_max = json.loads(by_name[key(r)]["max_value_stats"])
        for col in r["write_cols"]:  # -o json: stats are objects keyed by column
            assert str(r["min_value_stats"][col]) == str(peer_min[col]), (r, peer_min)
            assert str(r["max_value_stats"][col]) == str(peer_max[col]), (r, peer_max)
        # a column the file does not hold: every row counts as null (Java's SimpleStatsEvolution)
        assert r["null_value_counts"]["id"] == r["record_count"]


def test_compact_merges_contiguous_ranges_into_one_file_pypaimon_reads_it(pypaimon: PyPaimon, own_wh: str,
                                                                           tmp_path: Path) -> None:
    name = f"{DB}.de"
    cols = [c for c, _ in COLUMNS] + ["_ROW_ID"]
    before = cli_json(own_wh, "inspect", "files", name)
    assert len(before) == 10  # 3 appends, 7 partial-column files
    res = cli_json(own_wh, "compact", name)[0]
    assert (res["commit_kind"], res["units"], res["files_in"], res["files_out"]) == ("COMPACT", 1, 10, 1)
    (after,) = cli_json(own_wh, "inspect", "files", name)
    assert (after["first_row_id"], after["record_count"], after["write_cols"], after["file_source"]) == \
        (0, 120, None, "COMPACT")
    assert (after["min_sequence_number"], after["max_sequence_number"]) == \
        (min(r["min_sequence_number"] for r in before), max(r["max_sequence_number"] for r in before))
    want = expected_rows()
    assert canon(pypaimon.read(own_wh, DB, "de", projection=cols)) == canon(want)
    # the compacted range takes updates like any other
    cli(own_wh, "write", name, update_file(tmp_path, {"_ROW_ID": [7], "b": [-7000]}), "--columns", "b")
    want[7] = {**want[7], "b": -7000}
    assert canon(pypaimon.read(own_wh, DB, "de", projection=cols)) == canon(want)
    mine = TableRead(FileSystemCatalog(own_wh).get_table(name), projection=cols).to_arrow().to_pylist()
    assert canon(mine) == canon(want)


def test_compact_bins_only_contiguous_ranges_with_enough_files(pypaimon: PyPaimon, own_wh: str) -> None:
    """Java's planner: ranges 0..39 and 80..119 of partition x are not contiguous, and no range
    alone reaches compaction.min.file-num (5) -- nothing to do; with 2 each range compacts alone."""
    name = f"{DB}.de_part"
    res = cli_json(own_wh, "compact", name)[0]
    assert res["units"] == 0 and res["snapshot_id"] is None
    cli(own_wh, "alter", name, "--set", "compaction.min.file-num=2")
    res = cli_json(own_wh, "compact", name)[0]
    assert (res["units"], res["files_in"], res["files_out"]) == (3, 10, 3)
    files = cli_json(own_wh, "inspect", "files", name)
    assert sorted((f["partition"]["dt"], f["first_row_id"], f["record_count"]) for f in files) == \
        [("x", 0, 40), ("x", 80, 40), ("y", 40, 40)]
    cols = [c for c, _ in COLUMNS] + ["_ROW_ID"]
    assert canon(pypaimon.read(own_wh, DB, "de_part", projection=cols)) == canon(expected_rows())


def test_compact_conflicts_with_an_update_of_its_ranges(own_wh: str, tmp_path: Path) -> None:
    table = FileSystemCatalog(own_wh).get_table(f"{DB}.de")
    plan = plan_compaction(table)
    (unit,) = plan.units
    check = ranges_unchanged(table, plan.units)
    check(table.snapshot_manager.latest_snapshot())  # nothing changed: fine
    cli(own_wh, "write", f"{DB}.de", update_file(tmp_path, {"_ROW_ID": [60], "c": [1.5]}), "--columns", "c")
    with pytest.raises(CommitConflict, match="rows 0..119"):
        check(table.snapshot_manager.latest_snapshot())


@pytest.mark.parametrize("name", list(TABLES))
def test_rewrite_file_index_keeps_rows_and_ids_pypaimon_reads_them(pypaimon: PyPaimon, own_wh: str,
                                                                   name: str) -> None:
    """Each file is indexed over the columns it holds (a partial-column file over its
    ``_WRITE_COLS``), in one COMPACT snapshot that changes nothing else of any file."""
    cols = [c for c, _ in COLUMNS] + ["_ROW_ID", "_SEQUENCE_NUMBER"]
    before = pypaimon.read(own_wh, DB, name, projection=cols)
    key = lambda r: r["file_path"].rsplit("/", 1)[-1]  # noqa: E731
    meta = ("first_row_id", "record_count", "write_cols", "min_sequence_number", "max_sequence_number",
            "file_source", "level")
    files = {key(r): tuple(r[k] for k in meta) for r in cli_json(own_wh, "inspect", "files", f"{DB}.{name}")}
    cli(own_wh, "alter", f"{DB}.{name}", "--set", "file-index.bitmap.columns=a,id",
        "--set", "file-index.bloom-filter.columns=b")
    res = cli_json(own_wh, "rewrite-file-index", f"{DB}.{name}")[0]
    assert (res["files_scanned"], res["files_changed"]) == (10, 10)
    snap = FileSystemCatalog(own_wh).get_table(f"{DB}.{name}").snapshot_manager.latest_snapshot()
    assert snap is not None and snap.commit_kind == "COMPACT" and snap.next_row_id == 120
    assert {key(r): tuple(r[k] for k in meta) for r in cli_json(own_wh, "inspect", "files", f"{DB}.{name}")} == files
    indexed: dict[str, set[str]] = {}
    for r in cli_json(own_wh, "inspect", "file-indexes", f"{DB}.{name}"):
        indexed.setdefault(key(r), set()).add(r["column_name"])
        if r["index_type"] == "bitmap":
            assert r["distinct_values"] == r["record_count"]  # ids and a-values are unique per file
    for file, (_, _, write_cols, *_) in files.items():
        assert indexed[file] == ({"a", "b", "id"} & set(write_cols or ("id", "a", "b"))), file
    assert canon(pypaimon.read(own_wh, DB, name, projection=cols)) == canon(before)
    mine = TableRead(FileSystemCatalog(own_wh).get_table(f"{DB}.{name}"), projection=cols).to_arrow().to_pylist()
    assert canon(mine) == canon(before)


def test_blob_table_takes_updates_and_appends(pypaimon: PyPaimon, tmp_path: Path) -> None:
    """A table with a BLOB column: updating another column by _ROW_ID and appending rows without
    the blob (NULL) leave the .blob file in place; pypaimon reads the result (more in
    test_blob_pypaimon / test_blob_write_pypaimon)."""
    wh = str(tmp_path / "blob-wh")
    common = {"warehouse": wh, "db": DB, "table": "pics"}
    results = pypaimon.batch([{"op": "create_table", **common, "columns": [["id", "int64"], ["pic", "large_binary"]],
                               "primary_keys": [], "partition_keys": [], "options": DE},
                              {"op": "write", **common, "rows": [{"id": 1, "pic": encode_value(b"\x01\x02")}]}])
    assert all(r["ok"] for r in results), results
    cli(wh, "write", f"{DB}.pics", update_file(tmp_path, {"_ROW_ID": [0], "id": [10]}), "--columns", "id")
    cli(wh, "write", f"{DB}.pics", update_file(tmp_path, {"id": [2]}))  # an append: pic is NULL
    want = [(2, None, 1), (10, b"\x01\x02", 0)]
    rows = pypaimon.read(wh, DB, "pics", projection=["id", "pic", "_ROW_ID"])
    assert sorted((r["id"], r["pic"], r["_ROW_ID"]) for r in rows) == want
    cli(wh, "compact", f"{DB}.pics")  # two ranges, one file each: nothing to compact
    assert sorted((r["id"], r["pic"], r["_ROW_ID"]) for r in cli_json(wh, "read", f"{DB}.pics", "--select",
                                                                         "id,pic,_ROW_ID", "--blob-as", "bytes")) \
        == [(2, None, 1), (10, "0102", 0)]


# -- write --columns: update rows by _ROW_ID --------------------------------------------------


@pytest.fixture
def own_wh(peer_wh: str, tmp_path: Path) -> str:
    """A copy of the peer warehouse that a test may change."""
    wh = tmp_path / "wh"
    shutil.copytree(peer_wh, wh)
    return str(wh)


def update_file(tmp_path: Path, rows: dict[str, list[Any]]) -> str:
    path = tmp_path / "upd.parquet"
    types = {"_ROW_ID": pa.int64(), "id": pa.int64(), "a": pa.string(), "b": pa.int64(), "c": pa.float64(), "dt": pa.string()}
    pq.write_table(pa.table({k: pa.array(v, types[k]) for k, v in rows.items()}), path)
    return str(path)


@pytest.mark.parametrize("name", list(TABLES))
def test_write_columns_updates_rows_pypaimon_reads_them(pypaimon: PyPaimon, own_wh: str, tmp_path: Path,
                                                         name: str) -> None:
    table = FileSystemCatalog(own_wh).get_table(f"{DB}.{name}")
    before = table.snapshot_manager.latest_snapshot()
    assert before is not None
    ids = [0, 5, 39, 40, 100, 119]  # every range, a row updated before, both partitions
    upd = {"_ROW_ID": ids, "c": [None, 5.5, 39.5, -40.0, 100.25, 0.0], "b": [10**12 + i for i in ids]}
    res = cli_json(own_wh, "write", f"{DB}.{name}", update_file(tmp_path, upd), "--columns", "c,b")
    assert res[0]["rows"] == 6 and res[0]["files"] == 3 and res[0]["commit_kind"] == "APPEND"
    after = table.snapshot_manager.latest_snapshot()
    assert after is not None and after.id == before.id + 1  # one commit
    assert after.next_row_id == before.next_row_id  # no new rows
    want = expected_rows()
    for i, rid in enumerate(ids):
        want[rid] = {**want[rid], "c": upd["c"][i], "b": upd["b"][i]}
    cols = [c for c, _ in COLUMNS] + ["_ROW_ID"]
    assert canon(pypaimon.read(own_wh, DB, name, projection=cols)) == canon(want)
    mine = TableRead(FileSystemCatalog(own_wh).get_table(f"{DB}.{name}"), projection=cols).to_arrow().to_pylist()
    assert canon(mine) == canon(want)
    new = [r for r in cli_json(own_wh, "inspect", "files", f"{DB}.{name}") if r["min_sequence_number"] == after.id]
    assert sorted((r["first_row_id"], r["record_count"], tuple(r["write_cols"])) for r in new) == \
        [(0, 40, ("c", "b")), (40, 40, ("c", "b")), (80, 40, ("c", "b"))]
    props = {r["property"]: r["value"] for r in cli_json(own_wh, "inspect", "table", f"{DB}.{name}")}
    assert props["live_rows"] == 120


@pytest.mark.parametrize(("rows", "columns", "message"), [
    ({"_ROW_ID": [3, 120], "b": [1, 2]}, "b", "_ROW_ID 120 is not a row"),
    ({"_ROW_ID": [-1], "b": [1]}, "b", "_ROW_ID -1 is not a row"),
    ({"_ROW_ID": [7, 7], "b": [1, 2]}, "b", "_ROW_ID 7 is given more than once"),
    ({"_ROW_ID": [7], "b": [1]}, "b,nope", "unknown column(s) nope"),
    ({"_ROW_ID": [7], "dt": ["y"]}, "dt", "partition column(s) dt"),
    ({"b": [1]}, "b", "_ROW_ID"),
])
def test_write_columns_refuses_bad_updates_unchanged(own_wh: str, tmp_path: Path, rows: dict[str, list[Any]],
                                                     columns: str, message: str) -> None:
    table_dir = Path(own_wh, f"{DB}.db", "de_part")
    before = sorted(p.name for p in table_dir.rglob("*"))
    res = cli(own_wh, "write", f"{DB}.de_part", update_file(tmp_path, rows), "--columns", columns, code=4)
    assert message in res.stderr
    assert sorted(p.name for p in table_dir.rglob("*")) == before  # nothing written, nothing left behind


def test_write_columns_refused_on_other_tables_and_with_other_modes(pypaimon: PyPaimon, own_wh: str,
                                                                    tmp_path: Path) -> None:
    pypaimon.create_table(own_wh, DB, "plain", [("id", "int64"), ("b", "int64")])
    path = update_file(tmp_path, {"_ROW_ID": [0], "b": [1]})
    res = cli(own_wh, "write", f"{DB}.plain", path, "--columns", "b", code=4)
    assert "not a data-evolution table" in res.stderr
    res = cli(own_wh, "write", f"{DB}.de", path, "--columns", "b", "--overwrite", code=4)
    assert "--columns" in res.stderr


def test_update_conflicts_when_its_ranges_changed_since_it_read_them(own_wh: str, tmp_path: Path) -> None:
    """Java's data-evolution conflict check: an update computed on snapshot N must not
    overwrite a range another commit rewrote after N (it would undo that change)."""
    table = FileSystemCatalog(own_wh).get_table(f"{DB}.de")
    base = table.snapshot_manager.latest_snapshot()
    ranges = dataevo_update.table_ranges(table, base)
    mine = [r for r in ranges if r.first == 40]
    dataevo_update.check_ranges_unchanged(table, base, base, mine)  # nothing changed: fine
    cli(own_wh, "write", f"{DB}.de", update_file(tmp_path, {"_ROW_ID": [42], "b": [1]}), "--columns", "b")
    latest = table.snapshot_manager.latest_snapshot()
    with pytest.raises(CommitConflict, match="rows 40..79"):
        dataevo_update.check_ranges_unchanged(table, base, latest, mine)
    other = [r for r in ranges if r.first == 0]
    dataevo_update.check_ranges_unchanged(table, base, latest, other)  # another range: no conflict


# -- plain appends: the commit numbers new rows from nextRowId ---------------------------------


def test_appends_interleave_with_pypaimon_ids_never_collide(pypaimon: PyPaimon, own_wh: str, tmp_path: Path) -> None:
    """We append (ids from the snapshot's nextRowId, as Java's commit assigns them), pypaimon
    appends after us, both update rows of the other's ranges: every reader sees the same rows,
    ids, and sequence numbers (the newest file of a range gives its rows' sequence number)."""
    name = f"{DB}.de"
    table = FileSystemCatalog(own_wh).get_table(name)
    assert table.snapshot_manager.latest_snapshot().next_row_id == 120
    ours = _rows(120, 130, "z")
    path = tmp_path / "append.parquet"
    pq.write_table(pa.Table.from_pylist(ours, schema=pa.schema([(c, t) for c, t in COLUMNS])), path)
    res = cli_json(own_wh, "write", name, str(path))
    assert res[0]["rows"] == 10 and res[0]["commit_kind"] == "APPEND"
    theirs = _rows(130, 135, "x")
    pypaimon.write(own_wh, DB, "de", theirs)
    pypaimon.update_by_row_id(own_wh, DB, "de", ["b"], [{"_ROW_ID": 121, "b": -121}, {"_ROW_ID": 131, "b": -131}])
    cli(own_wh, "write", name, update_file(tmp_path, {"_ROW_ID": [125, 132], "c": [12.5, 13.5]}), "--columns", "c")
    assert table.snapshot_manager.latest_snapshot().next_row_id == 135

    want = {r["_ROW_ID"]: r for r in expected_rows()}
    want.update({i: {**r, "_ROW_ID": i} for i, r in enumerate(ours + theirs, start=120)})
    want[121]["b"], want[131]["b"], want[125]["c"], want[132]["c"] = -121, -131, 12.5, 13.5
    cols = [c for c, _ in COLUMNS] + ["_ROW_ID"]
    peer = pypaimon.read(own_wh, DB, "de", projection=[*cols, "_SEQUENCE_NUMBER"])
    mine = TableRead(FileSystemCatalog(own_wh).get_table(name), projection=[*cols, "_SEQUENCE_NUMBER"])
    assert canon(mine.to_arrow().to_pylist()) == canon(peer)
    assert canon([{c: r[c] for c in cols} for r in peer]) == canon(list(want.values()))
    files = {(f["first_row_id"], f["record_count"], tuple(f["write_cols"] or ())) for f in
             cli_json(own_wh, "inspect", "files", name) if f["first_row_id"] >= 120}
    assert files == {(120, 10, ()), (130, 5, ()), (120, 10, ("b",)), (130, 5, ("b",)), (120, 10, ("c",)),
                     (130, 5, ("c",))}
    got = cli_json(own_wh, "read", name, "--select", "id,_SEQUENCE_NUMBER", "--where", "_ROW_ID BETWEEN 119 AND 121")
    seq = {r["_ROW_ID"]: r["_SEQUENCE_NUMBER"] for r in peer}
    assert canon(got) == canon([{"id": i, "_SEQUENCE_NUMBER": seq[i]} for i in (119, 120, 121)])


def test_update_and_compaction_files_go_to_external_paths(pypaimon: PyPaimon, tmp_path: Path) -> None:
    """Partial-column files and the compaction's merged file land on the table's external roots
    (``_EXTERNAL_PATH`` set, nothing in the warehouse), as every other writer's files do."""
    wh = str(tmp_path / "ext-wh")
    roots = [f"file://{tmp_path}/ext{i}" for i in range(2)]
    options = {**DE, "data-file.external-paths": ",".join(roots), "data-file.external-paths.strategy": "round-robin",
               "compaction.min.file-num": "2"}
    pypaimon.create_table(wh, DB, "de_ext", COLUMNS, options=options)
    pypaimon.write(wh, DB, "de_ext", _rows(0, 10, "x"))
    pypaimon.write(wh, DB, "de_ext", _rows(10, 20, "x"))
    name = f"{DB}.de_ext"
    cli(wh, "write", name, update_file(tmp_path, {"_ROW_ID": [3, 12], "b": [-3, -12]}), "--columns", "b")
    external = tuple(r.replace("file://", "file:") + "/" for r in roots)
    files = cli_json(wh, "inspect", "files", name)
    assert len(files) == 4 and all(f["file_path"].startswith(external) for f in files)
    cols = [c for c, _ in COLUMNS] + ["_ROW_ID"]
    want = [{**r, "_ROW_ID": i, "b": -i if i in (3, 12) else r["b"]} for i, r in enumerate(_rows(0, 20, "x"))]
    assert canon(pypaimon.read(wh, DB, "de_ext", projection=cols)) == canon(want)
    res = cli_json(wh, "compact", name)[0]
    assert (res["units"], res["files_in"], res["files_out"]) == (1, 4, 1)
    (merged,) = cli_json(wh, "inspect", "files", name)
    assert merged["file_path"].startswith(external)
    assert Path(merged["file_path"].removeprefix("file:")).is_file()
    assert not list(Path(wh, f"{DB}.db", "de_ext").glob("bucket-*/*.parquet"))  # nothing in the warehouse
    assert canon(pypaimon.read(wh, DB, "de_ext", projection=cols)) == canon(want)
