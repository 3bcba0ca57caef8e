"""clone into a REST catalog: the server creates the table and chooses its location, the files
are copied there and committed through the server's commit endpoint; pypaimon 2.1's own REST
client reads the target row for row through the same server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from tests.catalogs.hive_metastore_server import HiveMetastoreServer
from tests.catalogs.hms_helpers import fresh_db
from tests.catalogs.rest_helpers import commits, isolate
from tests.catalogs.rest_server import RestCatalogServer
from tests.catalogs.test_hive_catalog import cat_args
from tests.catalogs.test_hive_migrate import _norm, make_hive_table
from tests.interop.java_harness import JavaPaimon
from tests.interop.pypaimon_peer import PyPaimon


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    isolate(tmp_path, monkeypatch)
    with RestCatalogServer(tmp_path / "root") as s:
        yield s


def run(*args: str, code: int = 0) -> Any:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == code, f"{args}: exit {res.exit_code}\n{res.stdout}\n{res.stderr}"
    return res


def as_json(*args: str) -> Any:
    return json.loads(run(*args, "-o", "json").stdout)


def target(server: RestCatalogServer) -> list[str]:
    return [x for k, v in server.client_options().items() for x in ("--target-catalog-option", f"{k}={v}")]


def source(tmp_path: Path, evolved: bool = False) -> str:
    wh = str(tmp_path / "src")
    data = tmp_path / "in.csv"
    run("create", "shop.orders", "--schema", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL", "--primary-key",
        "id,dt", "--partition-by", "dt", "--option", "bucket=2", "--option", "deletion-vectors.enabled=true",
        "-w", wh)
    data.write_text("id,v,dt\n1,a,x\n2,b,x\n3,c,y\n4,d,y\n")
    run("write", "shop.orders", str(data), "-w", wh)
    if evolved:
        run("alter", "shop.orders", "--add-column", "w INT", "-w", wh)
    data.write_text("id,v,dt\n1,A,x\n4,D,y\n")
    run("write", "shop.orders", str(data), "-w", wh)
    run("create", "logs.ev", "--schema", "id BIGINT, v STRING", "-w", wh)
    data.write_text("id,v\n5,e\n")
    run("write", "logs.ev", str(data), "-w", wh)
    return wh


def rows(pypaimon: PyPaimon, server: RestCatalogServer, db: str, table: str) -> list[dict[str, Any]]:
    got = pypaimon.with_catalog(server.client_options()).read(server.warehouse, db, table)
    return sorted(got, key=lambda r: (r.get("dt") or "", r["id"]))


@pytest.mark.pypaimon
def test_clone_into_a_rest_catalog_is_read_by_pypaimon(server: RestCatalogServer, pypaimon: PyPaimon,
                                                       tmp_path: Path) -> None:
    wh = source(tmp_path)
    want = sorted(as_json("read", "shop.orders", "-w", wh), key=lambda r: (r["dt"], r["id"]))
    args = ["clone", "shop.orders", "--target", "bak.orders", *target(server), "--target-table-conf",
            "snapshot.num-retained.max=20", "-w", wh]
    plan = as_json(*args, "--dry-run")
    placeholder = "<location the server gives bak.orders>"
    assert plan and all(r["file"].startswith(placeholder + "/") and r["state"] == "copy" for r in plan)
    assert ("bak", "orders") not in server.tables
    [row] = as_json(*args)
    assert row["action"] == "create" and row["files_copied"] == len(plan) and row["snapshot_id"] == 1
    location = server.table_path("bak", "orders")
    copied = {str(p.relative_to(location)) for p in Path(location).rglob("*")
              if p.name.startswith(("data-", "index-")) and "manifest" not in p.parts}
    assert copied == {r["file"][len(placeholder) + 1:] for r in plan}
    assert [c["snapshot"]["id"] for c in commits(server, "bak.orders")] == [1]  # through the server
    assert rows(pypaimon, server, "bak", "orders") == want
    schema = json.loads((Path(location) / "schema" / "schema-0").read_text())
    assert schema["options"]["snapshot.num-retained.max"] == "20"
    # a re-run is up to date and commits nothing
    [again] = as_json(*args)
    assert again["action"] == "up-to-date" and len(commits(server, "bak.orders")) == 1

    # the whole catalog, each table under its own name
    done = as_json("clone", *target(server), "-w", wh)
    assert [r["target"] for r in done] == ["logs.ev", "shop.orders"]
    assert rows(pypaimon, server, "shop", "orders") == want
    assert rows(pypaimon, server, "logs", "ev") == [{"id": 5, "v": "e"}]


def evolved_source(tmp_path: Path) -> str:
    """A primary-key table whose live files span schemas 0..2: a column added (1), a column
    renamed and another widened INT -> BIGINT, an option set (2); no compaction."""
    from paimon_cli.core.api import Warehouse
    from paimon_cli.core.data.types import BigIntType
    from paimon_cli.core.schema.schema_change import RenameColumn, SetOption, UpdateColumnType

    wh = str(tmp_path / "src")
    data = tmp_path / "in.csv"
    run("create", "shop.orders", "--schema", "id BIGINT NOT NULL, v STRING, n INT, dt STRING NOT NULL",
        "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=2", "-w", wh)
    data.write_text("id,v,n,dt\n1,a,10,x\n2,b,20,x\n3,c,30,y\n4,d,40,y\n")
    run("write", "shop.orders", str(data), "-w", wh)
    run("alter", "shop.orders", "--add-column", "w INT", "-w", wh)
    data.write_text("id,v,n,dt,w\n1,A,11,x,7\n5,e,50,y,8\n")
    run("write", "shop.orders", str(data), "-w", wh)
    Warehouse(wh).catalog.alter_table("shop.orders", [RenameColumn("v", "label"), UpdateColumnType("n", BigIntType()),
                                                      SetOption("snapshot.num-retained.min", "5")])
    data.write_text("id,label,n,dt,w\n2,B,3000000000,x,9\n6,f,60,y,\n")
    run("write", "shop.orders", str(data), "-w", wh)
    files = as_json("inspect", "files", "shop.orders", "-w", wh)
    assert sorted({f["schema_id"] for f in files}) == [0, 1, 2]
    return wh


def schemas_of(table_dir: Path) -> list[Any]:
    """Each schema file's id, columns (field ids, names, types), highest field id and keys."""
    out = []
    for f in sorted((table_dir / "schema").iterdir(), key=lambda f: int(f.name.split("-")[1])):
        s = json.loads(f.read_text())
        out.append((s["id"], [(c["id"], c["name"], c["type"]) for c in s["fields"]], s["highestFieldId"],
                    s["partitionKeys"], s["primaryKeys"]))
    return out


