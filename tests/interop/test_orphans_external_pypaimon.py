"""Tables pypaimon 2.1 wrote to ``data-file.external-paths`` roots: cleaning one never touches another.

pypaimon (like Java) writes external files to ``<root>/<partition>/bucket-N/<file>``, with no
table directory, so two tables sharing a root have their live files side by side. Before
the fix, ``remove-orphan-files`` on one of them scanned the root and deleted the other's
files. Here pypaimon writes two tables sharing a root and two with roots of their own; we
plant one orphan, run our commands, and pypaimon reads every table row for row afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.external_roots import location_key
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from tests.core.test_orphans_support import age_all, file_bytes
from tests.interop.pypaimon_peer import PyPaimon, PyPaimonError, decode_value, encode_value

pytestmark = pytest.mark.pypaimon

DB = "peer"
COLUMNS = [["id", "int64"], ["dt", "string"], ["v", "string"]]
ORPHAN = "data-0a0a0a0a-1111-2222-3333-444444444444-0.parquet"
# name -> (primary keys, bucket, root under <tmp>/ext); a and b share a root
TABLES = {
    "a": ([], "-1", "shared"),
    "b": (["dt", "id"], "2", "shared"),
    "c": (["dt", "id"], "1", "own-c"),
    "d": ([], "-1", "own-d"),
}


def _rows(name: str, commit: int) -> list[dict[str, Any]]:
    return [{"id": i, "dt": f"2024-01-0{1 + i % 2}", "v": f"{name}{commit}-{i}"} for i in range(commit * 3, commit * 3 + 4)]


def _expected(name: str, batches: list[list[dict[str, Any]]]) -> list[str]:
    rows = [r for b in batches for r in b]
    if TABLES[name][0]:
        rows = list({(r["dt"], r["id"]): r for r in rows}.values())
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def _canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def _write_op(wh: str, name: str, rows: list[dict[str, Any]], overwrite: bool = False) -> dict[str, Any]:
    return {"op": "write", "warehouse": wh, "db": DB, "table": name, "overwrite": overwrite,
            "rows": [{k: encode_value(v) for k, v in r.items()} for r in rows]}


def _run(peer: PyPaimon, ops: list[dict[str, Any]]) -> list[Any]:
    results = peer.batch(ops)
    failed = [r for r in results if not r["ok"]]
    assert not failed and len(results) == len(ops), failed[0]["traceback"] if failed else "driver stopped"
    return [r["result"] for r in results]


def _peer_reads(peer: PyPaimon, wh: str, names: list[str]) -> dict[str, list[str]]:
    ops = [{"op": "read", "warehouse": wh, "db": DB, "table": n} for n in names]
    out = {}
    for n, res in zip(names, peer.batch(ops, stop_on_error=False), strict=True):
        if not res["ok"]:
            raise PyPaimonError(f"read {n}", res["error"], res["message"], res["traceback"])
        types = res["result"]["types"]
        out[n] = _canon([{c: decode_value(r[c], types[c]) for c in r} for r in res["result"]["rows"]])
    return out


def _cli(wh: str, *args: str) -> Any:
    return CliRunner().invoke(app, [*args, "-w", wh])


def _external_files(wh: str, name: str, snapshot_id: int | None = None) -> set[str]:
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    sm = table.snapshot_manager
    snap = sm.snapshot(snapshot_id) if snapshot_id is not None else sm.latest_snapshot()
    out = set()
    for e in FileStoreScan(table).plan(snap):
        assert e.file.external_path, f"{name}: pypaimon wrote {e.file.file_name} inside the table directory"
        key = location_key(e.file.external_path)  # pypaimon records Java's file:/x form
        assert key is not None and key[0] == "file"
        out.add(key[1])
    return out


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def peer_tables(pypaimon: PyPaimon, tmp_path: Path) -> dict[str, Any]:
    """pypaimon writes a, b (sharing <tmp>/ext/shared), c and d (own roots), two commits each."""
    wh, ext = tmp_path / "wh", tmp_path / "ext"
    ops: list[dict[str, Any]] = []
    batches: dict[str, list[list[dict[str, Any]]]] = {}
    for name, (pks, bucket, root) in TABLES.items():
        ops.append({"op": "create_table", "warehouse": str(wh), "db": DB, "table": name, "columns": COLUMNS,
                    "primary_keys": pks, "partition_keys": ["dt"],
                    "options": {"bucket": bucket, "data-file.external-paths": f"file://{ext}/{root}",
                                "data-file.external-paths.strategy": "round-robin"}})
        batches[name] = [_rows(name, 1), _rows(name, 2)]
        ops += [_write_op(str(wh), name, b) for b in batches[name]]
    _run(pypaimon, ops)
    assert not any(Path(wh).rglob("data-*")), "pypaimon wrote data files inside the table directories"
    shared = _external_files(str(wh), "a") | _external_files(str(wh), "b")
    assert shared and all(p.startswith(f"{ext}/shared/") for p in shared)
    assert _peer_reads(pypaimon, str(wh), list(TABLES)) == {n: _expected(n, b) for n, b in batches.items()}
    return {"wh": wh, "ext": ext, "batches": batches}


def _plant_orphan(peer_tables: dict[str, Any], root: str) -> tuple[Path, dict[str, bytes]]:
    """A copy of a live file under an unused name in ``root``; then everything is two days
    old (only use protects a file). Returns the orphan and the whole tree's bytes."""
    wh, ext = peer_tables["wh"], peer_tables["ext"]
    bucket = next((ext / root).glob("dt=*/bucket-*"))
    orphan = bucket / ORPHAN
    orphan.write_bytes(next(bucket.glob("data-*")).read_bytes())
    age_all(wh)
    age_all(ext)
    return orphan, file_bytes(wh, ext)


