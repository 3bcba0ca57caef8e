"""BLOB columns (Paimon 1.4+) of data-evolution tables written by pypaimon 2.1.

pypaimon writes a BLOB column (``pa.large_binary()``) into ``.blob`` files beside each data
file, one manifest entry per file (``_WRITE_COLS`` = the column), rolled at
``blob.target-file-size``; an update by ``_ROW_ID`` of a blob column writes a ``.blob`` file over
the whole range with placeholders for the rows it leaves alone. We read the bytes row for row as
pypaimon does, show the blob files in ``inspect``, keep them through expire and orphan removal,
compact the tables (the ``.blob`` files stay, row ids are kept) and write and update rows of them;
pypaimon reads the results row for row.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.read import TableRead
from tests.interop.cli_runner import CLI_ENV, cli, cli_json
from tests.interop.pypaimon_peer import PyPaimon, encode_value

pytestmark = pytest.mark.pypaimon

DB = "peer"
DE = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
COLUMNS = [("id", "int64"), ("dt", "string"), ("name", "string"), ("pic", "large_binary"), ("doc", "large_binary")]


def _pic(i: int) -> bytes | None:
    return None if i % 5 == 2 else bytes([i % 256]) * (i * 7 % 50)  # NULLs, an empty blob (i = 0), sizes 1..49


def _rows(lo: int, hi: int, dt: str) -> list[dict[str, Any]]:
    return [{"id": i, "dt": dt, "name": f"n{i}", "pic": _pic(i),
             "doc": None if i % 3 == 0 else f"doc-{i}".encode() * 3} for i in range(lo, hi)]


APPENDS = [_rows(0, 20, "x"), _rows(20, 23, "y"), _rows(23, 30, "x")]  # one partition each: row ids in order
UPDATES: list[tuple[list[str], list[dict[str, Any]]]] = [
    (["name"], [{"_ROW_ID": r, "name": f"upd{r}"} for r in (3, 21)]),
    # rows of each append's first blob file: its sequence number is the commit's (older than the update)
    (["pic"], [{"_ROW_ID": 4, "pic": b"NEW4"}, {"_ROW_ID": 1, "pic": None}, {"_ROW_ID": 20, "pic": b""}]),
]
TABLES = {
    "blob": ({**DE, "blob.target-file-size": "200 b"}, []),  # several .blob files per data file
    "blob_part": ({**DE}, ["dt"]),
}


def canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps({k: encode_value(v) for k, v in r.items()}, sort_keys=True) for r in rows)


def expected_rows() -> list[dict[str, Any]]:
    rows = {i: {**r, "_ROW_ID": i} for i, r in enumerate(r for batch in APPENDS for r in batch)}
    for _, updates in UPDATES:
        for u in updates:
            rows[u["_ROW_ID"]].update(u)
    return [rows[i] for i in sorted(rows)]


def _ops(wh: str, name: str, options: dict[str, str], parts: list[str],
         appends: list[list[dict[str, Any]]], updates: list[tuple[list[str], list[dict[str, Any]]]],
         overwrite: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    common = {"warehouse": wh, "db": DB, "table": name}
    enc = lambda rows: [{k: encode_value(v) for k, v in r.items()} for r in rows]  # noqa: E731
    ops: list[dict[str, Any]] = [{"op": "create_table", **common, "columns": [list(c) for c in COLUMNS],
                                  "primary_keys": [], "partition_keys": parts, "options": options}]
    ops += [{"op": "write", **common, "rows": enc(rows)} for rows in appends]
    ops += [{"op": "update_by_row_id", **common, "columns": cols, "rows": enc(rows)} for cols, rows in updates]
    if overwrite is not None:
        ops.append({"op": "write", **common, "rows": enc(overwrite), "overwrite": True})
    return ops


@pytest.fixture(autouse=True)
def clean_cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in CLI_ENV:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def peer_wh(pypaimon: PyPaimon, tmp_path_factory: pytest.TempPathFactory) -> str:
    wh = str(tmp_path_factory.mktemp("peer-blob-wh"))
    ops: list[dict[str, Any]] = []
    for name, (options, parts) in TABLES.items():
        ops += _ops(wh, name, options, parts, APPENDS, UPDATES)
    # overwritten: its first two commits' data and blob files are only in old snapshots
    ops += _ops(wh, "blob_ow", {**DE, "blob.target-file-size": "200 b"}, [], APPENDS[:2], [], overwrite=APPENDS[2])
    results = pypaimon.batch(ops)
    failed = [r for r in results if not r["ok"]]
    assert not failed and len(results) == len(ops), failed[0]["traceback"] if failed else "driver stopped"
    return wh


@pytest.fixture
def own_wh(peer_wh: str, tmp_path: Path) -> str:
    """A private copy of the peer's warehouse, for commands that change it."""
    wh = tmp_path / "wh"
    shutil.copytree(peer_wh, wh)
    return str(wh)