@pytest.mark.pypaimon
def test_clone_of_files_written_under_older_schemas_into_rest_replays_the_history(
        server: RestCatalogServer, pypaimon: PyPaimon, java_hive: JavaPaimon, tmp_path: Path) -> None:
    """The server owns the target's schemas: it creates the table with the source's schema-0
    and the source's later schemas are replayed through its alter-table endpoint, each checked;
    the copied files keep the schema ids they were written with, and the clone reads row for
    row as the source (us and pypaimon 2.1 through the server). Dry run == run; a re-run is up
    to date; a run stopped half-way through the history is finished by the next."""
    wh = evolved_source(tmp_path)
    want = sorted(as_json("read", "shop.orders", "-w", wh), key=lambda r: (r["dt"], r["id"]))
    args = ["clone", "shop.orders", "--target", "bak.orders", *target(server), "--target-table-conf",
            "snapshot.num-retained.max=20", "-w", wh]
    plan = as_json(*args, "--dry-run")
    placeholder = "<location the server gives bak.orders>"
    assert plan and all(r["file"].startswith(placeholder + "/") and r["state"] == "copy" for r in plan)
    assert ("bak", "orders") not in server.tables and not server.calls_of("alterTable")
    [row] = as_json(*args)
    assert row["action"] == "create" and row["files_copied"] == len(plan) and row["snapshot_id"] == 1
    assert len(server.calls_of("alterTable")) == 2 and [c["snapshot"]["id"] for c in commits(server, "bak.orders")] == [1]
    location = server.table_path("bak", "orders")
    copied = {str(p.relative_to(location)) for p in Path(location).rglob("*")
              if p.name.startswith(("data-", "index-")) and "manifest" not in p.parts}
    assert copied == {r["file"][len(placeholder) + 1:] for r in plan}
    rest = _catalog(server)
    source_schemas = schemas_of(Path(wh) / "shop.db" / "orders")
    assert [s[0] for s in source_schemas] == [0, 1, 2] and schemas_of(location) == source_schemas
    latest = as_json("inspect", "schemas", "bak.orders", *rest)[-1]["options"]
    assert latest["snapshot.num-retained.max"] == "20" and latest["snapshot.num-retained.min"] == "5"
    target_files = as_json("inspect", "files", "bak.orders", *rest)
    assert sorted({f["schema_id"] for f in target_files}) == [0, 1, 2]
    assert sorted(as_json("read", "bak.orders", *rest), key=lambda r: (r["dt"], r["id"])) == want
    assert rows(pypaimon, server, "bak", "orders") == want
    java = java_hive.read(server.root, "bak", "orders", row_kind=False)
    assert sorted(java, key=lambda r: (r["dt"], r["id"])) == want
    [again] = as_json(*args)
    assert again["action"] == "up-to-date" and len(commits(server, "bak.orders")) == 1

    # the run stops after the server made schema 1 (the connection drops on the second ALTER):
    # the table is kept, and the next run replays schema 2 only, copies and commits once
    server.inject("alterTable", 503, times=None, when=lambda c: len(server.calls_of("alterTable")) > 3)
    stopped = [*args[:3], "bak.resumed", *args[4:]]
    run(*stopped, code=8)
    server.clear_faults()
    assert [s[0] for s in schemas_of(server.table_path("bak", "resumed"))] == [0, 1]
    assert not commits(server, "bak.resumed")
    assert as_json(*stopped, "--dry-run")[0]["action"] == "resume"
    alters = len(server.calls_of("alterTable"))
    [resumed] = as_json(*stopped)
    assert resumed["action"] == "resume" and resumed["snapshot_id"] == 1
    assert len(server.calls_of("alterTable")) == alters + 1
    assert schemas_of(server.table_path("bak", "resumed")) == source_schemas
    assert rows(pypaimon, server, "bak", "resumed") == want


