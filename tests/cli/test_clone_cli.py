"""``clone`` and ``copy`` from the command line: tables, partitions, databases, dry runs, bad
input, and a run interrupted mid-copy then run again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.cli.test_compact_cli import invoke, one_error_line


class Env:
    """Warehouse ``wh``: db.pk (PK, partitioned by dt, bucket 2, deletion vectors, an update
    and a compaction so a deletion vector is live), db.ap (append, partitioned), db.u
    (unpartitioned append). ``wh2`` is the target warehouse (not created)."""

    def __init__(self, runner: CliRunner, root: Path) -> None:
        self.runner = runner
        self.root = root
        self.wh = str(root / "wh")
        self.wh2 = str(root / "wh2")
        self.ok("create", "db.pk", "--schema", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL",
                "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=2",
                "--option", "deletion-vectors.enabled=true")
        self.ok("write", "db.pk", self.csv("a.csv", "id,v,dt\n1,a,x\n2,b,x\n3,c,y\n4,d,y\n"))
        self.ok("write", "db.pk", self.csv("b.csv", "id,v,dt\n1,A,x\n4,D,y\n"))
        self.ok("create", "db.ap", "--schema", "id BIGINT, v STRING, dt STRING", "--partition-by", "dt")
        self.ok("write", "db.ap", self.csv("c.csv", "id,v,dt\n1,a,x\n2,b,y\n3,c,y\n"))
        self.ok("create", "db.pk_nodv", "--schema", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL",
                "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=2")
        self.ok("create", "db.u", "--schema", "id BIGINT, v STRING")
        self.ok("write", "db.u", self.csv("d.csv", "id,v\n1,a\n2,b\n"))

    def csv(self, name: str, text: str) -> str:
        p = self.root / name
        p.write_text(text)
        return str(p)

    def run(self, *args: str) -> Any:
        return invoke(self.runner, *args, "-w", self.wh)

    def ok(self, *args: str) -> Any:
        res = self.run(*args)
        assert res.exit_code == 0, res.output
        return res

    def clone(self, *args: str) -> Any:
        return self.ok("clone", *args, "--target-warehouse", self.wh2)

    def read(self, table: str, wh: str | None = None) -> list[dict[str, Any]]:
        res = invoke(self.runner, "read", table, "-o", "json", "-w", wh or self.wh)
        assert res.exit_code == 0, res.output
        return sorted(json.loads(res.stdout), key=lambda r: (r.get("dt") or "", r["id"]))

    def snapshots(self, table: str, wh: str) -> list[dict[str, Any]]:
        res = invoke(self.runner, "inspect", "snapshots", table, "-o", "json", "-w", wh)
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout)


@pytest.fixture
def env(runner: CliRunner, tmp_path: Path) -> Env:
    return Env(runner, tmp_path)


def files_under(root: str) -> set[str]:
    return {str(p) for p in Path(root).rglob("*") if p.is_file()}


def test_clone_a_primary_key_table_with_deletion_vectors_to_another_warehouse(env: Env) -> None:
    source = env.read("db.pk")
    assert [r["v"] for r in source] == ["A", "b", "c", "D"]
    res = env.clone("db.pk", "--target", "bak.pk2", "-o", "json")
    [row] = json.loads(res.stdout)
    assert row["action"] == "create" and row["snapshot_id"] == 1 and row["files_present"] == 0
    assert env.read("bak.pk2", env.wh2) == source
    kinds = {Path(p).name.split("-")[0] for p in files_under(env.wh2 + "/bak.db/pk2")}
    assert "index" in kinds  # the deletion vectors came along


def test_rerun_is_up_to_date_and_commits_nothing(env: Env) -> None:
    env.clone("db.ap", "--target", "bak.ap")
    res = env.clone("db.ap", "--target", "bak.ap", "-o", "json")
    [row] = json.loads(res.stdout)
    assert row["action"] == "up-to-date" and row["files_copied"] == 0 and row["snapshot_id"] is None
    assert len(env.snapshots("bak.ap", env.wh2)) == 1


def test_clone_one_partition_with_where(env: Env) -> None:
    env.clone("db.ap", "--target", "bak.ap", "--where", "dt = 'y'")
    assert env.read("bak.ap", env.wh2) == [r for r in env.read("db.ap") if r["dt"] == "y"]


def test_clone_a_database_with_excluded_tables(env: Env) -> None:
    res = env.clone("db", "--target", "bak", "--excluded-tables", "db.u,db.pk_nodv", "-o", "json")
    assert sorted(r["target"] for r in json.loads(res.stdout)) == ["bak.ap", "bak.pk"]
    assert env.read("bak.pk", env.wh2) == env.read("db.pk")
    assert env.read("bak.ap", env.wh2) == env.read("db.ap")
    assert not Path(env.wh2, "bak.db", "u").exists()


def test_clone_a_database_with_included_tables(env: Env) -> None:
    res = env.clone("db", "--target", "bak", "--included-tables", "db.u", "-o", "json")
    assert [r["target"] for r in json.loads(res.stdout)] == ["bak.u"]
    assert env.read("bak.u", env.wh2) == env.read("db.u")


def test_dry_run_lists_exactly_the_files_a_run_copies_and_changes_nothing(env: Env) -> None:
    res = env.clone("db.pk", "--target", "bak.pk", "--dry-run", "-o", "json")
    planned = json.loads(res.stdout)
    assert not Path(env.wh2).exists()
    assert {r["state"] for r in planned} == {"copy"} and {r["action"] for r in planned} == {"create"}
    env.clone("db.pk", "--target", "bak.pk")
    written = files_under(env.wh2 + "/bak.db/pk")
    data_and_index = {p for p in written if Path(p).name.startswith(("data-", "index-")) and "/manifest/" not in p}
    assert data_and_index == {r["file"] for r in planned}
    again = json.loads(env.clone("db.pk", "--target", "bak.pk", "--dry-run", "-o", "json").stdout)
    assert {r["state"] for r in again} == {"present"} and {r["action"] for r in again} == {"up-to-date"}


def test_meta_only_creates_the_table_without_data(env: Env) -> None:
    env.clone("db.pk", "--target", "bak.pk", "--meta-only")
    assert env.read("bak.pk", env.wh2) == []
    assert env.snapshots("bak.pk", env.wh2) == []


def test_existing_target_skip_and_overwrite(env: Env) -> None:
    env.clone("db.ap", "--target", "bak.ap", "--where", "dt = 'x'")
    res = env.clone("db.ap", "--target", "bak.ap", "--if-exists", "skip", "-o", "json")
    assert json.loads(res.stdout)[0]["action"] == "skip"
    assert {r["dt"] for r in env.read("bak.ap", env.wh2)} == {"x"}
    res = env.clone("db.ap", "--target", "bak.ap", "-o", "json")
    assert json.loads(res.stdout)[0]["action"] == "overwrite"
    assert env.read("bak.ap", env.wh2) == env.read("db.ap")


def test_copy_within_the_catalog(env: Env) -> None:
    env.ok("copy", "db.ap", "db.ap_copy", "--where", "dt = 'x'")
    assert env.read("db.ap_copy") == [r for r in env.read("db.ap") if r["dt"] == "x"]
    env.ok("copy", "db.ap", "db.ap_copy")  # the other partition joins; x is overwritten, not doubled
    assert env.read("db.ap_copy") == env.read("db.ap")


def test_copy_overwrites_what_the_target_partitions_gained_meanwhile(env: Env) -> None:
    env.ok("copy", "db.ap", "db.ap_copy")
    env.ok("write", "db.ap_copy", env.csv("e.csv", "id,v,dt\n9,z,x\n"))
    planned = json.loads(env.ok("copy", "db.ap", "db.ap_copy", "--where", "dt = 'x'", "--dry-run", "-o", "json").stdout)
    assert [r["state"] for r in planned].count("remove") == 1  # the file the write added
    assert {r["state"] for r in planned} == {"present", "remove"}
    env.ok("copy", "db.ap", "db.ap_copy", "--where", "dt = 'x'")
    assert env.read("db.ap_copy") == env.read("db.ap")


@pytest.mark.parametrize(("args", "code", "words"), [
    (["clone", "db.pk", "--target", "bak.pk", "--clone-from", "hive"], 4, "--clone-from hive needs a Hive catalog"),
    (["clone", "db.pk", "--target", "bak.pk", "--clone-from", "mysql"], 4, "--clone-from"),
    (["clone", "db.pk", "--target", "bak.pk", "--included-tables", "db.ap"], 4, "--included-tables"),
    (["clone", "db", "--target", "bak.t"], 4, "target database"),
    (["clone", "db.pk", "--target", "bak.pk", "--where", "id = 1"], 4, "partition"),
    (["clone", "db.u", "--target", "bak.u", "--where", "id = 1"], 4, "not partitioned"),
    (["clone", "db.nope", "--target", "bak.nope"], 3, "db.nope"),
    (["clone", "db", "--target", "bak", "--included-tables", "db.nope"], 3, "no table"),
    (["clone", "db.pk", "--target", "db.pk"], 4, "source"),
    (["clone", "db.pk", "--target", "db.ap"], 4, "differs"),
    (["clone", "db.pk", "--target", "db.pk_nodv"], 4, "deletion-vectors.enabled"),
    (["clone", "db.pk", "--target", "bak.pk", "--if-exists", "fail"], 4, "--if-exists"),
    (["copy", "db.pk", "pk2"], 4, "DB.TABLE"),
    (["clone", "db.pk", "--target", "bak.pk", "--parallelism", "0"], 4, "--parallelism"),
    (["clone", "db.pk", "--target", "bak.pk", "--prefer-file-format", "csv"], 4, "--prefer-file-format"),
    (["clone", "db.pk", "--target", "bak.pk", "--target-table-conf", "snapshot.num-retained.max"], 4,
     "expected key=value"),
    (["clone", "db.pk", "--target", "bak.pk", "--target-table-conf", "merge-engine=first-row"], 6, "merge-engine"),
    (["clone", "--target-table-conf", "bucket=4", "--target-warehouse", "WH2"], 6, "bucket"),
    (["clone"], 4, "whole catalog"),
    (["clone", "db.pk"], 4, "--target is required"),
    (["clone", "--target", "bak", "--target-warehouse", "WH2"], 4, "whole-catalog"),
    (["clone", "--where", "dt = 'x'", "--target-warehouse", "WH2"], 4, "--where"),
    (["clone", "--included-tables", "nope.t", "--target-warehouse", "WH2"], 3, "no table"),
])
def test_bad_input_is_one_line_and_changes_nothing(env: Env, args: list[str], code: int, words: str) -> None:
    before = files_under(env.wh)
    res = env.run(*[env.wh2 if a == "WH2" else a for a in args])
    assert res.exit_code == code, res.output
    assert words in one_error_line(res)
    assert files_under(env.wh) == before
    assert not Path(env.wh2).exists()


def test_interrupted_clone_resumes_without_duplicates(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.operation import clone as clone_op

    real = clone_op.copy_file
    done: list[str] = []
    started: list[str] = []

    def flaky(source: Any, target: Any, f: Any) -> None:
        started.append(f.target)
        if len(started) == 3:  # the third file: half written, then the process dies
            with target.file_io.open_output(f.target) as out:
                out.write(b"partial")
            raise OSError("connection reset")
        real(source, target, f)
        done.append(f.target)

    monkeypatch.setattr(clone_op, "copy_file", flaky)
    res = env.run("clone", "db.pk", "--target", "bak.pk", "--target-warehouse", env.wh2)
    assert res.exit_code != 0
    assert env.snapshots("bak.pk", env.wh2) == []  # nothing committed
    monkeypatch.setattr(clone_op, "copy_file", real)
    res = env.clone("db.pk", "--target", "bak.pk", "-o", "json")
    [row] = json.loads(res.stdout)
    assert row["files_present"] == len(done) and row["files_copied"] >= 1 and row["snapshot_id"] == 1
    assert env.read("bak.pk", env.wh2) == env.read("db.pk")
    assert len(env.snapshots("bak.pk", env.wh2)) == 1


def test_clone_of_an_evolved_table_carries_its_schema_history(env: Env) -> None:
    env.ok("alter", "db.ap", "--add-column", "w INT")
    env.ok("write", "db.ap", env.csv("f.csv", "id,v,dt,w\n7,g,x,70\n"))
    env.ok("alter", "db.ap", "--drop-column", "v", "--yes")
    source = env.read("db.ap")
    assert {r.get("w") for r in source} == {None, 70} and "v" not in source[0]
    env.clone("db.ap", "--target", "bak.ap")
    assert env.read("bak.ap", env.wh2) == source
    schemas = json.loads(invoke(env.runner, "inspect", "schemas", "bak.ap", "-o", "json", "-w", env.wh2).stdout)
    assert len(schemas) == 3


def test_evolved_files_into_an_existing_target_without_that_schema_are_refused(env: Env) -> None:
    env.ok("alter", "db.ap", "--add-column", "w INT")
    env.ok("create", "db.ap2", "--schema", "id BIGINT, v STRING, dt STRING, w INT", "--partition-by", "dt")
    before = files_under(env.wh)
    res = env.run("clone", "db.ap", "--target", "db.ap2")
    assert res.exit_code == 1, res.output
    assert "schema 0" in one_error_line(res)
    assert files_under(env.wh) == before


def test_a_database_clone_refused_for_one_table_writes_nothing(env: Env) -> None:
    res = env.run("clone", "db", "--target", "bak", "--target-warehouse", env.wh2, "--where", "dt = 'x'")
    assert res.exit_code == 4, res.output  # db.u is not partitioned: refused before db.ap is copied
    assert "not partitioned" in one_error_line(res)
    assert not Path(env.wh2).exists()


def test_clone_a_dynamic_bucket_table_with_its_hash_index(env: Env) -> None:
    env.ok("create", "db.dyn", "--schema", "id BIGINT NOT NULL, v STRING", "--primary-key", "id",
           "--option", "bucket=-1")
    env.ok("write", "db.dyn", env.csv("g.csv", "id,v\n1,a\n2,b\n3,c\n"))
    planned = json.loads(env.clone("db.dyn", "--target", "bak.dyn", "--dry-run", "-o", "json").stdout)
    assert "index" in {r["kind"] for r in planned}
    env.clone("db.dyn", "--target", "bak.dyn")
    env.ok("write", "db.dyn", env.csv("h.csv", "id,v\n1,A\n"))
    res = invoke(env.runner, "write", "bak.dyn", env.csv("h.csv", "id,v\n1,A\n"), "-w", env.wh2)
    assert res.exit_code == 0, res.output
    assert env.read("bak.dyn", env.wh2) == env.read("db.dyn")  # the key kept its bucket: no duplicate


def test_prefer_file_format_sets_the_created_target_format(env: Env) -> None:
    env.clone("db.ap", "--target", "bak.ap", "--prefer-file-format", "orc", "--parallelism", "1")
    opts = json.loads(invoke(env.runner, "inspect", "options", "bak.ap", "-o", "json", "-w", env.wh2).stdout)
    assert {"key": "file.format", "value": "orc"} in [{"key": o["key"], "value": o["value"]} for o in opts]
    res = invoke(env.runner, "write", "bak.ap", env.csv("o.csv", "id,v,dt\n50,o,x\n"), "-w", env.wh2)
    assert res.exit_code == 0, res.output
    assert any(p.endswith(".orc") for p in files_under(env.wh2 + "/bak.db/ap"))
    assert any(p.endswith(".parquet") for p in files_under(env.wh2 + "/bak.db/ap"))  # the copied ones
    assert env.read("bak.ap", env.wh2) == sorted([*env.read("db.ap"), {"id": 50, "v": "o", "dt": "x"}],
                                                 key=lambda r: (r["dt"], r["id"]))


def test_rerun_after_the_source_upgraded_a_file_to_another_level(env: Env) -> None:
    """A full compaction may upgrade a file to the top level keeping its name; a re-run must
    carry the new level (a deletion-vector reader skips level 0), not call the clone up to date."""
    env.ok("create", "db.wo", "--schema", "id BIGINT NOT NULL, v STRING", "--primary-key", "id",
           "--option", "bucket=1", "--option", "deletion-vectors.enabled=true", "--option", "write-only=true")
    env.ok("write", "db.wo", env.csv("w.csv", "id,v\n1,a\n2,b\n"))
    env.clone("db.wo", "--target", "bak.wo")
    assert env.read("bak.wo", env.wh2) == env.read("db.wo") == []  # level 0 only: not visible yet
    env.ok("compact", "db.wo", "--full")
    levels = json.loads(env.ok("inspect", "files", "db.wo", "-o", "json").stdout)
    assert [f["level"] for f in levels] == [5]  # upgraded in place, same file name
    res = env.clone("db.wo", "--target", "bak.wo", "-o", "json")
    assert json.loads(res.stdout)[0]["action"] == "overwrite"
    assert env.read("bak.wo", env.wh2) == env.read("db.wo") != []


def test_a_run_stopped_while_writing_the_schema_history_is_finished_by_a_rerun(
        env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.schema.schema_manager import SchemaManager

    env.ok("alter", "db.ap", "--add-column", "w INT")
    env.ok("write", "db.ap", env.csv("f.csv", "id,v,dt,w\n7,g,x,70\n"))

    def dies(self: Any, schema: Any) -> bool:
        raise OSError("connection reset")

    with monkeypatch.context() as m:
        m.setattr(SchemaManager, "publish_copy", dies)
        res = env.run("clone", "db.ap", "--target", "bak.ap", "--target-warehouse", env.wh2)
        assert res.exit_code != 0
    assert Path(env.wh2, "bak.db", "ap", "schema", "schema-0").exists()  # created, history not written
    planned = json.loads(env.clone("db.ap", "--target", "bak.ap", "--dry-run", "-o", "json").stdout)
    assert {r["action"] for r in planned} == {"resume"}
    env.clone("db.ap", "--target", "bak.ap")
    assert env.read("bak.ap", env.wh2) == env.read("db.ap")


READ_CHANGING = ["merge-engine=first-row", "sequence.field=v", "primary-key=id", "bucket=4", "bucket-key=id",
                 "deletion-vectors.enabled=false", "changelog-producer=lookup", "fields.v.default-value=z",
                 "file.format=orc", "file.compression=gzip", "data-evolution.enabled=true",
                 "row-tracking.enabled=true", "fields.v.aggregate-function=max", "partial-update.remove-record-on-delete=true",
                 "record-level.expire-time=1 d", "scan.snapshot-id=1", "path=/elsewhere", "no-such-option=1"]


@pytest.mark.parametrize("conf", READ_CHANGING)
def test_target_table_conf_that_changes_how_files_read_is_refused_by_name(env: Env, conf: str) -> None:
    for source in ("db.pk", "db"):
        res = invoke(env.runner, "clone", source, "--target", "bak" + (".pk" if "." in source else ""),
                     "--target-warehouse", env.wh2, "--target-table-conf", "snapshot.num-retained.max=20",
                     "--target-table-conf", conf, "-w", env.wh)
        assert res.exit_code == 6, res.output
        assert conf.split("=")[0] in one_error_line(res)
        assert not Path(env.wh2).exists()  # no target, no database


def test_target_table_conf_sets_the_created_targets_options(env: Env) -> None:
    conf = ["snapshot.num-retained.max=20", "snapshot.time-retained=3 h", "num-sorted-run.compaction-trigger=9",
            "target-file-size=64 mb", "partition.expiration-time=30 d"]
    flags = [a for c in conf for a in ("--target-table-conf", c)]
    planned = json.loads(env.clone("db.pk", "--target", "bak.pk", *flags, "--dry-run", "-o", "json").stdout)
    assert not Path(env.wh2).exists()
    env.clone("db.pk", "--target", "bak.pk", *flags)
    written = files_under(env.wh2 + "/bak.db/pk")
    assert {p for p in written if Path(p).name.startswith(("data-", "index-")) and "/manifest/" not in p} == {
        r["file"] for r in planned}
    schema = json.loads(Path(env.wh2, "bak.db", "pk", "schema", "schema-0").read_text())
    for c in conf:
        k, v = c.split("=", 1)
        assert schema["options"][k] == v
    assert schema["options"]["deletion-vectors.enabled"] == "true"  # the source's options stay
    assert env.read("bak.pk", env.wh2) == env.read("db.pk")
    # a re-run with the same options is up to date; other values are refused, the target kept
    [row] = json.loads(env.clone("db.pk", "--target", "bak.pk", *flags, "-o", "json").stdout)
    assert row["action"] == "up-to-date"
    before = files_under(env.wh2)
    res = invoke(env.runner, "clone", "db.pk", "--target", "bak.pk", "--target-warehouse", env.wh2,
                 "--target-table-conf", "snapshot.num-retained.max=30", "-w", env.wh)
    assert res.exit_code == 4, res.output
    assert "snapshot.num-retained.max" in one_error_line(res)
    assert files_under(env.wh2) == before


def test_target_table_conf_on_an_evolved_table_lands_on_the_latest_schema(env: Env) -> None:
    env.ok("alter", "db.ap", "--add-column", "w INT")
    env.ok("write", "db.ap", env.csv("e.csv", "id,v,dt,w\n9,z,x,9\n"))
    env.clone("db.ap", "--target", "bak.ap", "--target-table-conf", "snapshot.num-retained.min=2")
    latest = json.loads(Path(env.wh2, "bak.db", "ap", "schema", "schema-1").read_text())
    assert latest["options"]["snapshot.num-retained.min"] == "2"
    assert env.read("bak.ap", env.wh2) == env.read("db.ap")


def test_clone_a_whole_catalog(env: Env) -> None:
    env.ok("create", "other.t", "--schema", "id BIGINT, v STRING")
    env.ok("write", "other.t", env.csv("o.csv", "id,v\n7,q\n"))
    planned = json.loads(env.clone("--dry-run", "-o", "json").stdout)
    assert not Path(env.wh2).exists()
    names = ["db.ap", "db.pk", "db.pk_nodv", "db.u", "other.t"]
    assert sorted({r["target"] for r in planned}) == names
    assert all(r["source"] == r["target"] and r["action"] == "create" for r in planned)
    rows = json.loads(env.clone("-o", "json").stdout)
    assert [r["target"] for r in rows] == names
    written = files_under(env.wh2)
    assert {p for p in written if Path(p).name.startswith(("data-", "index-")) and "/manifest/" not in p} == {
        r["file"] for r in planned if r["file"]}
    for name in names:
        assert env.read(name, env.wh2) == env.read(name), name
    # idempotent: a re-run copies and commits nothing; its dry run says so
    again = json.loads(env.clone("--dry-run", "-o", "json").stdout)
    assert {r["action"] for r in again} == {"up-to-date", "overwrite"}  # pk_nodv: empty, nothing to commit
    assert {r["state"] for r in again if r["file"]} == {"present"}
    rerun = json.loads(env.clone("-o", "json").stdout)
    assert all(r["files_copied"] == 0 and r["snapshot_id"] is None for r in rerun)
    assert files_under(env.wh2) == written


def test_whole_catalog_clone_with_excluded_tables_and_interruption(env: Env, monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    from paimon_cli.core.operation import clone as op

    real, calls = op.copy_file, []

    def failing(source: Any, target: Any, f: Any) -> None:
        calls.append(f)
        if len(calls) == 3:
            raise OSError("disk went away")
        real(source, target, f)

    monkeypatch.setattr(op, "copy_file", failing)
    res = invoke(env.runner, "clone", "--excluded-tables", "db.pk_nodv", "--target-warehouse", env.wh2,
                 "--parallelism", "1", "-w", env.wh)
    assert res.exit_code != 0
    monkeypatch.setattr(op, "copy_file", real)
    rows = json.loads(env.clone("--excluded-tables", "db.pk_nodv", "-o", "json").stdout)
    assert [r["target"] for r in rows] == ["db.ap", "db.pk", "db.u"]
    for name in ("db.ap", "db.pk", "db.u"):
        assert env.read(name, env.wh2) == env.read(name), name
        assert len(env.snapshots(name, env.wh2)) == 1
    assert not Path(env.wh2, "db.db", "pk_nodv").exists()