def _ours(wh: str, name: str, cols: list[str] | None = None) -> list[dict[str, Any]]:
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    return TableRead(table, projection=cols).to_arrow().to_pylist()


def _files(wh: str, name: str) -> list[dict[str, Any]]:
    return cli_json(wh, "inspect", "files", f"{DB}.{name}")


# -- read ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(TABLES))
def test_read_matches_pypaimon_byte_for_byte(pypaimon: PyPaimon, peer_wh: str, name: str) -> None:
    cols = [c for c, _ in COLUMNS] + ["_ROW_ID"]
    theirs = pypaimon.read(peer_wh, DB, name, projection=cols)
    mine = _ours(peer_wh, name, cols)
    assert canon(mine) == canon(theirs) == canon(expected_rows())
    assert len(mine) == 30


def test_several_blob_files_per_data_file(peer_wh: str) -> None:
    files = _files(peer_wh, "blob")
    first = [f for f in files if f["file_format"] == "blob" and f["first_row_id"] < 20 and
             f["max_sequence_number"] != max(g["max_sequence_number"] for g in files)]
    assert len({f["file_path"] for f in first if f["write_cols"] == ["pic"]}) > 1  # rolled at 200 bytes


def test_read_cli_bytes_size_and_descriptor(peer_wh: str) -> None:
    want = {r["id"]: r for r in expected_rows()}
    ident = f"{DB}.blob"
    rows = cli_json(peer_wh, "read", ident, "--select", "id,pic,doc")  # machine output: the bytes, as hex
    assert {r["id"]: (r["pic"], r["doc"]) for r in rows} == \
        {i: (encode_value(w["pic"]), encode_value(w["doc"])) for i, w in want.items()}
    rows = cli_json(peer_wh, "read", ident, "--select", "id,pic", "--blob-as", "size")
    assert {r["id"]: r["pic"] for r in rows} == {i: None if w["pic"] is None else len(w["pic"])
                                                 for i, w in want.items()}
    rows = cli_json(peer_wh, "read", ident, "--select", "id,pic", "--blob-as", "descriptor")
    for r in rows:
        d = r["pic"]
        if want[r["id"]]["pic"] is None:
            assert d is None
            continue
        assert d["uri"].endswith(".blob") and d["length"] == len(want[r["id"]]["pic"])
        with open(d["uri"], "rb") as f:
            f.seek(d["offset"])
            assert f.read(d["length"]) == want[r["id"]]["pic"]
    table = cli(peer_wh, "read", ident, "--select", "id,pic", "--where", "id = 5").stdout
    assert table.split("\n")[2].split() == ["5", "35"]  # on a terminal table: the size


def test_read_where_on_blob_and_row_id(peer_wh: str) -> None:
    got = cli_json(peer_wh, "read", f"{DB}.blob_part", "--select", "_ROW_ID,name", "--where", "pic IS NULL")
    assert sorted(r["_ROW_ID"] for r in got) == sorted(r["_ROW_ID"] for r in expected_rows() if r["pic"] is None)
    got = cli_json(peer_wh, "read", f"{DB}.blob", "--where", "_ROW_ID = 4", "--blob-as", "bytes")
    assert [bytes.fromhex(r["pic"]) for r in got] == [b"NEW4"]


