"""The library API (``paimon_cli.core.api``) against real tables: every verb gives what its
command prints for the same operation.

Read-only operations and dry runs run through the API and the CLI on the same warehouse;
operations that change a table run on two copies of one warehouse (same files, same names),
the API on one and the CLI on the other, and the rows (without timings) must be equal.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.api import Table, Warehouse
from paimon_cli.core.errors import AlreadyExists, InvalidInput, NotFound, NotYetSupported, UnsafeRefused
from paimon_cli.output import render_json

COLUMNS = "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING, n INT"
DAY = 86_400


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    return CliRunner()


def data(ids: list[int], dt_: str = "2024-05-01", v: str = "x") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [dt_] * len(ids), "v": [f"{v}{i}" for i in ids],
                     "n": pa.array(ids, pa.int32())})


def age(root: str | Path, seconds: int = 2 * DAY) -> None:
    """Every file and folder under ``root`` last modified ``seconds`` ago (old enough for orphan removal)."""
    then = time.time() - seconds
    for d, _, files in os.walk(root):
        for f in files:
            os.utime(os.path.join(d, f), (then, then))
        os.utime(d, (then, then))


@pytest.fixture
def wh(tmp_path: Path) -> Warehouse:
    """db.pk (primary key, 2 partitions, 2 buckets: three commits) and db.log (append, one)."""
    w = Warehouse(str(tmp_path / "wh"))
    pk = w.create_table("db.pk", COLUMNS, primary_key="id,dt", partition_by="dt", options={"bucket": "2"})
    pk.write(data([1, 2, 3]))
    pk.write(data([2, 3, 4], "2024-05-02", "y"))
    pk.write(data([1, 5]))
    w.create_table("db.log", "id BIGINT, dt STRING, v STRING, n INT").write(data([7, 8]))
    return w


def twin(w: Warehouse, tmp_path: Path, name: str) -> Warehouse:
    """A copy of the warehouse: the same files under the same names (and modification times)."""
    dst = tmp_path / name
    shutil.copytree(w.path, dst)
    return Warehouse(str(dst))


def cli(runner: CliRunner, w: Warehouse, *args: str) -> Any:
    res = runner.invoke(app, [*args, "-w", w.path])
    assert res.exit_code == 0, res.output
    return res


def cli_json(runner: CliRunner, w: Warehouse, *args: str) -> Any:
    return json.loads(cli(runner, w, *args, "-o", "json").stdout)


def as_json(rows: Any) -> Any:
    """What ``-o json`` prints for the API's rows."""
    out = io.StringIO()
    render_json(rows, out)
    return json.loads(out.getvalue())


def timeless(records: list[dict[str, Any]], *keys: str) -> list[dict[str, Any]]:
    drop = {"seconds", *keys}
    return [{k: v for k, v in r.items() if k not in drop} for r in records]


# -- package surface --------------------------------------------------------------------------------


