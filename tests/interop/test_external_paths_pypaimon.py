"""``data-file.external-paths`` with pypaimon 2.1 as the peer.

(a) pypaimon writes tables to external roots; we write more rows and compact: every new file
(data, changelog) is under the roots -- none in the warehouse -- and pypaimon reads our result
row for row. Before the fix our files landed in the table directory, so a compaction moved
the table out of the storage its owners chose.
(b) tables we create with each strategy read in pypaimon exactly as we read them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.io.external_paths import entropy_dirs, java_path
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from tests.interop.pypaimon_peer import PyPaimon, PyPaimonError, decode_value, encode_value

pytestmark = pytest.mark.pypaimon

DB = "peer"
COLUMNS = [["id", "int64"], ["dt", "string"], ["v", "string"]]
EXT = "data-file.external-paths"
STRATEGY = "data-file.external-paths.strategy"


def _rows(tag: str, lo: int, hi: int) -> list[dict[str, Any]]:
    return [{"id": i, "dt": f"2024-01-0{1 + i % 2}", "v": f"{tag}-{i}"} for i in range(lo, hi)]


def _expected(batches: list[list[dict[str, Any]]], pk: bool) -> list[str]:
    rows = [r for b in batches for r in b]
    if pk:
        rows = list({(r["dt"], r["id"]): r for r in rows}.values())
    return _canon(rows)


def _canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def _run(peer: PyPaimon, ops: list[dict[str, Any]]) -> None:
    results = peer.batch(ops)
    failed = [r for r in results if not r["ok"]]
    assert not failed and len(results) == len(ops), failed[0]["traceback"] if failed else "driver stopped"


def _peer_read(peer: PyPaimon, wh: Path, name: str) -> list[str]:
    (res,) = peer.batch([{"op": "read", "warehouse": str(wh), "db": DB, "table": name}], stop_on_error=False)
    if not res["ok"]:
        raise PyPaimonError(f"read {name}", res["error"], res["message"], res["traceback"])
    types = res["result"]["types"]
    return _canon([{c: decode_value(r[c], types[c]) for c in r} for r in res["result"]["rows"]])


def _our_read(wh: Path, name: str) -> list[str]:
    table = FileSystemCatalog(str(wh)).get_table(f"{DB}.{name}")
    return _canon(TableRead(table).to_arrow().to_pylist())


def _cli(wh: Path, *args: str) -> None:
    res = CliRunner().invoke(app, [*args, "-w", str(wh)])
    assert res.exit_code == 0, res.output


def _cli_write(wh: Path, name: str, rows: list[dict[str, Any]], tmp: Path) -> None:
    src = tmp / f"{name}-{rows[0]['v']}.csv"
    src.write_text("id,dt,v\n" + "".join(f"{r['id']},{r['dt']},{r['v']}\n" for r in rows))
    _cli(wh, "write", f"{DB}.{name}", str(src))


def _live(wh: Path, name: str) -> tuple[list[Any], list[Any]]:
    """(data files, changelog files of every snapshot) of the table's latest snapshot."""
    table = FileSystemCatalog(str(wh)).get_table(f"{DB}.{name}")
    sm = table.snapshot_manager
    scan = FileStoreScan(table)
    changelog = []
    for sid in range(sm.earliest_snapshot_id() or 1, (sm.latest_snapshot_id() or 0) + 1):
        changelog += [e.file for e in scan.changelog(sm.snapshot(sid))]
    return [e.file for e in scan.plan(sm.latest_snapshot())], changelog


def _assert_external(wh: Path, roots: list[str], files: list[Any]) -> None:
    prefixes = tuple(java_path(r) + "/" for r in roots)
    assert files
    for f in files:
        assert f.external_path and f.external_path.startswith(prefixes), (f.file_name, f.external_path)
        assert f.external_path.endswith("/" + f.file_name)
        assert Path(f.external_path[len("file:"):]).is_file()
    stray = [p for p in wh.rglob("*") if p.is_file() and "/bucket-" in str(p)]
    assert not stray, f"files in the warehouse bucket directories: {stray}"


