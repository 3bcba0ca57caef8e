"""``data-file.path-directory`` with pypaimon 2.1 as the peer (Java 0.9 lacks the option).

pypaimon, like Java 1.0+, puts every bucket directory under ``<table>/<dir>/<partition>/`` and,
with external paths, under ``<root>/<dir>/<partition>/`` (``FileStorePathFactory
.relative_bucket_path``). (a) pypaimon writes such a table; we write, compact, expire and read it;
every file stays under the data directory and pypaimon reads our result row for row. Before the
fix we read no rows of it and our files landed in ``<table>/<partition>/bucket-N/``, where
pypaimon never looks. (b) a table we create with the option reads in pypaimon as in paimon-cli.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from tests.interop.pypaimon_peer import PyPaimon, write_op
from tests.interop.test_external_paths_pypaimon import _cli_write, _expected, _our_read, _peer_read, _rows, _run

pytestmark = pytest.mark.pypaimon

DB = "peer"
KEY = "data-file.path-directory"
COLUMNS = [["id", "int64"], ["dt", "string"], ["v", "string"]]
EXPIRE = ["--retain-min", "1", "--retain-max", "1", "--older-than", "0 ms"]


def _cli(wh: Path, *args: str) -> str:
    res = CliRunner().invoke(app, [*args, "-w", str(wh)])
    assert res.exit_code == 0, res.output
    return res.stdout


def _bucket_files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() and "/bucket-" in str(p)}


def _assert_under(table_dir: Path, data_root: Path) -> None:
    """Every bucket file of the table is under its data root, each live file exists there."""
    files = _bucket_files(table_dir)
    stray = {p for p in files if not p.is_relative_to(data_root)}
    assert not stray, f"bucket files outside {data_root}: {sorted(map(str, stray))}"
    live = json.loads(_cli(table_dir.parent.parent, "inspect", "files", f"{DB}.{table_dir.name}", "-o", "json"))
    assert live
    for row in live:
        path = Path(row["file_path"].removeprefix("file:"))
        assert path.is_relative_to(data_root) and path.is_file(), row["file_path"]


CASES = {
    "pk": {"pk": True, "options": {"bucket": "2", "changelog-producer": "input"}},
    "append": {"pk": False, "options": {"bucket": "-1"}},
    "pk-external": {"pk": True, "external": True, "options": {"bucket": "2"}},
}


@pytest.mark.parametrize("case", list(CASES))
def test_we_maintain_a_pypaimon_table_with_a_data_directory(pypaimon: PyPaimon, tmp_path: Path, case: str) -> None:
    spec = CASES[case]
    pk = bool(spec["pk"])
    wh, name = tmp_path / "wh", "t"
    table_dir = wh / f"{DB}.db" / name
    opts = {**spec["options"], KEY: "data"}  # type: ignore[dict-item]
    data_root = table_dir / "data"
    if spec.get("external"):
        opts.update({"data-file.external-paths": f"file://{tmp_path}/ext",
                     "data-file.external-paths.strategy": "round-robin"})
        data_root = tmp_path / "ext" / "data"  # Java/pypaimon: <root>/<path-directory>/<partition>/...
    peer_batches = [_rows("p1", 0, 8), _rows("p2", 4, 12)]
    _run(pypaimon, [{"op": "create_table", "warehouse": str(wh), "db": DB, "table": name, "columns": COLUMNS,
                     "primary_keys": ["dt", "id"] if pk else [], "partition_keys": ["dt"], "options": opts}]
         + [write_op(str(wh), DB, name, b) for b in peer_batches])
    peer_files = _bucket_files(table_dir) | _bucket_files(tmp_path / "ext")
    assert peer_files and all(p.is_relative_to(data_root) for p in peer_files), "pypaimon ignores the option?"
    assert _our_read(wh, name) == _expected(peer_batches, pk)

    our_batches = [_rows("c1", 10, 16), _rows("c2", 0, 3)]
    for b in our_batches:
        _cli_write(wh, name, b, tmp_path)
    if "changelog-producer" in opts:  # our changelog files go where pypaimon's went
        ours = {p for p in _bucket_files(table_dir) - peer_files if p.name.startswith("changelog-")}
        assert ours and all(p.is_relative_to(data_root) for p in ours)
    _cli(wh, "compact", f"{DB}.{name}", "--full")
    _cli(wh, "expire", f"{DB}.{name}", *EXPIRE)
    assert not (peer_files & (_bucket_files(table_dir) | _bucket_files(tmp_path / "ext"))), \
        "expire kept a pypaimon file the full compaction replaced"
    _assert_under(table_dir, data_root)
    want = _expected(peer_batches + our_batches, pk)
    assert _our_read(wh, name) == want
    assert _peer_read(pypaimon, wh, name) == want
    # and pypaimon keeps writing where we wrote
    _run(pypaimon, [write_op(str(wh), DB, name, _rows("p3", 14, 18))])
    want = _expected(peer_batches + our_batches + [_rows("p3", 14, 18)], pk)
    assert _our_read(wh, name) == want == _peer_read(pypaimon, wh, name)


@pytest.mark.parametrize("pk", [True, False], ids=["pk", "append"])
def test_pypaimon_reads_a_table_we_create_with_a_data_directory(pypaimon: PyPaimon, tmp_path: Path,
                                                                pk: bool) -> None:
    wh, name = tmp_path / "wh", "ours"
    table_dir = wh / f"{DB}.db" / name
    args = ["create", f"{DB}.{name}", "--schema", "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING",
            "--partition-by", "dt", "--option", f"{KEY}=files/v1", "--option", f"bucket={'2' if pk else '-1'}"]
    _cli(wh, *args, *(["--primary-key", "id,dt"] if pk else []))
    batches = [_rows("a", 0, 6), _rows("b", 3, 9), _rows("c", 8, 12)]
    for b in batches:
        _cli_write(wh, name, b, tmp_path)
    _cli(wh, "compact", f"{DB}.{name}")
    _assert_under(table_dir, table_dir / "files" / "v1")
    want = _expected(batches, pk)
    assert _our_read(wh, name) == want
    assert _peer_read(pypaimon, wh, name) == want