def test_shared_root_is_never_cleaned(pypaimon: PyPaimon, peer_tables: dict[str, Any]) -> None:
    wh, ext, batches = peer_tables["wh"], peer_tables["ext"], peer_tables["batches"]
    orphan, before = _plant_orphan(peer_tables, "shared")
    for name in ("a", "b"):
        # default: the external root is not scanned at all (before the fix this deleted the
        # other table's live files, which look like orphans of this one)
        res = _cli(str(wh), "remove-orphan-files", f"{DB}.{name}", "-o", "json")
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout) == []
        assert "not scanned: data-file.external-paths" in res.stderr
        assert file_bytes(wh, ext) == before
        # asked for: refused while another table uses the root, nothing deleted
        for extra in (["--dry-run"], []):
            res = _cli(str(wh), "remove-orphan-files", f"{DB}.{name}", "--external-paths", *extra)
            other = "b" if name == "a" else "a"
            assert res.exit_code == 6, res.output
            assert f"{DB}.{other}: data-file.external-paths in schema-0" in res.stderr
            assert file_bytes(wh, ext) == before
    assert orphan.exists()
    assert _peer_reads(pypaimon, str(wh), ["a", "b"]) == {n: _expected(n, batches[n]) for n in ("a", "b")}


def test_own_root_loses_exactly_the_planted_orphan(pypaimon: PyPaimon, peer_tables: dict[str, Any]) -> None:
    wh, ext, batches = peer_tables["wh"], peer_tables["ext"], peer_tables["batches"]
    orphan, before = _plant_orphan(peer_tables, "own-c")
    dry = _cli(str(wh), "remove-orphan-files", f"{DB}.c", "--external-paths", "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout) == [{"path": str(orphan), "kind": "data", "bytes": orphan.stat().st_size}]
    assert "no location of the 3 other tables of the warehouse overlaps them" in dry.stderr
    assert file_bytes(wh, ext) == before
    real = _cli(str(wh), "remove-orphan-files", f"{DB}.c", "--external-paths", "-o", "json")
    assert real.exit_code == 0, real.output
    assert json.loads(real.stdout) == json.loads(dry.stdout)
    assert file_bytes(wh, ext) == {p: b for p, b in before.items() if p != str(orphan)}
    assert _peer_reads(pypaimon, str(wh), list(TABLES)) == {n: _expected(n, b) for n, b in batches.items()}
    ours = TableRead(FileSystemCatalog(str(wh)).get_table(f"{DB}.c")).to_arrow().to_pylist()
    assert _canon(ours) == _expected("c", batches["c"])


def test_rollback_and_expire_delete_only_their_own_files_in_a_shared_root(
    pypaimon: PyPaimon, peer_tables: dict[str, Any]
) -> None:
    """They delete what an expired or rolled-back snapshot referenced, by its exact external path."""
    wh, ext, batches = str(peer_tables["wh"]), peer_tables["ext"], peer_tables["batches"]
    b_files = _external_files(wh, "b")
    # rollback: a's third commit goes, with exactly the files it added
    _run(pypaimon, [_write_op(wh, "a", _rows("a", 3))])
    added = _external_files(wh, "a", 3) - _external_files(wh, "a", 2)
    before = file_bytes(peer_tables["wh"], ext)
    res = _cli(wh, "rollback", f"{DB}.a", "--snapshot", "2")
    assert res.exit_code == 0, res.output
    assert set(before) - set(file_bytes(peer_tables["wh"], ext)) - {p for p in before if "/snapshot/" in p or "/manifest/" in p} == added
    # expire: an overwrite replaces every file of a; expiring down to it deletes them, b keeps all
    _run(pypaimon, [_write_op(wh, "a", _rows("a", 4), overwrite=True)])
    replaced = _external_files(wh, "a", 2)
    before = file_bytes(peer_tables["wh"], ext)
    res = _cli(wh, "expire", f"{DB}.a", "--retain-min", "1", "--retain-max", "1")
    assert res.exit_code == 0, res.output
    gone = {p for p in set(before) - set(file_bytes(peer_tables["wh"], ext)) if p.startswith(str(ext))}
    assert gone == replaced
    assert all(Path(p).exists() for p in b_files)
    reads = _peer_reads(pypaimon, wh, ["a", "b"])
    assert reads == {"a": _expected("a", [_rows("a", 4)]), "b": _expected("b", batches["b"])}