def test_paimon_cli_exposes_the_api_lazily() -> None:
    code = ("import sys, paimon_cli; light = 'paimon_cli.core.api' not in sys.modules and 'pyarrow' not in "
            "sys.modules; from paimon_cli import Warehouse, Table; print(light, Warehouse.__name__, Table.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "Warehouse", "Table"]
    import paimon_cli

    assert paimon_cli.Warehouse is Warehouse and paimon_cli.Table is Table
    with pytest.raises(AttributeError):
        paimon_cli.Nope  # noqa: B018


def test_names_are_checked_when_the_handle_is_made(tmp_path: Path) -> None:
    w = Warehouse(str(tmp_path / "nowhere"))
    with pytest.raises(InvalidInput, match="no '.'"):
        w.table("nodot")
    with pytest.raises(InvalidInput, match="pure number"):
        w.table("db.t", branch="42")
    t = w.table("db.t", branch="MAIN")
    assert (t.name, t.branch) == ("db.t", None)  # main in any case is the main branch
    with pytest.raises(NotFound):  # nothing is read until a verb runs
        t.read()


# -- catalog ----------------------------------------------------------------------------------------


def test_create_and_alter_give_the_schemas_the_cli_gives(runner: CliRunner, tmp_path: Path) -> None:
    a, b = Warehouse(str(tmp_path / "a")), Warehouse(str(tmp_path / "b"))
    t = a.create_table("db.t", COLUMNS, primary_key=["id", "dt"], partition_by=["dt"],
                       options={"bucket": "2"}, comment="orders")
    cli(runner, b, "create", "db.t", "--schema", COLUMNS, "--primary-key", "id,dt", "--partition-by", "dt",
        "--option", "bucket=2", "--comment", "orders")
    assert t.alter(set_options={"snapshot.num-retained.max": "50"}, add_columns="note STRING",
                   rename_columns={"v": "value"}) == 1
    cli(runner, b, "alter", "db.t", "--set", "snapshot.num-retained.max=50", "--add-column", "note STRING",
        "--rename-column", "v:value")
    assert timeless(as_json(t.inspect("schemas")), "update_time") == timeless(
        cli_json(runner, b, "inspect", "schemas", "db.t"), "update_time")
    assert a.create_table("db.t", "x INT", if_not_exists=True).name == "db.t"
    with pytest.raises(AlreadyExists):
        a.create_table("db.t", "x INT")
    with pytest.raises(InvalidInput, match="nothing to change"):
        t.alter()


def test_create_from_a_schema_file(tmp_path: Path) -> None:
    spec = {"fields": [{"id": 5, "name": "k", "type": "INT NOT NULL"}, {"id": 9, "name": "s", "type": "STRING"}],
            "primaryKeys": ["k"], "options": {"bucket": "1"}}
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(spec))
    t = Warehouse(str(tmp_path / "wh")).create_table("db.s", f"@{path}")
    (row,) = t.inspect("schemas").rows
    assert json.loads(row["fields"])[0]["id"] == 0 and row["primary_keys"] == '["k"]'


def test_list_and_catalog_inspection_match_the_cli(runner: CliRunner, wh: Warehouse) -> None:
    assert wh.list_databases() == [r["database"] for r in cli_json(runner, wh, "list")]
    assert wh.list_tables("db") == [r["table"] for r in cli_json(runner, wh, "list", "db")] == ["log", "pk"]
    for kind in ("all-table-options", "catalog-options"):
        assert as_json(wh.inspect(kind)) == cli_json(runner, wh, "inspect", kind)
    with pytest.raises(InvalidInput, match="about a table"):
        wh.inspect("snapshots")
    with pytest.raises(NotFound):
        wh.list_tables("nodb")


# -- write ------------------------------------------------------------------------------------------


def test_write_arrow_equals_cli_write_of_the_same_rows(runner: CliRunner, wh: Warehouse, tmp_path: Path) -> None:
    other = twin(wh, tmp_path, "cli")
    batch = data([3, 9, 10], v="z")
    pq.write_table(batch, tmp_path / "in.parquet")
    got = wh.table("db.pk").write(batch)
    (expected,) = cli_json(runner, other, "write", "db.pk", str(tmp_path / "in.parquet"))
    (row,) = as_json(got.rows())
    assert timeless([row]) == timeless([expected]) and row["snapshot_id"] == got.snapshot_id == 4
    assert wh.table("db.pk").read().sort_by("id").to_pylist() == other.table("db.pk").read().sort_by("id").to_pylist()


def test_write_takes_paths_batches_and_readers(wh: Warehouse, tmp_path: Path) -> None:
    t = wh.table("db.log")
    path = tmp_path / "in.parquet"
    pq.write_table(data([1]), path)
    t.write(path)  # a PathLike
    t.write([str(path)], write_only=True)
    t.write(data([2, 3]).to_batches()[0])
    t.write(iter([data([4]), data([5]).to_batches()[0]]))  # tables and batches of one schema
    t.write(pa.RecordBatchReader.from_batches(data([6]).schema, data([6]).to_batches()))
    ids = sorted(t.read(columns="id")["id"].to_pylist())
    assert ids == [1, 1, 2, 3, 4, 5, 6, 7, 8]
    assert [r["commit_kind"] for r in t.inspect("snapshots").rows][-5:] == ["APPEND"] * 5


