"""migrate-table / migrate-database of Hive tables whose files are on an object store.

Why: on S3 a "rename" is a copy and a delete, so migration copies each file to its Paimon
place, commits, switches the metastore entry, and deletes the originals last; a failure before
the commit must leave the Hive table as it was, one after it must lose nothing.
Proof, end to end: a real Hive Metastore 2.3.9 that takes ``s3://`` locations (Hadoop's
ViewFileSystemOverloadScheme maps the bucket to a local directory for the metastore's own
mkdirs; see conftest ``hive_metastore_s3``) holds a partitioned Parquet Hive table whose files
are in the moto S3 server; ``migrate-table`` runs through the Hive catalog whose warehouse is
on that bucket. Our reader gives the Hive files' rows, the originals (and the staging table) are
gone from S3, the metastore entry is the Paimon table, and Java Paimon 0.9 reads the migrated
table row for row (its directory copied from moto to a local warehouse: every metadata path is
relative to the table).
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.hms_table import hms_table_kind
from tests.interop.java_harness import JavaPaimon
from tests.s3_fixtures import S3Server

from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, comparable_table, fresh_db
from .test_hive_catalog import cli, cli_json
from .test_hive_migrate import COLUMNS, _batch, _norm, _sd

pytestmark = pytest.mark.s3


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)


def _unsuffixed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: re.sub(r"-[0-9a-f-]{36}\.", ".", v) if isinstance(v, str) else v for k, v in r.items()} for r in rows]


class S3Hive:
    """A Hive database on the moto bucket, registered in the s3-capable metastore."""

    def __init__(self, server: HiveMetastoreServer, s3: S3Server, label: str) -> None:
        self.server, self.s3, self.db = server, s3, fresh_db(label)
        self.warehouse = s3.fresh_warehouse(label)
        self.prefix = self.warehouse[len(f"s3://{s3.bucket}/"):]
        self.client = s3.boto3_client()
        with client(server) as hms:
            hms.create_database(self.db, f"{self.warehouse}/{self.db}.db")

    def args(self) -> list[str]:
        return ["--catalog-option", "metastore=hive", "--catalog-option", f"uri={self.server.uri}",
                "--catalog-option", f"warehouse={self.warehouse}",
                *(a for pair in self.s3.fs_option_pairs() for a in ("--fs-option", pair))]

    def key(self, rel: str) -> str:
        return f"{self.prefix}/{self.db}.db/{rel}"

    def objects(self, rel: str = "") -> dict[str, str]:
        """key (relative to the database directory) -> ETag of every object under ``rel``."""
        out: dict[str, str] = {}
        base = self.key("")
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.s3.bucket,
                                                                          Prefix=self.key(rel)):
            out.update({o["Key"][len(base):]: o["ETag"] for o in page.get("Contents", [])})
        return out

    def make_table(self, name: str, start: int = 0) -> list[dict[str, Any]]:
        """A managed partitioned Parquet Hive table at ``<db>.db/<name>`` (two files and a
        ``_SUCCESS`` marker per partition); returns its rows."""
        from pymetastore.hive_metastore import ttypes

        location = f"{self.warehouse}/{self.db}.db/{name}"
        expected: list[dict[str, Any]] = []
        parts = []
        for p in ("2024-01-01", "2024-01-02"):
            for i in range(2):
                data = _batch(start, 7 + i)
                start += 7 + i
                buf = io.BytesIO()
                pq.write_table(data, buf, compression="gzip", use_dictionary=["name"])
                self.client.put_object(Bucket=self.s3.bucket, Key=self.key(f"{name}/dt={p}/00000{i}_0"),
                                       Body=buf.getvalue())
                expected += [{**r, "dt": p} for r in data.to_pylist()]
            self.client.put_object(Bucket=self.s3.bucket, Key=self.key(f"{name}/dt={p}/_SUCCESS"), Body=b"")
            sd = _sd("parquet", Path("/x"), COLUMNS)
            sd.location = f"{location}/dt={p}"
            parts.append(ttypes.Partition(dbName=self.db, tableName=name, values=[p], sd=sd, parameters={}))
        sd = _sd("parquet", Path("/x"), COLUMNS)
        sd.location = location
        with client(self.server) as hms:
            hms.create_table(ttypes.Table(tableName=name, dbName=self.db, owner="t", sd=sd,
                                          partitionKeys=[ttypes.FieldSchema(name="dt", type="string")],
                                          parameters={"comment": "sales"}, tableType="MANAGED_TABLE"))
            hms.add_partitions(self.db, name, parts)
        return sorted(expected, key=lambda r: r["id"])

    def hms_table(self, name: str) -> Any:
        with client(self.server) as hms:
            return hms.find_table(self.db, name)

    def download(self, rel: str, into: Path) -> None:
        for key in self.objects(rel):
            dst = into / key
            dst.parent.mkdir(parents=True, exist_ok=True)
            self.client.download_file(self.s3.bucket, self.key(key), str(dst))


def test_migrate_table_on_s3_copies_commits_then_deletes_the_originals(
        hive_metastore_s3: HiveMetastoreServer, s3_server: S3Server, java_hive: JavaPaimon, tmp_path: Path) -> None:
    hive = S3Hive(hive_metastore_s3, s3_server, "migs3")
    expected = hive.make_table("sales")
    c = hive.args()
    originals = hive.objects()
    assert hive.hms_table("sales").sd.location == f"{hive.warehouse}/{hive.db}.db/sales"

    # the dry run says every file is copied (not renamed) and where to; nothing changes
    plan = cli_json("migrate-table", f"{hive.db}.sales", "--dry-run", *c)
    assert len(plan) == 4 and {r["move"] for r in plan} == {"copy"}
    assert all(r["from"].startswith(f"{hive.warehouse}/{hive.db}.db/sales/dt=") for r in plan), plan
    assert all(f"/{hive.db}.db/sales_paimon_/dt=" in r["to"] and "/bucket-0/" in r["to"]
               and r["to"].endswith(".parquet") for r in plan), plan
    note = cli("migrate-table", f"{hive.db}.sales", "--dry-run", *c).stderr
    assert "by copying them (the originals would be deleted after the commit)" in note, note
    assert "then copied to its place" in note
    assert hive.objects() == originals

    run = cli_json("migrate-table", f"{hive.db}.sales", *c)
    assert run == plan  # the run did what the dry run said

    # the metastore entry is the Paimon table at the Hive table's place; no staging table left
    entry = hive.hms_table("sales")
    assert hms_table_kind(entry) == "paimon"
    assert entry.sd.location == f"{hive.warehouse}/{hive.db}.db/sales"
    assert hive.hms_table("sales_paimon_") is None
    assert cli_json("list", hive.db, *c) == [{"database": hive.db, "table": "sales", "type": "paimon"}]
    # the originals and markers are gone, so is the staging directory; the data files are the copies
    after = hive.objects()
    assert not set(after) & set(originals)
    assert not hive.objects("sales_paimon_")
    data = sorted(k for k in after if k.endswith(".parquet"))
    assert data == sorted(f"sales/dt={p}/bucket-0/00000{i}_0.parquet" for p in ("2024-01-01", "2024-01-02")
                          for i in range(2))
    for k in data:  # byte copies of the Hive files
        assert after[k] == originals[k.replace("/bucket-0/", "/").removesuffix(".parquet")]

    assert _norm(cli_json("read", f"{hive.db}.sales", *c)) == _norm(expected)
    local = tmp_path / "java-wh"
    hive.download("sales/", local / f"{hive.db}.db")
    assert _norm(java_hive.read(local, hive.db, "sales", row_kind=False)) == _norm(expected)


def test_migrate_database_on_s3(hive_metastore_s3: HiveMetastoreServer, s3_server: S3Server,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every table as migrate-table; each staging table's directory reaches the target's place
    snapshot files last (the hints at the very end), so the new place holds a table only once whole."""
    from paimon_cli.core.catalog import hive_migrate

    hive = S3Hive(hive_metastore_s3, s3_server, "migdbs3")
    a, b = hive.make_table("a"), hive.make_table("b")
    c = hive.args()
    copied: list[tuple[str, str]] = []
    real = hive_migrate.copy_file

    def recorded(*args: Any) -> None:
        copied.append((args[2].source, args[2].target))
        real(*args)

    monkeypatch.setattr(hive_migrate, "copy_file", recorded)
    originals = hive.objects()
    plan = cli_json("migrate-database", hive.db, "--dry-run", *c)
    assert {r["source_table"] for r in plan} == {f"{hive.db}.a", f"{hive.db}.b"} and {r["move"] for r in plan} == {
        "copy"}
    assert hive.objects() == originals
    assert cli_json("migrate-database", hive.db, *c) == plan
    assert {t["table"]: t["type"] for t in cli_json("list", hive.db, *c)} == {"a": "paimon", "b": "paimon"}
    assert not set(hive.objects()) & set(originals)
    assert _norm(cli_json("read", f"{hive.db}.a", *c)) == _norm(a)
    assert _norm(cli_json("read", f"{hive.db}.b", *c)) == _norm(b)
    for t in ("a", "b"):
        moved = [dst.split(f"/{hive.db}.db/{t}/", 1)[1] for src, dst in copied if f"/{t}_paimon_/" in src]
        kinds = ["hint" if m in ("snapshot/LATEST", "snapshot/EARLIEST") else "snapshot" if m.startswith("snapshot/")
                 else "body" for m in moved]
        assert kinds == sorted(kinds, key=["body", "snapshot", "hint"].index), moved
        assert {"schema/schema-0", "snapshot/snapshot-1", "snapshot/LATEST"} <= set(moved)
        assert sum(m.endswith(".parquet") for m in moved) == 4


