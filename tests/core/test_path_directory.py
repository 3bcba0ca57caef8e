"""``data-file.path-directory`` (Java 1.0+, immutable): every bucket directory lives under
``<table>/<dir>/<partition>/bucket-N/`` (Java ``FileStorePathFactory.dataFilePath`` /
``relativeBucketPath``); manifests, ``index/``, ``statistics/`` and all metadata stay at the
table root.

Before the fix only orphan removal and the external-path writer knew the option: writes,
compactions, changelog and index files landed in ``<table>/<partition>/bucket-N/`` where Java
never looks (a silent wrong answer), and a table Java wrote could not be read.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.errors import InvalidInput, NotYetSupported
from paimon_cli.core.io import paths
from paimon_cli.core.operation.scan import FileStoreScan
from tests.core.test_orphans_support import age_all, files_under

KEY = "data-file.path-directory"
# what may sit directly in a table directory besides the data directory
METADATA_DIRS = {"schema", "snapshot", "manifest", "index", "statistics", "tag", "changelog", "consumer", "branch"}


def _batch(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"d{i % 2}" for i in ids],
                     "v": [f"{tag}{i}" for i in ids]})


def _expect(*batches: pa.Table, pk: bool = True) -> list[tuple[Any, ...]]:
    rows = [(r["id"], r["dt"], r["v"]) for b in batches for r in b.to_pylist()]
    if pk:
        rows = list({(i, d): (i, d, v) for i, d, v in rows}.values())
    return sorted(rows)


def _read(t: Any) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["dt"], r["v"]) for r in t.read().to_pylist())


def _assert_layout(table_dir: Path, data_dir: str) -> set[str]:
    """Nothing but metadata and ``<data_dir>`` at the table root; returns the files under it."""
    top = {p.name for p in table_dir.iterdir()}
    assert top <= METADATA_DIRS | {data_dir.split("/")[0]}, f"unexpected entries at the table root: {top}"
    assert not any("bucket-" in f for f in files_under(table_dir) if not f.startswith(data_dir + "/")), \
        "a bucket directory outside the data directory"
    return {f for f in files_under(table_dir) if f.startswith(data_dir + "/")}


def _live_paths(t: Any) -> set[str]:
    """Every data file (as ``inspect files`` shows it), its extra files and the bucket-dir index
    files the latest snapshot uses, relative to the table."""
    from paimon_cli.core.index.index_paths import index_file_path

    core = t.open()
    root = core.path.rstrip("/") + "/"
    shown = [r["file_path"] for r in t.inspect("files").to_arrow().to_pylist()]
    assert shown and all(p.startswith(core.data_root + "/") for p in shown), shown
    out = {p[len(root):] for p in shown}
    snap = core.snapshot_manager.latest_snapshot()
    scan = FileStoreScan(core)
    by_name = {Path(p).name: p[len(root):] for p in shown}
    for e in scan.plan(snap):
        out.update(str(Path(by_name[e.file.file_name]).parent / x) for x in e.file.extra_files)
    for e in scan.index_entries(snap):
        out.add(index_file_path(core, e.partition, e.bucket, e.index_file)[len(root):])
    return out


@pytest.fixture
def wh(tmp_path: Path) -> Warehouse:
    return Warehouse(str(tmp_path / "wh"))


def test_pk_table_lifecycle_keeps_every_file_under_the_data_directory(wh: Warehouse, tmp_path: Path) -> None:
    t = wh.create_table("db.t", "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING", primary_key="id,dt",
                        partition_by="dt", options={
                            "bucket": "2", KEY: "data", "changelog-producer": "input",
                            "deletion-vectors.enabled": "true", "index-file-in-data-file-dir": "true",
                            "snapshot.clean-empty-directories": "true"})
    table_dir = tmp_path / "wh" / "db.db" / "t"
    b1, b2, b3, b4 = _batch([1, 2, 3, 4], "a"), _batch([2, 5], "b"), _batch([3, 6], "c"), _batch([1, 7], "d")
    t.write(b1)
    t.create_tag("t1")
    t.write(b2)
    after_b2 = t.open().snapshot_manager.latest_snapshot_id()
    t.write(b3)
    assert _read(t) == _expect(b1, b2, b3)
    t.rollback(snapshot=after_b2)  # drops b3's data and changelog files
    assert _read(t) == _expect(b1, b2)
    t.write(b3)
    t.write(b4)
    t.compact()  # lookup compaction of a DV table: deletion vectors in the bucket directories
    t.compact(full=True)
    t.alter(set_options={"file-index.bloom-filter.columns": "v"})
    t.rewrite_file_index()
    t.write(_batch([8], "e"))
    want = _expect(b1, b2, b3, b4, _batch([8], "e"))
    assert _read(t) == want
    changelog = [f for f in files_under(table_dir) if Path(f).name.startswith("changelog-")]
    assert changelog and all(f.startswith("data/dt=d") for f in changelog)
    core = t.open()
    assert any(e.index_file.index_type == "DELETION_VECTORS"
               for s in range(1, core.snapshot_manager.latest_snapshot_id() + 1)
               for e in FileStoreScan(core).index_entries(core.snapshot_manager.snapshot(s)))
    _assert_layout(table_dir, "data")

    t.expire(retain_max=1, retain_min=1)
    t.delete_tags("t1")  # frees b1's files, which the tag kept alive
    assert _read(t) == want
    on_disk = _assert_layout(table_dir, "data")
    assert on_disk == _live_paths(t), "expire / tag deletion left (or deleted wrong) files"
    assert not any(p.name.startswith("bucket-") for p in (table_dir / "data").glob("dt=*/*") if not any(p.iterdir()))

    stray = table_dir / "data" / "dt=d0" / "bucket-0" / "data-00000000-0000-0000-0000-000000000000-0.parquet"
    stray.write_bytes(b"orphan")
    age_all(table_dir)
    report = t.remove_orphan_files(older_than="1d")
    assert [Path(f.path).name for f in report.result.deleted] == [stray.name]
    assert _read(t) == want


def test_append_table_with_a_nested_directory(wh: Warehouse, tmp_path: Path) -> None:
    t = wh.create_table("db.a", "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING", partition_by="dt",
                        options={"bucket": "-1", KEY: "lake//files/", "compaction.min.file-num": "2",
                                 "snapshot.clean-empty-directories": "true"})
    table_dir = tmp_path / "wh" / "db.db" / "a"
    batches = [_batch([i, i + 10], f"x{i}") for i in range(4)]
    for b in batches:
        t.write(b, expire=False)
    t.compact(full=True)
    t.expire(retain_max=1, retain_min=1)
    assert _read(t) == _expect(*batches, pk=False)
    assert t.open().data_root == str(table_dir / "lake" / "files")
    assert _assert_layout(table_dir, "lake/files") == _live_paths(t)


def test_table_without_the_option_is_unchanged(wh: Warehouse, tmp_path: Path) -> None:
    t = wh.create_table("db.p", "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING", partition_by="dt")
    t.write(_batch([1, 2], "a"))
    assert t.open().data_root == str(tmp_path / "wh" / "db.db" / "p")
    assert {f.split("/")[0] for f in files_under(tmp_path / "wh" / "db.db" / "p")} >= {"dt=d0", "dt=d1"}


@pytest.mark.parametrize(("value", "error"), [
    ("", InvalidInput), ("/abs", NotYetSupported), ("s3://b/x", NotYetSupported), ("../up", NotYetSupported),
    ("a/./b", NotYetSupported), ("a\\b", NotYetSupported), ("//", NotYetSupported),
])
def test_directories_outside_the_table_are_refused(wh: Warehouse, tmp_path: Path, value: str, error: type) -> None:
    with pytest.raises(error, match=KEY):
        wh.create_table("db.bad", "id INT", options={KEY: value})
    assert not (tmp_path / "wh" / "db.db" / "bad").exists()


def test_path_directory_normalisation() -> None:
    assert paths.path_directory(None) == ""
    assert paths.path_directory("data/") == "data"
    assert paths.path_directory("a//b") == "a/b"
    assert paths.data_root("/wh/db.db/t", "data") == "/wh/db.db/t/data"
    assert paths.data_root("s3://b/wh/db.db/t", None) == "s3://b/wh/db.db/t"
    assert paths.relative_bucket_path("data", "dt=1", -2) == "data/dt=1/bucket-postpone"
    assert paths.relative_bucket_path(None, "", 0) == "bucket-0"


def test_option_is_immutable_once_the_table_has_data(wh: Warehouse) -> None:
    t = wh.create_table("db.i", "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING", options={KEY: "data"})
    t.alter(set_options={KEY: "files"})  # no snapshot yet: Java allows it, nothing is misplaced
    t.write(_batch([1], "a"))
    assert t.open().data_root.endswith("/db.db/i/files")
    for change in ({"set_options": {KEY: "other"}}, {"unset": KEY}):
        with pytest.raises(InvalidInput, match=KEY):
            t.alter(**change)
    with pytest.raises(InvalidInput, match=KEY):  # per job: files would land where readers never look
        t.write(_batch([2], "b"), options={KEY: "other"})
    with pytest.raises(InvalidInput, match=KEY):
        t.open().copy({KEY: "other"})
    assert _read(t) == [(1, "d1", "a1")]


BUCKET_HELPERS = {"bucket_path", "data_file_path", "aligned_path", "data_file_dir"}


def test_bucket_paths_are_derived_from_the_data_root_only() -> None:
    """Guard: no code of ``core`` hands a table path (``x.path`` / ``table_path``) to a bucket
    path helper; they take the table's data root (``FileStoreTable.data_root``)."""
    core = Path(paths.__file__).resolve().parents[1]
    offenders = []
    for f in core.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            first = ast.unparse(node.args[0])
            if name in BUCKET_HELPERS and (first.endswith(".path") or first.endswith("table_path")):
                offenders.append(f"{f.relative_to(core)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not offenders, offenders

