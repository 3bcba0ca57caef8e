"""Features pypaimon 2.1 writes that we refuse by name (the feature gate), on tables it wrote:
the refusal is exit 1 with one line naming the feature, nothing changes, and what we do run
(read, expire, remove-orphan-files) keeps every file pypaimon still reads — global index files
included.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.interop.cli_runner import CLI_ENV, cli, cli_json
from tests.interop.pypaimon_peer import PyPaimon

pytestmark = [pytest.mark.pypaimon, pytest.mark.slow]

DB = "feat"


@pytest.fixture(autouse=True)
def clean_cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in CLI_ENV:
        monkeypatch.delenv(var, raising=False)


def _files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def _age(root: Path, seconds: float = 3 * 86_400) -> None:
    t = time.time() - seconds
    for p in root.rglob("*"):
        os.utime(p, (t, t))


def _refused(wh: str, *args: str) -> str:
    res = cli(wh, *args, code=1)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in res.stderr, res.stderr
    return lines[0]


def test_global_index_table_from_pypaimon(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    opts = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"}
    pypaimon.create_table(wh, DB, "gi", [("id", "int64"), ("v", "string")], options=opts)
    pypaimon.write(wh, DB, "gi", [{"id": i, "v": f"v{i}"} for i in range(5)])
    pypaimon.write(wh, DB, "gi", [{"id": i, "v": f"v{i}"} for i in range(5, 8)])
    assert pypaimon.create_global_index(wh, DB, "gi", "id", "btree") >= 1
    root = Path(wh) / f"{DB}.db" / "gi"
    index_files = sorted(p.name for p in (root / "index").iterdir())
    assert index_files and all(n.startswith("btree-global-index-") for n in index_files)
    expected = sorted(pypaimon.read(wh, DB, "gi"), key=lambda r: r["id"])

    csv = tmp_path / "in.csv"
    csv.write_text("id,v\n100,x\n")
    before = _files(root)
    for args in (("write", f"{DB}.gi", str(csv)), ("compact", f"{DB}.gi"), ("rewrite-file-index", f"{DB}.gi")):
        line = _refused(wh, *args)
        assert "index kinds btree in the index manifest (Paimon 1.4+) is not supported" in line, line
    assert _files(root) == before

    _age(root)
    orphans = cli_json(wh, "remove-orphan-files", f"{DB}.gi")
    assert orphans == []
    cli(wh, "expire", f"{DB}.gi", "--retain-max", "1", "--retain-min", "1")
    assert sorted(p.name for p in (root / "index").iterdir()) == index_files
    assert sorted(pypaimon.read(wh, DB, "gi"), key=lambda r: r["id"]) == expected


def test_iceberg_table_from_pypaimon(pypaimon: PyPaimon, tmp_path: Path) -> None:
    """pypaimon writes no Iceberg metadata; what another writer left is unreadable here. Our
    first commit builds it afresh, Iceberg readers then read what we and pypaimon read, and
    orphan removal and expiry keep it consistent."""
    from pyiceberg.table import StaticTable

    wh = str(tmp_path / "wh")
    opts = {"bucket": "-1", "metadata.iceberg.storage": "table-location"}
    pypaimon.create_table(wh, DB, "ice", [("id", "int64"), ("v", "string")], options=opts)
    pypaimon.write(wh, DB, "ice", [{"id": 1, "v": "a"}])
    pypaimon.write(wh, DB, "ice", [{"id": 2, "v": "b"}])
    root = Path(wh) / f"{DB}.db" / "ice"
    meta = root / "metadata"
    meta.mkdir()
    (meta / "v2.metadata.json").write_text("{}")  # left behind by some other writer
    (meta / "version-hint.text").write_text("2")
    csv = Path(tmp_path / "in.csv")
    csv.write_text("id,v\n3,c\n")

    def iceberg_ids() -> list[int]:
        return sorted(r["id"] for r in StaticTable.from_metadata(str(root)).scan().to_arrow().to_pylist())

    cli(wh, "write", f"{DB}.ice", str(csv))
    assert iceberg_ids() == [1, 2, 3] == sorted(r["id"] for r in pypaimon.read(wh, DB, "ice"))
    cli(wh, "compact", f"{DB}.ice", "--full")
    cli(wh, "tag", "create", f"{DB}.ice", "t1")
    _age(root)
    cli(wh, "remove-orphan-files", f"{DB}.ice")
    cli(wh, "expire", f"{DB}.ice", "--retain-max", "1", "--retain-min", "1")
    assert sorted(p.name for p in meta.iterdir() if p.name.endswith(".json")) == ["v4.metadata.json"]
    rows = cli_json(wh, "inspect", "iceberg", f"{DB}.ice")
    assert [(r["snapshot_id"], r["tags"], r["paimon_snapshot"]) for r in rows] == [(4, "t1", True)]
    assert iceberg_ids() == [1, 2, 3] == sorted(r["id"] for r in pypaimon.read(wh, DB, "ice"))


def test_blob_table_from_pypaimon_refused_not_corrupt(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    opts = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"}
    pypaimon.create_table(wh, DB, "bl", [("id", "int64"), ("pic", "large_binary")], options=opts)
    pypaimon.write(wh, DB, "bl", [{"id": 1, "pic": b"hello"}, {"id": 2, "pic": None}])
    root = Path(wh) / f"{DB}.db" / "bl"
    assert any(p.suffix == ".blob" for p in root.rglob("*.blob"))
    # read, write and compact work (tests/interop/test_blob_pypaimon.py, test_blob_write_pypaimon.py)
    # and rewrite-file-index, expire-partitions (test_blob_pypaimon.py); this stays refused:
    line = _refused(wh, "remove-unexisting-files", f"{DB}.bl")
    assert "BLOB column 'pic' (Paimon 1.4+) is not supported" in line, line
    ours = cli_json(wh, "read", f"{DB}.bl", "--blob-as", "size")
    assert sorted((r["id"], r["pic"]) for r in ours) == [(1, 5), (2, None)]
    assert any(r["file_path"].endswith(".blob") for r in cli_json(wh, "inspect", "files", f"{DB}.bl"))
    _age(root)
    before = {k for k in _files(root) if k.endswith(".blob")}
    cli(wh, "remove-orphan-files", f"{DB}.bl")
    cli(wh, "expire", f"{DB}.bl", "--retain-max", "1", "--retain-min", "1")
    assert {k for k in _files(root) if k.endswith(".blob")} == before
    rows: Any = pypaimon.read(wh, DB, "bl")
    assert sorted((r["id"], r["pic"]) for r in rows) == [(1, b"hello"), (2, None)]