def test_write_overwrites_one_partition(wh: Warehouse) -> None:
    t = wh.table("db.pk")
    r = t.write(data([42], "2024-05-02"), overwrite=True, partition={"dt": "2024-05-02"})
    assert r.result.snapshot is not None and r.result.snapshot.commit_kind == "OVERWRITE"
    assert sorted(t.read(where="dt = '2024-05-02'")["id"].to_pylist()) == [42]
    with pytest.raises(InvalidInput, match="only valid with --overwrite"):
        t.write(data([1]), partition=["dt=2024-05-01"])


def test_bad_arrow_data_is_refused_with_its_row(wh: Warehouse) -> None:
    t = wh.table("db.pk")
    bad = pa.table({"id": pa.array([1, None], pa.int64()), "dt": ["a", "b"]})
    with pytest.raises(InvalidInput, match=r"^-: row 2, column 'id': NULL in primary-key column"):
        t.write(bad)
    with pytest.raises(InvalidInput, match="different schemas"):
        t.write([data([1]).to_batches()[0], pa.record_batch({"x": [1]})])
    with pytest.raises(InvalidInput, match="empty"):
        t.write(iter([]))
    with pytest.raises(InvalidInput, match="format 'csv' given for Arrow data"):
        t.write(data([1]), format="csv")
    assert len(t.inspect("snapshots").rows) == 3  # nothing committed


# -- read -------------------------------------------------------------------------------------------


def test_read_equals_cli_read(runner: CliRunner, wh: Warehouse) -> None:
    t = wh.table("db.pk")
    got = t.read(columns="id,v", where="id >= 2", limit=10)
    cli_rows = [json.loads(x) for x in cli(runner, wh, "read", "db.pk", "--select", "id,v", "--where", "id >= 2",
                                           "--limit", "10", "-o", "jsonl").stdout.splitlines()]
    assert got.to_pylist() == cli_rows and got.num_rows == 6
    old = t.read(snapshot=1)
    assert sorted(old["id"].to_pylist()) == sorted(
        r["id"] for r in cli_json(runner, wh, "read", "db.pk", "--snapshot", "1")) == [1, 2, 3]
    batches = t.reader(where="dt = '2024-05-02'").batches()
    assert sum(b.num_rows for b in batches) == 3


def test_reader_explain_equals_cli_explain(runner: CliRunner, wh: Warehouse) -> None:
    reader = wh.table("db.pk").reader(where="dt = '2024-05-01' AND id = 1")
    assert as_json(reader.explain()) == cli_json(runner, wh, "read", "db.pk", "--where", "dt = '2024-05-01' AND id = 1",
                                                 "--explain")
    assert reader.describe() == "db.pk at snapshot 3 where dt = '2024-05-01' AND id = 1"
    assert reader.schema.names == ["id", "dt", "v", "n"]


def test_read_refusals(wh: Warehouse) -> None:
    t = wh.table("db.pk")
    with pytest.raises(InvalidInput, match="empty column name"):
        t.read(columns="id,,v")
    with pytest.raises(InvalidInput, match="--timestamp 'soon'"):
        t.read(timestamp="soon")
    with pytest.raises(InvalidInput, match="only one"):
        t.read(snapshot=1, tag="x")
    with pytest.raises(NotFound):
        t.read(tag="missing")
    assert t.read(timestamp=dt.datetime.now()).num_rows == 7


# -- inspect ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["snapshots", "schemas", "options", "files", "manifests", "partitions", "buckets",
                                  "tags", "branches", "consumers", "table-indexes", "statistics", "audit-log",
                                  "binlog", "ro", "table", "expiry"])
