"""mark-partition-done's metastore actions and drop-partition through a real Hive Metastore
2.3.9, judged by Java Paimon 0.9: its AddDonePartitionAction / MarkPartitionDoneEventAction
(the core of mark_partition_done) and its Catalog.dropPartition on the same table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from paimon_cli.app import app
from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, comparable_partition, fresh_db


def cat_args(server: HiveMetastoreServer, wh: Path) -> list[str]:
    return ["--catalog-option", "metastore=hive", "--catalog-option", f"uri={server.uri}",
            "--catalog-option", f"warehouse={wh.as_uri()}"]


def cli(*args: str, expect: int = 0) -> Any:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == expect, f"{args}: exit {res.exit_code}\n{res.stdout}\n{res.stderr}"
    return res


def test_done_partition_and_mark_event_as_java_marks_them(
    hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("md")
    spec = hive_spec(hive_metastore, wh)
    java_hive.create_table(spec, db, "t", [("id", "INT"), ("dt", "STRING"), ("hh", "INT")], [], ["dt", "hh"],
                           {"bucket": "-1", "metastore.partitioned-table": "true",
                            "partition.mark-done-action": "success-file,done-partition,mark-event"})
    java_hive.write(spec, db, "t", [{"id": i, "dt": f"d{i}", "hh": i} for i in range(3)])
    c = cat_args(hive_metastore, wh)
    java_hive.mark_partition_done(spec, db, "t", "dt=d0/hh=0/")
    dry = json.loads(cli("mark-partition-done", f"{db}.t", "--partition", "dt=d1,hh=1", "--dry-run", "-o", "json",
                         *c).stdout)
    assert [(r["action"], r["target"]) for r in dry] == [
        ("success-file", "dt=d1/hh=1/_SUCCESS"), ("done-partition", "metastore partition dt=d1/hh=1.done"),
        ("mark-event", "metastore event LOAD_DONE dt=d1/hh=1")]
    with client(hive_metastore) as hms:
        assert not hms.is_partition_marked_for_event(db, "t", {"dt": "d1", "hh": "1"})
        assert len(hms.list_partitions(db, "t")) == 4  # the dry run added nothing
    cli("mark-partition-done", f"{db}.t", "--partition", "dt=d1,hh=1", *c)
    root = wh / f"{db}.db" / "t"
    assert (root / "dt=d0" / "hh=0" / "_SUCCESS").is_file() and (root / "dt=d1" / "hh=1" / "_SUCCESS").is_file()
    with client(hive_metastore) as hms:
        parts = {tuple(p.values): p for p in hms.list_partitions(db, "t")}
        assert sorted(parts) == [("d0", "0"), ("d0", "0.done"), ("d1", "1"), ("d1", "1.done"), ("d2", "2")]
        javas, ours = comparable_partition(parts[("d0", "0.done")]), comparable_partition(parts[("d1", "1.done")])
        location = javas["sd"].pop("location")
        assert location.endswith("/dt=d0/hh=0.done") and ours["sd"].pop("location") == location.replace(
            "dt=d0/hh=0.done", "dt=d1/hh=1.done")
        javas.pop("values")
        ours.pop("values")
        assert ours == javas  # field by field the partition Java's AddDonePartitionAction adds
        assert hms.is_partition_marked_for_event(db, "t", {"dt": "d0", "hh": "0"})
        assert hms.is_partition_marked_for_event(db, "t", {"dt": "d1", "hh": "1"})
        assert not hms.is_partition_marked_for_event(db, "t", {"dt": "d2", "hh": "2"})
    # repair keeps the markers; Java still reads the table
    cli("repair", f"{db}.t", *c)
    with client(hive_metastore) as hms:
        assert len(hms.list_partitions(db, "t")) == 5
    assert sorted(r["id"] for r in java_hive.read(spec, db, "t", row_kind=False)) == [0, 1, 2]
    # a partial spec cannot name a metastore partition
    err = cli("mark-partition-done", f"{db}.t", "--partition", "dt=d2", *c, expect=4).stderr
    assert "need every partition key" in err


def test_mark_event_needs_partitioned_table(hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon,
                                           tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("md")
    spec = hive_spec(hive_metastore, wh)
    java_hive.create_table(spec, db, "t", [("id", "INT"), ("dt", "STRING")], [], ["dt"], {"bucket": "-1"})
    java_hive.write(spec, db, "t", [{"id": 1, "dt": "d1"}])
    err = cli("mark-partition-done", f"{db}.t", "--partition", "dt=d1", "--action", "success-file,mark-event",
              *cat_args(hive_metastore, wh), expect=4).stderr
    assert "metastore.partitioned-table=true" in err
    assert not (wh / f"{db}.db" / "t" / "dt=d1" / "_SUCCESS").exists()


def test_drop_partition_drops_the_hms_partition_as_java(hive_metastore: HiveMetastoreServer,
                                                       java_hive: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("dp")
    spec = hive_spec(hive_metastore, wh)
    java_hive.create_table(spec, db, "t", [("id", "INT"), ("dt", "STRING")], [], ["dt"],
                           {"bucket": "-1", "metastore.partitioned-table": "true"})
    java_hive.write(spec, db, "t", [{"id": i, "dt": d} for i, d in enumerate(["a", "b", "c", "d"])])
    java_hive.drop_partition(spec, db, "t", {"dt": "a"})
    cli("drop-partition", f"{db}.t", "--partition", "dt=b;dt=c", *cat_args(hive_metastore, wh))
    with client(hive_metastore) as hms:
        assert [p.values for p in hms.list_partitions(db, "t")] == [["d"]]
    assert [r["dt"] for r in java_hive.read(spec, db, "t", row_kind=False)] == ["d"]