def test_failure_before_the_commit_leaves_the_hive_table_as_it_was(
        hive_metastore_s3: HiveMetastoreServer, s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.catalog import hive_migrate

    hive = S3Hive(hive_metastore_s3, s3_server, "migs3fail")
    hive.make_table("t")
    c = hive.args()
    objects, entry = hive.objects(), comparable_table(hive.hms_table("t"))

    def no_commit(*_: Any) -> None:
        raise OSError("commit said no")

    monkeypatch.setattr(hive_migrate, "_commit", no_commit)
    res = cli("migrate-table", f"{hive.db}.t", *c, expect=1)
    assert "commit said no" in res.stderr
    # the Hive files and entry are as they were; the copies and the staging table are gone
    assert hive.objects() == objects
    assert comparable_table(hive.hms_table("t")) == entry
    assert hive.hms_table("t_paimon_") is None
    assert cli_json("list", hive.db, *c) == [{"database": hive.db, "table": "t", "type": "format-table"}]


def test_failed_copy_deletes_the_copies_made(hive_metastore_s3: HiveMetastoreServer, s3_server: S3Server,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.catalog import hive_migrate

    hive = S3Hive(hive_metastore_s3, s3_server, "migs3copy")
    hive.make_table("t")
    c = hive.args()
    objects, entry = hive.objects(), comparable_table(hive.hms_table("t"))
    real = hive_migrate.copy_file
    calls = {"n": 0}

    def third_fails(*args: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("copy said no")
        real(*args)

    monkeypatch.setattr(hive_migrate, "copy_file", third_fails)
    monkeypatch.setattr(hive_migrate, "map_ordered", lambda fn, items, _n, _name: [fn(x) for x in items])
    res = cli("migrate-table", f"{hive.db}.t", *c, expect=1)
    assert "copy said no" in res.stderr
    assert calls["n"] == 3
    assert hive.objects() == objects
    assert comparable_table(hive.hms_table("t")) == entry
    assert hive.hms_table("t_paimon_") is None


def test_failure_deleting_an_original_after_the_commit_loses_nothing(
        hive_metastore_s3: HiveMetastoreServer, s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.io.fileio import FileIO

    hive = S3Hive(hive_metastore_s3, s3_server, "migs3del")
    expected = hive.make_table("t")
    c = hive.args()
    originals = hive.objects()
    stuck = f"{hive.warehouse}/{hive.db}.db/t/dt=2024-01-02/000001_0"
    real = FileIO.delete

    def refuse_one(self: FileIO, path: str) -> None:
        if path == stuck:
            raise OSError("delete said no")
        real(self, path)

    monkeypatch.setattr(FileIO, "delete", refuse_one)
    res = cli("migrate-table", f"{hive.db}.t", *c, expect=6)
    assert "could not be deleted (they are no longer used)" in res.stderr and stuck in res.stderr, res.stderr
    assert hms_table_kind(hive.hms_table("t")) == "paimon"
    assert _norm(cli_json("read", f"{hive.db}.t", *c)) == _norm(expected)
    assert set(hive.objects()) & set(originals) == {"t/dt=2024-01-02/000001_0"}  # only that one is left


def test_migrate_file_on_s3_and_its_undo(hive_metastore_s3: HiveMetastoreServer, s3_server: S3Server,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """migrate-file copies into an existing Paimon table (no staging table to drop): a failed
    commit deletes every copy it made there, a run commits them and deletes the originals."""
    from paimon_cli.core.catalog import hive_migrate

    hive = S3Hive(hive_metastore_s3, s3_server, "migfiles3")
    a = hive.make_table("a")
    c = hive.args()
    cli("migrate-table", f"{hive.db}.a", *c)
    more = hive.make_table("more", start=1000)
    objects, entry = hive.objects(), comparable_table(hive.hms_table("more"))
    real = hive_migrate._commit

    def no_commit(*_: Any) -> None:
        raise OSError("commit said no")

    monkeypatch.setattr(hive_migrate, "_commit", no_commit)
    res = cli("migrate-file", f"{hive.db}.more", f"{hive.db}.a", *c, expect=1)
    assert "commit said no" in res.stderr
    assert hive.objects() == objects  # no copy left in a, the Hive files untouched
    assert comparable_table(hive.hms_table("more")) == entry
    monkeypatch.setattr(hive_migrate, "_commit", real)

    plan = cli_json("migrate-file", f"{hive.db}.more", f"{hive.db}.a", "--dry-run", *c)
    assert {r["move"] for r in plan} == {"copy"} and all(f"/{hive.db}.db/a/dt=" in r["to"] for r in plan)
    # a's files have the Hive names already: each copy gets a random suffix, in the plan and the run
    assert all(re.search(r"/00000[01]_0-[0-9a-f-]{36}\.parquet$", r["to"]) for r in plan), plan
    run = cli_json("migrate-file", f"{hive.db}.more", f"{hive.db}.a", *c)
    assert _unsuffixed(run) == _unsuffixed(plan)
    assert hive.hms_table("more") is None
    assert not hive.objects("more/")
    assert _norm(cli_json("read", f"{hive.db}.a", *c)) == _norm(a + more)


def test_hive_file_rewritten_after_the_plan_is_refused(hive_metastore_s3: HiveMetastoreServer, s3_server: S3Server,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A Hive file rewritten between the plan (its footer read) and its copy: the copy's size is
    not the planned one, the run stops before the commit (exit 4), nothing is left behind."""
    from paimon_cli.core.catalog import hive_migrate

    hive = S3Hive(hive_metastore_s3, s3_server, "migs3chg")
    hive.make_table("t")
    c = hive.args()
    entry = comparable_table(hive.hms_table("t"))
    real = hive_migrate.copy_file
    rewritten = hive.key("t/dt=2024-01-01/000001_0")

    def rewrite_then_copy(*args: Any) -> None:
        if args[2].source.endswith("dt=2024-01-01/000001_0"):  # an INSERT OVERWRITE lands meanwhile
            buf = io.BytesIO()
            pq.write_table(_batch(900, 20), buf, compression="gzip")
            hive.client.put_object(Bucket=s3_server.bucket, Key=rewritten, Body=buf.getvalue())
        real(*args)

    monkeypatch.setattr(hive_migrate, "copy_file", rewrite_then_copy)
    res = cli("migrate-table", f"{hive.db}.t", *c, expect=4)
    assert "changed since the plan" in res.stderr, res.stderr
    objects = hive.objects()
    assert sorted(objects) == sorted(f"t/dt={p}/{n}" for p in ("2024-01-01", "2024-01-02")
                                     for n in ("000000_0", "000001_0", "_SUCCESS"))
    assert comparable_table(hive.hms_table("t")) == entry and hive.hms_table("t_paimon_") is None


def test_failure_moving_the_committed_table_to_its_name_loses_nothing(
        hive_metastore_s3: HiveMetastoreServer, s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the commit the staging table's directory is copied to the target's and registered
    there; if that registration fails the run says so (exit 6), the committed staging table
    still reads, and the Hive table's files are kept."""
    from paimon_cli.core.catalog.hive import HiveCatalog

    hive = S3Hive(hive_metastore_s3, s3_server, "migs3mv")
    expected = hive.make_table("t")
    c = hive.args()
    originals = hive.objects()
    real = HiveCatalog.register_table

    def not_the_target(self: HiveCatalog, ident: Any, *args: Any) -> None:
        if ident.table == "t":
            raise OSError("metastore said no")
        real(self, ident, *args)

    monkeypatch.setattr(HiveCatalog, "register_table", not_the_target)
    res = cli("migrate-table", f"{hive.db}.t", *c, expect=6)
    assert "but moving it to" in res.stderr and "metastore said no" in res.stderr, res.stderr
    assert "the Hive table was dropped; read" in res.stderr and "t_paimon_" in res.stderr
    assert hive.hms_table("t") is None
    assert _norm(cli_json("read", f"{hive.db}.t_paimon_", *c)) == _norm(expected)
    assert set(originals) <= set(hive.objects())  # every original file and marker kept


def test_other_remote_filesystems_are_refused() -> None:
    from types import SimpleNamespace

    from paimon_cli.core.catalog.hive_migrate import _copies
    from paimon_cli.core.errors import NotYetSupported
    from paimon_cli.core.table.identifiers import Identifier

    local = SimpleNamespace(is_local=True, is_object_store=False, scheme="file")
    s3 = SimpleNamespace(is_local=False, is_object_store=True, scheme="s3")
    hdfs = SimpleNamespace(is_local=False, is_object_store=False, scheme="hdfs")
    t = Identifier("d", "t")
    assert _copies(local, local, t, "migrate-table") is False  # type: ignore[arg-type]
    assert _copies(s3, local, t, "migrate-table") is True  # type: ignore[arg-type]
    assert _copies(local, s3, t, "migrate-table") is True  # type: ignore[arg-type]
    with pytest.raises(NotYetSupported, match="hdfs:// is neither a local filesystem nor an object store"):
        _copies(hdfs, s3, t, "migrate-table")  # type: ignore[arg-type]


def test_keep_origin_on_s3_keeps_the_hive_entry_without_its_files(hive_metastore_s3: HiveMetastoreServer,
                                                                  s3_server: S3Server) -> None:
    """--target-table with --keep-origin: the Hive table stays registered (its entry unchanged)
    without its data files, as on a local filesystem; its markers stay; the target reads."""
    hive = S3Hive(hive_metastore_s3, s3_server, "migs3keep")
    expected = hive.make_table("h")
    c = hive.args()
    entry = comparable_table(hive.hms_table("h"))
    cli("migrate-table", f"{hive.db}.h", "--target-table", f"{hive.db}.p", "--keep-origin", *c)
    assert comparable_table(hive.hms_table("h")) == entry
    assert sorted(hive.objects("h/")) == ["h/dt=2024-01-01/_SUCCESS", "h/dt=2024-01-02/_SUCCESS"]
    assert hms_table_kind(hive.hms_table("p")) == "paimon" and hive.hms_table("p_paimon_") is None
    assert not hive.objects("p_paimon_")
    assert _norm(cli_json("read", f"{hive.db}.p", *c)) == _norm(expected)