def test_inspect_equals_cli_inspect(runner: CliRunner, wh: Warehouse, kind: str) -> None:
    rows = wh.table("db.pk").inspect(kind)
    assert as_json(rows) == cli_json(runner, wh, "inspect", kind, "db.pk")
    arrow = rows.to_arrow()
    assert arrow.column_names == rows.columns and arrow.num_rows == len(rows.rows)


def test_inspect_time_travel_and_unknown_kinds(runner: CliRunner, wh: Warehouse) -> None:
    t = wh.table("db.pk")
    assert as_json(t.inspect("files", snapshot=1)) == cli_json(runner, wh, "inspect", "files", "db.pk",
                                                               "--snapshot", "1")
    with pytest.raises(InvalidInput, match="about the warehouse"):
        t.inspect("catalog-options")
    with pytest.raises(NotYetSupported, match="inspect bogus"):
        t.inspect("bogus")


# -- compaction and rewrites ------------------------------------------------------------------------


def test_compact_plan_and_run_equal_the_cli(runner: CliRunner, wh: Warehouse, tmp_path: Path) -> None:
    other = twin(wh, tmp_path, "cli")
    t = wh.table("db.pk")
    plan = t.compact(full=True, plan=True)
    assert as_json(plan.rows()) == cli_json(runner, wh, "compact", "db.pk", "--full", "--plan") != []
    assert plan.snapshot_id is None and len(t.inspect("snapshots").rows) == 3
    seen: list[tuple[str, int, int]] = []
    done = t.compact(full=True, progress=lambda event, unit, n, total: seen.append((event, n, total)))
    res = cli(runner, other, "compact", "db.pk", "--full", "-o", "json")
    assert timeless(as_json(done.rows())) == timeless(json.loads(res.stdout))
    assert done.snapshot_id == 4 and done.notes() == [line for line in res.stderr.splitlines()]
    assert seen and seen[-1][1] == seen[-1][2]


def test_compact_budget_and_sort_arguments(wh: Warehouse) -> None:
    t = wh.table("db.log")
    t.write(data([9]))
    r = t.compact(order_strategy="zorder", order_by=["id", "n"], engine="LOCAL")
    assert r.snapshot_id == 3 and sorted(t.read()["id"].to_pylist()) == [7, 8, 9]
    assert wh.table("db.pk").compact(full=True, max_bytes="1gb", max_buckets=1).result.units == 1
    with pytest.raises(InvalidInput, match="--max-bytes"):
        t.compact(max_bytes="lots")
    with pytest.raises(InvalidInput, match="--spark-conf"):
        t.compact(spark_conf=["novalue"])


def test_rescale_equals_the_cli(runner: CliRunner, wh: Warehouse, tmp_path: Path) -> None:
    t = wh.table("db.pk")
    dry = t.rescale(bucket_num=3, dry_run=True)
    res = cli(runner, wh, "rescale", "db.pk", "--bucket-num", "3", "--dry-run", "-o", "json")
    assert as_json(dry.rows()) == json.loads(res.stdout) and len(dry.rows().rows) == 2
    assert f"rescale: {dry.summary()}" == res.stderr.strip()
    other = twin(wh, tmp_path, "cli")
    done = t.rescale(bucket_num=3)
    assert timeless(as_json(done.rows())) == timeless(cli_json(runner, other, "rescale", "db.pk", "--bucket-num", "3"))
    assert done.snapshot_id == 4


def test_rewrite_file_index_equals_the_cli(runner: CliRunner, wh: Warehouse, tmp_path: Path) -> None:
    t = wh.table("db.pk")
    t.alter(set_options={"file-index.bloom-filter.columns": "v"})
    dry = t.rewrite_file_index(dry_run=True)
    res = cli(runner, wh, "rewrite-file-index", "db.pk", "--dry-run", "-o", "json")
    assert as_json(dry.rows()) == json.loads(res.stdout) != []
    assert dry.notes() == res.stderr.splitlines()
    other = twin(wh, tmp_path, "cli")
    done = t.rewrite_file_index(partitions="dt=2024-05-01")
    expected = cli_json(runner, other, "rewrite-file-index", "db.pk", "--partition", "dt=2024-05-01")
    assert timeless(as_json(done.rows())) == timeless(expected) and done.snapshot_id == 4