def test_read_to_parquet_keeps_the_bytes(peer_wh: str, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "o.parquet"
    cli(peer_wh, "read", f"{DB}.blob", "--to", str(out))
    got = pq.read_table(out).to_pylist()
    assert canon(got) == canon([{k: v for k, v in r.items() if k != "_ROW_ID"} for r in expected_rows()])


# -- inspect --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(TABLES))
def test_inspect_shows_blob_files_and_counts_rows_once(pypaimon: PyPaimon, peer_wh: str, name: str) -> None:
    mine = _files(peer_wh, name)
    theirs = pypaimon.system_table(peer_wh, DB, name, "files").rows
    key = lambda r: r["file_path"].rsplit("/", 1)[-1]  # noqa: E731
    assert sorted((key(r), r["record_count"], r["first_row_id"], r["write_cols"]) for r in mine) == \
        sorted((key(r), r["record_count"], r["first_row_id"], r["write_cols"]) for r in theirs)
    blobs = [r for r in mine if r["file_format"] == "blob"]
    assert {tuple(r["write_cols"]) for r in blobs} == {("pic",), ("doc",)}
    assert all(key(r).endswith(".blob") for r in blobs)
    props = {r["property"]: r["value"] for r in cli_json(peer_wh, "inspect", "table", f"{DB}.{name}")}
    assert props["live_rows"] == 30
    assert props["live_files"] == len(mine)


# -- maintenance ----------------------------------------------------------------------------------

def _blob_names(root: Path) -> set[str]:
    return {p.name for p in root.rglob("*.blob")}


def _live_names(wh: str, name: str) -> set[str]:
    return {r["file_path"].rsplit("/", 1)[-1] for r in _files(wh, name)}


def test_expire_deletes_superseded_blob_files_only(pypaimon: PyPaimon, own_wh: str) -> None:
    root = Path(own_wh, f"{DB}.db", "blob_ow")
    live = _live_names(own_wh, "blob_ow")
    before = _blob_names(root)
    assert before - live  # the overwrite superseded the first commits' blob files
    cli(own_wh, "expire", f"{DB}.blob_ow", "--retain-min", "1", "--retain-max", "1")
    assert _blob_names(root) == {n for n in live if n.endswith(".blob")}
    want = [{k: v for k, v in r.items() if k != "_ROW_ID"} for r in APPENDS[2]]
    assert canon(pypaimon.read(own_wh, DB, "blob_ow")) == canon(want) == canon(_ours(own_wh, "blob_ow"))


@pytest.mark.parametrize("name", list(TABLES))
def test_remove_orphans_keeps_live_blob_files(pypaimon: PyPaimon, own_wh: str, name: str) -> None:
    root = Path(own_wh, f"{DB}.db", name)
    some_blob = next(root.rglob("*.blob"))
    orphan = some_blob.parent / "data-00000000-orphan-0.blob"
    shutil.copyfile(some_blob, orphan)
    old = time.time() - 2 * 86400
    for p in root.rglob("*"):
        os.utime(p, (old, old))  # everything is old: only use protects a file
    before = _blob_names(root)
    rows = cli_json(own_wh, "remove-orphan-files", f"{DB}.{name}")
    assert [r["path"] for r in rows] == [str(orphan.relative_to(root))]
    assert _blob_names(root) == before - {orphan.name}
    cols = [c for c, _ in COLUMNS] + ["_ROW_ID"]
    assert canon(pypaimon.read(own_wh, DB, name, projection=cols)) == canon(expected_rows())


@pytest.mark.parametrize("name", list(TABLES))
def test_compact_keeps_blob_files_and_row_ids(pypaimon: PyPaimon, own_wh: str, name: str) -> None:
    """Java's data-evolution compaction: the normal files of contiguous ranges become one file
    (``_WRITE_COLS`` = the non-blob columns, row ids kept); ``.blob`` files stay as they are."""
    cli(own_wh, "alter", f"{DB}.{name}", "--set", "compaction.min.file-num=2")
    before = _files(own_wh, name)
    blobs = sorted(r["file_path"] for r in before if r["file_format"] == "blob")
    res = cli_json(own_wh, "compact", f"{DB}.{name}")
    assert res and res[0]["commit_kind"] == "COMPACT"
    after = _files(own_wh, name)
    assert sorted(r["file_path"] for r in after if r["file_format"] == "blob") == blobs
    normal = [r for r in after if r["file_format"] != "blob"]
    assert len(normal) < len([r for r in before if r["file_format"] != "blob"])
    compacted = [r for r in normal if r["file_source"] == "COMPACT"]
    assert compacted and all(r["write_cols"] == ["id", "dt", "name"] for r in compacted)
    cols = [c for c, _ in COLUMNS] + ["_ROW_ID"]
    assert canon(pypaimon.read(own_wh, DB, name, projection=cols)) == canon(expected_rows())
    assert canon(_ours(own_wh, name, cols)) == canon(expected_rows())


@pytest.mark.parametrize("name", list(TABLES))
def test_rewrite_file_index_keeps_blob_files_and_rows(pypaimon: PyPaimon, own_wh: str, name: str) -> None:
    """Each normal file is indexed over the columns it holds; ``.blob`` files get none and stay."""
    cli(own_wh, "alter", f"{DB}.{name}", "--set", "file-index.bloom-filter.columns=name")
    before = _files(own_wh, name)
    res = cli_json(own_wh, "rewrite-file-index", f"{DB}.{name}")[0]
    assert res["files_changed"] == len([r for r in before if "name" in (r["write_cols"] or ["name"])])
    after = _files(own_wh, name)
    assert sorted(r["file_path"] for r in after) == sorted(r["file_path"] for r in before)
    indexed = {r["file_path"].rsplit("/", 1)[-1] for r in cli_json(own_wh, "inspect", "file-indexes", f"{DB}.{name}")}
    assert indexed and not any(n.endswith(".blob") for n in indexed)
    cols = [c for c, _ in COLUMNS] + ["_ROW_ID"]
    assert canon(pypaimon.read(own_wh, DB, name, projection=cols)) == canon(expected_rows())
    assert canon(_ours(own_wh, name, cols)) == canon(expected_rows())


def test_expire_partitions_drops_blob_files_with_their_partition(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    old, new = _rows(0, 6, "2020-01-01"), _rows(6, 9, "2999-01-01")
    results = pypaimon.batch(_ops(wh, "dated", dict(DE), ["dt"], [old, new], []))
    assert all(r["ok"] for r in results), results
    root = Path(wh, f"{DB}.db", "dated")
    assert list((root / "dt=2020-01-01").rglob("*.blob"))
    cli(wh, "expire-partitions", f"{DB}.dated", "--expiration-time", "1d")
    cli(wh, "expire", f"{DB}.dated", "--retain-max", "1", "--retain-min", "1")
    assert not list((root / "dt=2020-01-01").rglob("*.blob"))
    want = [{k: v for k, v in r.items()} for r in new]
    assert canon(pypaimon.read(wh, DB, "dated")) == canon(want) == canon(_ours(wh, "dated"))


def test_blob_compaction_option_refused_by_name(own_wh: str) -> None:
    cli(own_wh, "alter", f"{DB}.blob", "--set", "blob-compaction.enabled=true")
    res = cli(own_wh, "compact", f"{DB}.blob", code=1)
    assert "blob-compaction.enabled=true" in res.stderr and "Traceback" not in res.stderr


def test_write_and_update_blob_tables_pypaimon_wrote(pypaimon: PyPaimon, own_wh: str, tmp_path: Path) -> None:
    """Our append and our update by ``_ROW_ID`` of a BLOB column on pypaimon's table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    new = _rows(30, 36, "y")
    src = tmp_path / "rows.parquet"
    pq.write_table(pa.table({c: pa.array([r[c] for r in new], pa.large_binary() if c in ("pic", "doc") else
                                         pa.int64() if c == "id" else pa.string()) for c, _ in COLUMNS}), src)
    cli(own_wh, "write", f"{DB}.blob", str(src))
    upd = tmp_path / "upd.parquet"
    changes = {2: b"new-2", 25: None, 33: b"x" * 300}
    pq.write_table(pa.table({"_ROW_ID": pa.array(list(changes), pa.int64()),
                             "pic": pa.array(list(changes.values()), pa.binary())}), upd)
    cli(own_wh, "write", f"{DB}.blob", "--columns", "pic", str(upd))
    want = {r["_ROW_ID"]: r for r in expected_rows()}
    want.update({30 + k: {**r, "_ROW_ID": 30 + k} for k, r in enumerate(new)})
    for rid, pic in changes.items():
        want[rid] = {**want[rid], "pic": pic}
    cols = [c for c, _ in COLUMNS] + ["_ROW_ID"]
    assert canon(pypaimon.read(own_wh, DB, "blob", projection=cols)) == canon(list(want.values()))
    assert canon(_ours(own_wh, "blob", cols)) == canon(list(want.values()))