def test_clone_into_rest_refuses_a_server_that_replays_the_history_otherwise(
        server: RestCatalogServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose ALTER gives the added column another field id than the source's: the
    clone is refused naming the difference (exit 4), the table it created dropped again,
    nothing committed; the old files would be misread under such a schema."""
    wh = evolved_source(tmp_path)
    real = server.op_alterTable

    def skips_an_id(p: dict[str, str], q: dict[str, str], body: Any) -> Any:
        changes = body["changes"]
        if any(c["action"] == "addColumn" for c in changes):  # draws one field id more first
            changes = [{"action": "addColumn", "fieldNames": ["tmp"], "dataType": "INT"},
                       {"action": "dropColumn", "fieldNames": ["tmp"]}, *changes]
        return real(p, q, {**body, "changes": changes})

    monkeypatch.setattr(server, "op_alterTable", skips_an_id)
    res = run("clone", "shop.orders", "--target", "bak.orders", *target(server), "-w", wh, code=4)
    assert "did not replay the source's schema history on bak.orders" in res.stderr
    assert "column w has field id 5, expected 4" in res.stderr and "dropped it again" in res.stderr
    assert ("bak", "orders") not in server.tables and not commits(server, "bak.orders")
    assert not (server.root / "bak.db" / "orders").exists()
    assert "highest field id 5, expected 4" in res.stderr
    # nothing is left in the way: against a server that replays faithfully the same clone goes through
    monkeypatch.setattr(server, "op_alterTable", real)
    [row] = as_json("clone", "shop.orders", "--target", "bak.orders", *target(server), "-w", wh)
    assert row["action"] == "create" and row["snapshot_id"] == 1


def _catalog(server: RestCatalogServer) -> list[str]:
    return [x for k, v in server.client_options().items() for x in ("--catalog-option", f"{k}={v}")]


@pytest.mark.pypaimon
def test_clone_from_hive_into_a_rest_catalog(server: RestCatalogServer, hive_metastore: HiveMetastoreServer,
                                             java_hive: JavaPaimon, pypaimon: PyPaimon, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A Hive table cloned into a REST catalog as a Paimon table into one: the server creates the
    table, the files go to the location it returns, one commit through its endpoint; the dry
    run lists exactly the copies, a re-run commits nothing, an interrupted run is finished by
    the next; pypaimon 2.1 (through the server), Java 0.9 (on the table's directory) and we
    (through the server) read it row for row as the Hive data."""
    wh = tmp_path / "hive"
    db = fresh_db("clhr")
    expected = _norm(make_hive_table(hive_metastore, wh, db, "sales", "parquet", partitioned=True))
    args = ["clone", f"{db}.sales", "--clone-from", "hive", "--target", "bak.sales", *cat_args(hive_metastore, wh),
            *target(server), "--target-table-conf", "snapshot.num-retained.max=20"]
    plan = as_json(*args, "--dry-run")
    placeholder = "<location the server gives bak.sales>"
    assert len(plan) == 4 and all(r["action"] == "create" and r["state"] == "copy" for r in plan), plan
    assert all(r["file"].startswith(placeholder + "/dt=") and "/bucket-0/" in r["file"] for r in plan), plan
    assert ("bak", "sales") not in server.tables

    [row] = as_json(*args)
    assert row["action"] == "create" and row["files_copied"] == 4 and row["snapshot_id"] == 1
    location = server.table_path("bak", "sales")
    copied = {str(p.relative_to(location)) for p in Path(location).rglob("*.parquet")}
    assert copied == {r["file"][len(placeholder) + 1:] for r in plan}
    assert [c["snapshot"]["id"] for c in commits(server, "bak.sales")] == [1]  # through the server
    schema = json.loads((Path(location) / "schema" / "schema-0").read_text())
    assert schema["options"]["bucket"] == "-1" and schema["options"]["snapshot.num-retained.max"] == "20"
    assert _norm(as_json("read", "bak.sales", *_catalog(server))) == expected
    assert _norm(pypaimon.with_catalog(server.client_options()).read(server.warehouse, "bak", "sales")) == expected
    assert _norm(java_hive.read(server.root, "bak", "sales", row_kind=False)) == expected
    [again] = as_json(*args)
    assert again["action"] == "up-to-date" and again["files_copied"] == 0 and len(commits(server, "bak.sales")) == 1

    # a run stopped after the server created the table and one file was copied: the next run
    # finishes it with one commit (as into any target, a Hive file is never copied over a file
    # no snapshot names, so the copies left behind are not reused)
    from paimon_cli.core.operation import clone as operation_clone

    real, done = operation_clone.copy_file, []

    def one_then_stop(source: Any, dst: Any, f: Any) -> None:
        if done:  # the second file: half written, then the connection drops
            with dst.file_io.open_output(f.target) as out:
                out.write(b"partial")
            raise OSError("connection reset")
        real(source, dst, f)
        done.append(f)

    monkeypatch.setattr(operation_clone, "copy_file", one_then_stop)
    stopped = [*args[:5], "bak.resumed", *args[6:], "--parallelism", "1"]
    assert CliRunner().invoke(app, stopped).exit_code != 0
    monkeypatch.setattr(operation_clone, "copy_file", real)
    assert ("bak", "resumed") in server.tables and not commits(server, "bak.resumed")
    [resumed] = as_json(*stopped)
    assert (resumed["action"], resumed["files_copied"], resumed["snapshot_id"]) == ("overwrite", 4, 1)
    assert [c["snapshot"]["id"] for c in commits(server, "bak.resumed")] == [1]
    assert _norm(pypaimon.with_catalog(server.client_options()).read(server.warehouse, "bak", "resumed")) == expected


def test_clone_from_hive_into_rest_refuses_a_table_the_server_changed(
        server: RestCatalogServer, hive_metastore: HiveMetastoreServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that does not create the table as sent (here: another column type) is refused
    before any file is copied, and the table it made is dropped again."""
    wh = tmp_path / "hive"
    db = fresh_db("clhx")
    make_hive_table(hive_metastore, wh, db, "sales", "parquet", partitioned=True)
    real = server.op_createTable

    def retyped(p: dict[str, str], q: dict[str, str], body: Any) -> Any:
        for f in body["schema"]["fields"]:
            if f["name"] == "score":
                f["type"] = "FLOAT"
        return real(p, q, body)

    monkeypatch.setattr(server, "op_createTable", retyped)
    res = run("clone", f"{db}.sales", "--clone-from", "hive", "--target", "bak.sales",
              *cat_args(hive_metastore, wh), *target(server), code=4)
    assert "did not create bak.sales as sent" in res.stderr and "score" in res.stderr
    assert ("bak", "sales") not in server.tables and not commits(server, "bak.sales")
    assert not (server.root / "bak.db" / "sales").exists()


def test_clone_into_rest_refuses_a_history_the_api_cannot_replay(server: RestCatalogServer, tmp_path: Path) -> None:
    """A schema step no ALTER of the REST API makes (here columns reordered, as Java's
    ``ALTER ... AFTER`` of an existing column does) is refused before the server is asked to
    create anything (exit 1), naming the step."""
    from dataclasses import replace

    from paimon_cli.core.api import Warehouse

    wh = evolved_source(tmp_path)
    table = Warehouse(wh).catalog.get_table("shop.orders")
    latest = table.schema
    reordered = replace(latest, id=latest.id + 1, fields=[latest.fields[1], latest.fields[0], *latest.fields[2:]])
    assert table.schema_manager.publish_copy(reordered)
    res = run("clone", "shop.orders", "--target", "bak.orders", *target(server), "-w", wh, code=1)
    assert "schema 3 of the source cannot be made from schema 2 through the REST API" in res.stderr
    assert "columns in the order id, label, n, dt, w, expected label, id, n, dt, w" in res.stderr
    assert not server.calls_of("createTable") and ("bak", "orders") not in server.tables


def test_schema_changes_between_make_the_next_schema() -> None:
    """The replayed ALTER makes the source's next schema: ids drawn in the same order, added
    columns at their place, a dropped name reused by a rename, options and comment."""
    from dataclasses import replace

    from paimon_cli.core.catalog.clone import schema_changes_between, server_differences
    from paimon_cli.core.data.types import BigIntType, DataField, IntType, VarCharType
    from paimon_cli.core.schema.schema_change import apply_changes
    from paimon_cli.core.schema.schema_manager import new_table_schema
    from paimon_cli.core.schema.table_schema import Schema

    old = new_table_schema(Schema([DataField(0, "a", IntType(nullable=False)), DataField(1, "b", IntType()),
                                   DataField(2, "c", VarCharType())], [], ["a"], {"bucket": "1", "x": "1"}))
    new = replace(old, id=1, highest_field_id=4, comment="t", options={"bucket": "1", "y": "2"},
                  fields=[DataField(4, "first", IntType()), old.fields[0], DataField(3, "mid", IntType()),
                          DataField(1, "c", BigIntType())])
    changes = schema_changes_between(old, new)
    assert server_differences(apply_changes(old, changes, has_snapshots=False), new) == []
    # nothing but the time changed: the step still takes an id
    assert apply_changes(new, schema_changes_between(new, new), has_snapshots=False).id == 2


def test_clone_into_an_empty_rest_table_of_the_latest_schema_is_no_resume(server: RestCatalogServer,
                                                                         tmp_path: Path) -> None:
    """An empty REST target made with the latest schema (``--meta-only``) whose columns are the
    source's first: not a replay stopped half-way (its options are the latest's), so the clone
    copies into it as into any existing target."""
    wh = str(tmp_path / "src")
    data = tmp_path / "in.csv"
    run("create", "shop.ev", "--schema", "id BIGINT, v STRING", "-w", wh)
    data.write_text("id,v\n1,a\n")
    run("write", "shop.ev", str(data), "-w", wh)
    run("alter", "shop.ev", "--set", "file.compression=gzip", "-w", wh)
    args = ["clone", "shop.ev", "--target", "bak.ev", *target(server), "-w", wh]
    run(*args, "--meta-only")
    [row] = as_json(*args)
    assert row["action"] == "overwrite" and row["snapshot_id"] == 1 and not server.calls_of("alterTable")
    assert as_json("read", "bak.ev", *_catalog(server)) == [{"id": 1, "v": "a"}]