# -- expiry and clean-up ----------------------------------------------------------------------------


def test_expire_dry_run_and_run_equal_the_cli(runner: CliRunner, wh: Warehouse, tmp_path: Path) -> None:
    t = wh.table("db.pk")
    args = ("--retain-min", "1", "--older-than", "0s")
    dry = t.expire(retain_min=1, older_than="0s", dry_run=True)
    res = cli(runner, wh, "expire", "db.pk", *args, "--dry-run", "-o", "json")
    assert as_json(dry.rows()) == json.loads(res.stdout) != []
    assert dry.describe().startswith("would expire snapshots 1..2 (2); would delete ")
    other = twin(wh, tmp_path, "cli")
    done = t.expire(retain_min=1, older_than=dt.datetime.now())
    assert timeless(as_json(done.rows())) == timeless(cli_json(runner, other, "expire", "db.pk", *args))
    assert done.result is not None and done.result.deleted_files == len(dry.plan.files)
    assert [r["snapshot_id"] for r in t.inspect("snapshots").rows] == [3]


def test_expire_partitions_equals_the_cli(runner: CliRunner, wh: Warehouse, tmp_path: Path) -> None:
    t = wh.table("db.pk")
    args = ("--expiration-time", "1d", "--max-expires", "1")
    dry = t.expire_partitions(expiration_time=dt.timedelta(days=1), max_expires=1, dry_run=True)
    assert as_json(dry.rows()) == cli_json(runner, wh, "expire-partitions", "db.pk", *args, "--dry-run")
    other = twin(wh, tmp_path, "cli")
    done = t.expire_partitions(expiration_time="1d", max_expires=1)
    assert as_json(done.rows()) == cli_json(runner, other, "expire-partitions", "db.pk", *args)
    assert done.snapshots == [4] and {r["partition"] for r in t.inspect("partitions").rows} == {"[2024-05-02]"}
    with pytest.raises(InvalidInput, match="no expiration time"):
        t.expire_partitions()


def test_remove_orphan_files_equals_the_cli(runner: CliRunner, wh: Warehouse, tmp_path: Path) -> None:
    root = Path(wh.path) / "db.db" / "pk"
    (root / "dt=2024-05-01" / "bucket-0" / "data-orphan-0.parquet").write_bytes(b"12345")
    (root / "dt=zz" / "bucket-0").mkdir(parents=True)
    (root / "dt=zz" / "bucket-0" / "data-alone-0.parquet").write_bytes(b"12")
    age(root)
    t = wh.table("db.pk")
    dry = t.remove_orphan_files(dry_run=True)
    res = cli(runner, wh, "remove-orphan-files", "db.pk", "--dry-run", "-o", "json")
    assert as_json(dry.rows()) == json.loads(res.stdout)
    assert {r["path"] for r in dry.rows().rows} == {"dt=2024-05-01/bucket-0/data-orphan-0.parquet",
                                                    "dt=zz/bucket-0/data-alone-0.parquet", "dt=zz/bucket-0", "dt=zz"}
    cutoff = re.compile(r"older than \S+ considered")  # now - 1 day, a moment apart
    assert [cutoff.sub("", n) for n in dry.notes()] == [cutoff.sub("", n) for n in res.stderr.splitlines()]
    other = twin(wh, tmp_path, "cli")
    done = t.remove_orphan_files(older_than=dt.datetime.now() - dt.timedelta(hours=2))
    assert as_json(done.rows()) == as_json(dry.rows()) == cli_json(runner, other, "remove-orphan-files", "db.pk")
    assert not (root / "dt=zz").exists()
    with pytest.raises(UnsafeRefused):
        t.remove_orphan_files(older_than="10min")


