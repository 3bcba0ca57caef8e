"""BLOB columns we write (Paimon 1.4+ data-evolution tables), read by pypaimon 2.1 row for row.

``write`` puts the non-blob columns in the data file and each BLOB column in ``.blob`` files of
its own, rolled at ``blob.target-file-size`` and closed with their data file; the commit gives
every ``.blob`` file its sub-range of the data file's row ids. ``write --columns`` of a BLOB
column writes a ``.blob`` file over the updated rows (placeholders for the rest), and
``compact`` merges the normal files while the ``.blob`` files stay. pypaimon reads every step
with the same bytes and ``_ROW_ID`` s as we do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from tests.interop.cli_runner import CLI_ENV, cli, cli_json
from tests.interop.pypaimon_peer import PyPaimon, decode_value, encode_value

pytestmark = pytest.mark.pypaimon

DB = "ours"
SCHEMA = "id BIGINT, dt STRING, name STRING, pic BLOB, doc BLOB"
DE = ["row-tracking.enabled=true", "data-evolution.enabled=true", "bucket=-1"]
TARGET = 300  # blob.target-file-size in bytes
BIG = 5 * TARGET  # a blob larger than the target fills a file alone


@pytest.fixture(autouse=True)
def clean_cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in CLI_ENV:
        monkeypatch.delenv(var, raising=False)


def _pic(i: int) -> bytes | None:
    if i == 7:
        return b"B" * BIG
    return None if i % 5 == 2 else bytes([i % 256]) * (i * 7 % 60)  # NULLs, an empty blob (i = 0)


def _rows(lo: int, hi: int) -> list[dict[str, Any]]:
    return [{"id": i, "dt": "x" if i % 3 else "y", "name": f"n{i}", "pic": _pic(i),
             "doc": None if i % 4 == 0 else f"doc-{i}".encode() * 5} for i in range(lo, hi)]


def _parquet(path: Path, rows: list[dict[str, Any]]) -> str:
    types = {"id": pa.int64(), "dt": pa.string(), "name": pa.string(), "pic": pa.large_binary(),
             "doc": pa.binary()}
    cols = {c: pa.array([r[c] for r in rows], t) for c, t in types.items()}
    pq.write_table(pa.table(cols), path, row_group_size=16)  # several input batches per write
    return str(path)


def canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps({k: encode_value(v) for k, v in r.items()}, sort_keys=True) for r in rows)


def _ours(wh: str, name: str, cols: list[str]) -> list[dict[str, Any]]:
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    return TableRead(table, projection=cols).to_arrow().to_pylist()


COLS = ["id", "dt", "name", "pic", "doc", "_ROW_ID"]


def _check(wh: str, name: str, want: dict[int, dict[str, Any]], seen: list[tuple[int, list[str]]]) -> None:
    """Our read now; pypaimon's read of this snapshot later (one driver run, see :func:`_peer_reads`)."""
    expected = canon([{**r, "_ROW_ID": rid} for rid, r in want.items()])
    assert canon(_ours(wh, name, COLS)) == expected
    seen.append((FileSystemCatalog(wh).get_table(f"{DB}.{name}").snapshot_manager.latest_snapshot().id, expected))


def _peer_reads(peer: PyPaimon, wh: str, name: str, seen: list[tuple[int, list[str]]]) -> None:
    ops = [{"op": "read", "warehouse": wh, "db": DB, "table": name, "snapshot_id": sid, "projection": COLS}
           for sid, _ in seen]
    results = peer.batch(ops, stop_on_error=False)
    for (sid, expected), res in zip(seen, results, strict=True):
        assert res["ok"], res["traceback"]
        types = res["result"]["types"]
        rows = [{c: decode_value(r[c], types[c]) for c in res["result"]["columns"]} for r in res["result"]["rows"]]
        assert canon(rows) == expected, f"snapshot {sid}"


def _metas(wh: str, name: str) -> list[Any]:
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    return [e.file for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())]