@pytest.mark.parametrize("pk", [True, False], ids=["pk", "append"])
def test_we_extend_and_compact_a_pypaimon_external_table(pypaimon: PyPaimon, tmp_path: Path, pk: bool) -> None:
    wh = tmp_path / "wh"
    roots = [f"file://{tmp_path}/ext-a", f"file://{tmp_path}/ext-b"]
    name = "t"
    opts = {"bucket": "2" if pk else "-1", EXT: ",".join(roots), STRATEGY: "round-robin"}
    if pk:
        opts["changelog-producer"] = "input"
    peer_batches = [_rows("p1", 0, 8), _rows("p2", 4, 12)]
    _run(pypaimon, [{"op": "create_table", "warehouse": str(wh), "db": DB, "table": name, "columns": COLUMNS,
                     "primary_keys": ["dt", "id"] if pk else [], "partition_keys": ["dt"], "options": opts}]
         + [{"op": "write", "warehouse": str(wh), "db": DB, "table": name, "overwrite": False,
             "rows": [{k: encode_value(v) for k, v in r.items()} for r in b]} for b in peer_batches])
    peer_files, _ = _live(wh, name)
    _assert_external(wh, roots, peer_files)

    our_batches = [_rows("c1", 10, 16), _rows("c2", 0, 3)]
    for b in our_batches:
        _cli_write(wh, name, b, tmp_path)
    _cli(wh, "compact", f"{DB}.{name}", "--full")

    files, changelog = _live(wh, name)
    old = {f.file_name for f in peer_files}
    assert not {f.file_name for f in files} & old, "the full compaction left a pypaimon file in place"
    _assert_external(wh, roots, files + changelog)
    if pk:
        assert any(f.file_name.startswith("changelog-") for f in changelog)
    want = _expected(peer_batches + our_batches, pk)
    assert _our_read(wh, name) == want
    assert _peer_read(pypaimon, wh, name) == want


STRATEGIES = {
    "round-robin": {STRATEGY: "round-robin"},
    "specific-fs": {STRATEGY: "specific-fs", "data-file.external-paths.specific-fs": "file"},
    "weight-robin": {STRATEGY: "weight-robin", "data-file.external-paths.weights": "1,3"},
    "entropy-inject": {STRATEGY: "entropy-inject"},
}


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_pypaimon_reads_our_external_table(pypaimon: PyPaimon, tmp_path: Path, strategy: str) -> None:
    wh = tmp_path / "wh"
    roots = [f"file://{tmp_path}/ext-a", f"file://{tmp_path}/ext-b"]
    listed = roots + (["s3://elsewhere/ext"] if strategy == "specific-fs" else [])  # not ours: skipped
    options = [f"{k}={v}" for k, v in {"bucket": "2", EXT: ",".join(listed), **STRATEGIES[strategy]}.items()]
    _cli(wh, "create", f"{DB}.t", "--schema", "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING",
         "--primary-key", "dt,id", "--partition-by", "dt", *[a for o in options for a in ("--option", o)])
    batches = [_rows("a", 0, 20), _rows("b", 10, 30), _rows("c", 25, 40)]
    for b in batches:
        _cli_write(wh, "t", b, tmp_path)
    before_compact, _ = _live(wh, "t")
    _cli(wh, "compact", f"{DB}.t", "--full")
    files, _ = _live(wh, "t")
    _assert_external(wh, roots, before_compact + files)
    if strategy == "entropy-inject":
        assert all(f"/bucket-{n}/{entropy_dirs(f.file_name)}/" in f.external_path
                   for f in files for n in (0, 1) if f"/bucket-{n}/" in f.external_path)
    want = _expected(batches, pk=True)
    assert _our_read(wh, "t") == want
    assert _peer_read(pypaimon, wh, "t") == want


def test_entropy_dirs_match_pypaimon(pypaimon: PyPaimon) -> None:
    """Our murmur3 directories are pypaimon's (its port of Java's Guava hash), name for name."""
    names = ["data-0f1e2d3c-aaaa-bbbb-cccc-000000000000-0.parquet", "changelog-x-17.orc", "a", "", "ü-名.avro"]
    script = ("import json, sys\n"
              "from pypaimon.common.external_path_provider import EntropyInjectExternalPathProvider as E\n"
              "p = E(['file:/x'], '')\n"
              "print(json.dumps([p._compute_hash(n) for n in json.loads(sys.stdin.read())]))\n")
    out = subprocess.run([pypaimon.python, "-c", script], input=json.dumps(names), capture_output=True,
                         text=True, check=True, timeout=120)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [entropy_dirs(n) for n in names]