def test_rollback_equals_the_cli(runner: CliRunner, wh: Warehouse, tmp_path: Path) -> None:
    t = wh.table("db.pk")
    dry = t.rollback(snapshot=1, dry_run=True)
    res = cli(runner, wh, "rollback", "db.pk", "--snapshot", "1", "--dry-run", "-o", "json")
    assert as_json(dry.rows()) == json.loads(res.stdout) != []
    assert dry.notes() == res.stderr.splitlines()
    other = twin(wh, tmp_path, "cli")
    done = t.rollback(snapshot=1)
    assert as_json(done.rows()) == cli_json(runner, other, "rollback", "db.pk", "--snapshot", "1")
    assert sorted(t.read()["id"].to_pylist()) == [1, 2, 3]
    with pytest.raises(InvalidInput, match="exactly one"):
        t.rollback()


# -- tags and branches ------------------------------------------------------------------------------


def test_tags_equal_the_cli(runner: CliRunner, wh: Warehouse, tmp_path: Path) -> None:
    other = twin(wh, tmp_path, "cli")
    t = wh.table("db.pk")
    tag = t.create_tag("t1", snapshot=1, time_retained="7d")
    cli(runner, other, "tag", "create", "db.pk", "t1", "--snapshot", "1", "--time-retained", "7d")
    assert (tag.snapshot.id, tag.time_retained_java) == (1, "PT168H")
    t.create_tag("t2")
    cli(runner, other, "tag", "create", "db.pk", "t2")
    t.rename_tag("t2", "t3")
    cli(runner, other, "tag", "rename", "db.pk", "t2", "t3")
    assert timeless(as_json(t.list_tags()), "create_time") == timeless(
        cli_json(runner, other, "tag", "list", "db.pk"), "create_time")
    assert [r["tag_name"] for r in t.list_tags().rows] == ["t1", "t3"]
    dry = t.delete_tags("t1, t3", dry_run=True)
    assert as_json(dry.rows()) == cli_json(runner, wh, "tag", "delete", "db.pk", "t1,t3", "--dry-run")
    assert dry.tags == ["t1", "t3"]
    expired = t.expire_tags(older_than=dt.datetime.now() + dt.timedelta(seconds=1))
    assert expired.tags == ["t1", "t3"] and t.list_tags().rows == []
    with pytest.raises(InvalidInput, match="empty name"):
        t.delete_tags("a,,b")


def test_branches_equal_the_cli(runner: CliRunner, wh: Warehouse, tmp_path: Path) -> None:
    t = wh.table("db.pk")
    t.create_tag("base", snapshot=2)
    other = twin(wh, tmp_path, "cli")
    dev = t.create_branch("dev", tag="base")
    cli(runner, other, "branch", "create", "db.pk", "dev", "--tag", "base")
    assert timeless(as_json(t.list_branches()), "create_time") == timeless(
        cli_json(runner, other, "branch", "list", "db.pk"), "create_time")
    assert (dev.name, dev.branch) == ("db.pk", "dev")
    dev.write(data([99]))
    dry = t.fast_forward("dev", dry_run=True)
    assert dry.rows().rows and all(r["action"] in ("delete", "copy", "write") for r in dry.rows().rows)
    t.fast_forward("dev")
    assert 99 in t.read()["id"].to_pylist()
    assert len(t.delete_branch("dev").changes) > 0
    with pytest.raises(InvalidInput, match="'main'"):
        t.create_branch("main")


def test_quickstart_builds_the_demo(tmp_path: Path) -> None:
    tables = Warehouse(str(tmp_path / "demo")).quickstart()
    assert [t.name for t in tables] == ["demo.orders", "demo.events"]
    assert tables[0].read().num_rows == 4  # 5 orders, one deleted
    assert [r["commit_kind"] for r in tables[0].inspect("snapshots").rows] == ["APPEND", "APPEND", "COMPACT"]