@pytest.mark.parametrize("partitioned", [False, True])
def test_write_update_compact_read_by_pypaimon(pypaimon: PyPaimon, tmp_path: Path, partitioned: bool) -> None:
    wh = str(tmp_path / "wh")
    name = "bp" if partitioned else "b"
    parts = ["--partition-by", "dt"] if partitioned else []
    cli(wh, "create", f"{DB}.{name}", "--schema", SCHEMA, *parts, *(a for o in DE for a in ("--option", o)),
        "--option", f"blob.target-file-size={TARGET}b")
    first, second = _rows(0, 40), _rows(40, 55)
    cli(wh, "write", f"{DB}.{name}", _parquet(tmp_path / "a.parquet", first))
    jsonl = tmp_path / "b.jsonl"  # text input: a blob is the UTF-8 bytes of the string
    jsonl.write_text("".join(json.dumps({**r, "pic": None if r["pic"] is None else r["pic"].decode("latin-1"),
                                         "doc": r["doc"] and r["doc"].decode()}) + "\n"
                             for r in second if r["pic"] is None or r["pic"].isascii()))
    second = [r for r in second if r["pic"] is None or r["pic"].isascii()]
    cli(wh, "write", f"{DB}.{name}", str(jsonl))
    ids = [r["id"] for r in first + second]
    want = {rid: r for rid, r in zip(_row_ids(wh, name, ids), first + second, strict=True)}
    seen: list[tuple[int, list[str]]] = []
    _check(wh, name, want, seen)

    metas = _metas(wh, name)
    blobs = [m for m in metas if m.file_name.endswith(".blob")]
    assert {m.write_cols for m in blobs} == {("pic",), ("doc",)}
    assert all(m.value_stats_cols == () and m.first_row_id is not None for m in blobs)
    assert all(m.write_cols == ("id", "dt", "name") for m in metas if not m.file_name.endswith(".blob"))
    big_rid = next(rid for rid, r in want.items() if r["id"] == 7)
    (big,) = [m for m in blobs if m.write_cols == ("pic",) and m.first_row_id <= big_rid < m.first_row_id + m.row_count]
    assert big.file_size > BIG and big.first_row_id + big.row_count - 1 == big_rid  # rolled right after it
    assert len([m for m in blobs if m.write_cols == ("pic",)]) > 2 * len({m.first_row_id for m in metas
                                                                           if not m.file_name.endswith(".blob")})

    changes = {ids_of(want, 3): b"new", ids_of(want, 7): None, ids_of(want, 44): b"z" * BIG}
    upd = tmp_path / "upd.parquet"
    pq.write_table(pa.table({"_ROW_ID": pa.array(list(changes), pa.int64()),
                             "pic": pa.array(list(changes.values()), pa.binary()),
                             "name": [f"u{k}" for k in changes]}), upd)
    cli(wh, "write", f"{DB}.{name}", "--columns", "pic,name", str(upd))
    for rid, pic in changes.items():
        want[rid] = {**want[rid], "pic": pic, "name": f"u{rid}"}
    _check(wh, name, want, seen)

    cli(wh, "alter", f"{DB}.{name}", "--set", "compaction.min.file-num=2")
    blob_names = sorted(m.file_name for m in _metas(wh, name) if m.file_name.endswith(".blob"))
    res = cli_json(wh, "compact", f"{DB}.{name}")
    assert res and res[0]["commit_kind"] == "COMPACT"
    assert sorted(m.file_name for m in _metas(wh, name) if m.file_name.endswith(".blob")) == blob_names
    _check(wh, name, want, seen)
    _peer_reads(pypaimon, wh, name, seen)


def _row_ids(wh: str, name: str, ids: list[int]) -> list[int]:
    """The row id each written id got (partitions are numbered one after the other)."""
    got = {r["id"]: r["_ROW_ID"] for r in _ours(wh, name, ["id", "_ROW_ID"])}
    return [got[i] for i in ids]


def ids_of(want: dict[int, dict[str, Any]], id_: int) -> int:
    return next(rid for rid, r in want.items() if r["id"] == id_)


def test_blob_files_follow_external_paths(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh, ext = str(tmp_path / "wh"), tmp_path / "ext"
    cli(wh, "create", f"{DB}.e", "--schema", SCHEMA, *(a for o in DE for a in ("--option", o)),
        "--option", f"data-file.external-paths=file://{ext}", "--option", "data-file.external-paths.strategy="
        "round-robin", "--option", f"blob.target-file-size={TARGET}b")
    rows = _rows(0, 20)
    cli(wh, "write", f"{DB}.e", _parquet(tmp_path / "a.parquet", rows))
    metas = _metas(wh, "e")
    assert all(m.external_path and str(ext) in m.external_path for m in metas)
    stems = {m.file_name.rsplit("-", 1)[0] for m in metas}
    assert len(stems) == 1  # one uuid: the data file's path factory names its blob files
    assert not list(Path(wh).rglob("*.blob")) and list(ext.rglob("*.blob"))
    seen: list[tuple[int, list[str]]] = []
    _check(wh, "e", dict(enumerate(rows)), seen)
    _peer_reads(pypaimon, wh, "e", seen)
