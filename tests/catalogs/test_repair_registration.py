"""``repair`` registers what storage holds and the metastore lacks (Java's repairCatalog /
repairDatabase / repairTable on a Hive and a JDBC catalog): tables whose metastore entries were
removed behind the catalog's back, and tables (and databases) written through a filesystem
catalog on the same warehouse. A dry run lists exactly what a run registers and changes
nothing; a second run registers nothing; nothing is ever dropped."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.jdbc_store import JdbcCatalogStore
from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, fresh_db

SCHEMA = "id INT, v STRING"


def cli(*args: str, expect: int = 0) -> Any:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == expect, f"{args}: exit {res.exit_code}\n{res.stdout}\n{res.stderr}"
    return res


def cli_json(*args: str) -> Any:
    return json.loads(cli(*args, "-o", "json").stdout)


def options_args(opts: dict[str, str]) -> list[str]:
    return [a for k, v in opts.items() for a in ("--catalog-option", f"{k}={v}")]


def registered(rows: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(table, hint, location) of each registration; the one-table form has no table column."""
    return [(r.get("table", ""), r["hint"], r["repaired"]) for r in rows if r["action"] == "register"]


def write(wh_args: list[str], name: str, tmp: Path, n: int) -> None:
    p = tmp / f"{name}.csv"
    p.write_text("id,v\n" + "".join(f"{i},x{i}\n" for i in range(n)))
    cli("write", name, str(p), *wh_args)


def tree(root: Path) -> list[tuple[str, bytes]]:
    return sorted((str(p.relative_to(root)), p.read_bytes()) for p in root.rglob("*") if p.is_file())


def test_hive_repair_registers_tables_and_databases_found_on_storage(
        hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db, db2 = fresh_db("rep"), fresh_db("rep")
    c = options_args({"metastore": "hive", "uri": hive_metastore.uri, "warehouse": wh.as_uri()})
    fs = ["-w", str(wh)]
    for t in ("a", "b"):
        cli("create", f"{db}.{t}", "--schema", SCHEMA, *c)
    write(c, f"{db}.a", tmp_path, 3)
    cli("create", f"{db}.c", "--schema", SCHEMA, *fs)  # on storage only
    write(fs, f"{db}.c", tmp_path, 2)
    cli("create", f"{db2}.d", "--schema", SCHEMA, *fs)  # its database is on storage only
    with client(hive_metastore) as hms:
        hms.drop_table(db, "a", delete_data=False)
    assert [t["table"] for t in cli_json("list", db, *c)] == ["b"]
    before = tree(wh)

    plan = cli_json("repair", db, "--dry-run", *c)
    loc = (wh / f"{db}.db").as_uri().replace("file:///", "file:/")
    assert [(n, h) for n, h, _ in registered(plan)] == [(f"{db}.a", "metastore table"), (f"{db}.c", "metastore table")]
    assert all(r.endswith(n.split(".")[1]) for n, _, r in registered(plan))
    assert tree(wh) == before and [t["table"] for t in cli_json("list", db, *c)] == ["b"]

    res = cli("repair", db, *c, "-o", "json")
    assert registered(json.loads(res.stdout)) == registered(plan)
    assert [t["table"] for t in cli_json("list", db, *c)] == ["a", "b", "c"]
    with client(hive_metastore) as hms:
        assert hms.get_table(db, "c").sd.location.startswith(loc)
    assert not registered(cli_json("repair", db, "--dry-run", *c))  # a second run registers nothing
    assert not registered(cli_json("repair", db, *c))

    # DB.T whose database the metastore lacks: both registered
    plan = cli_json("repair", f"{db2}.d", "--dry-run", *c)
    assert [h for _, h, _ in registered(plan)] == ["metastore database", "metastore table"]
    with client(hive_metastore) as hms:
        assert db2 not in hms.list_databases()
    cli("repair", f"{db2}.d", *c)
    assert [t["table"] for t in cli_json("list", db2, *c)] == ["d"]

    # Java's HiveCatalog sees them and reads them
    spec = hive_spec(hive_metastore, wh)
    assert sorted(java_hive.list_tables(spec, db)) == ["a", "b", "c"]
    assert java_hive.list_tables(spec, db2) == ["d"]
    assert sorted(r["id"] for r in java_hive.read(spec, db, "a", row_kind=False)) == [0, 1, 2]
    assert sorted(r["id"] for r in java_hive.read(spec, db, "c", row_kind=False)) == [0, 1]


def test_hive_repair_of_a_table_without_files_drops_nothing(hive_metastore: HiveMetastoreServer,
                                                              tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("rep")
    c = options_args({"metastore": "hive", "uri": hive_metastore.uri, "warehouse": wh.as_uri()})
    cli("create", f"{db}.a", "--schema", SCHEMA, *c)
    cli("repair", f"{db}.nope", *c, expect=3)  # neither listed nor on storage
    cli("repair", "nodb_" + db, *c, expect=3)  # a database neither listed nor on storage
    with client(hive_metastore) as hms:
        assert "nodb_" + db not in hms.list_databases()
        assert hms.list_tables(db) == ["a"]


def test_jdbc_repair_registers_what_storage_holds(jdbc_options: Callable[..., dict[str, str]],
                                                  tmp_path: Path) -> None:
    opts = jdbc_options()
    c, fs = options_args(opts), ["-w", opts["warehouse"]]
    for t in ("a", "b"):
        cli("create", f"s.{t}", "--schema", SCHEMA, *c)
    write(c, "s.a", tmp_path, 3)
    cli("create", "t.c", "--schema", SCHEMA, *fs)  # table and database on storage only
    store = JdbcCatalogStore.from_options(opts)
    try:
        store.unregister_table("s", "a")  # behind the catalog's back
    finally:
        store.close()
    before = tree(Path(opts["warehouse"]))

    plan = cli_json("repair", "--dry-run", *c)  # the whole catalog
    assert [(n, h) for n, h, _ in registered(plan)] == [("t", "metastore database"), ("s.a", "metastore table"),
                                                        ("t.c", "metastore table")]
    assert tree(Path(opts["warehouse"])) == before
    assert [t["table"] for t in cli_json("list", "s", *c)] == ["b"]
    cli("list", "t", *c, expect=3)

    assert registered(cli_json("repair", *c)) == registered(plan)
    assert [t["table"] for t in cli_json("list", "s", *c)] == ["a", "b"]
    assert [t["table"] for t in cli_json("list", "t", *c)] == ["c"]
    assert sorted(r["id"] for r in cli_json("read", "s.a", *c)) == [0, 1, 2]
    assert not registered(cli_json("repair", "--dry-run", *c))
    assert not registered(cli_json("repair", *c))


def test_jdbc_repair_db_and_table_forms(jdbc_options: Callable[..., dict[str, str]]) -> None:
    opts = jdbc_options()
    c, fs = options_args(opts), ["-w", opts["warehouse"]]
    cli("create", "s.a", "--schema", SCHEMA, *c)
    cli("create", "s.b", "--schema", SCHEMA, *fs)
    cli("create", "u.d", "--schema", SCHEMA, *fs)
    plan = cli_json("repair", "s,u.d", "--dry-run", *c)
    assert [(n, h) for n, h, _ in registered(plan)] == [("s.b", "metastore table"), ("u.d", "metastore database"),
                                                        ("u.d", "metastore table")]
    cli("list", "u", *c, expect=3)
    assert registered(cli_json("repair", "s,u.d", *c)) == registered(plan)
    assert [t["table"] for t in cli_json("list", "s", *c)] == ["a", "b"]
    assert [t["table"] for t in cli_json("list", "u", *c)] == ["d"]
    assert not registered(cli_json("repair", "u.d", "--dry-run", *c))


def test_jdbc_repair_on_an_object_store(s3_server: Any, s3_warehouse: str, tmp_path: Path) -> None:
    """An object store has no folders: a database is on storage when objects are under its
    prefix, so a name with nothing there is not registered."""
    fso = [a for pair in s3_server.fs_option_pairs() for a in ("--fs-option", pair)]
    c = options_args({"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path / 'catalog.db'}",
                      "warehouse": s3_warehouse}) + fso
    cli("create", "s.a", "--schema", SCHEMA, *c)
    cli("create", "s.b", "--schema", SCHEMA, "-w", s3_warehouse, *fso)
    cli("create", "u.d", "--schema", SCHEMA, "-w", s3_warehouse, *fso)
    cli("repair", "nothing_here", *c, expect=3)
    assert [(n, h) for n, h, _ in registered(cli_json("repair", "--dry-run", *c))] == [
        ("u", "metastore database"), ("s.b", "metastore table"), ("u.d", "metastore table")]
    cli("repair", *c)
    assert [t["table"] for t in cli_json("list", "s", *c)] == ["a", "b"]
    assert [t["table"] for t in cli_json("list", "u", *c)] == ["d"]
    cli("list", "nothing_here", *c, expect=3)


def test_hive_repair_adds_the_partitions_of_a_table_it_registers(hive_metastore: HiveMetastoreServer,
                                                                  tmp_path: Path) -> None:
    """As Java's repairTable: a registered ``metastore.partitioned-table`` table gets the
    partitions its data files are in."""
    wh = tmp_path / "wh"
    db = fresh_db("rep")
    c = options_args({"metastore": "hive", "uri": hive_metastore.uri, "warehouse": wh.as_uri()})
    fs = ["-w", str(wh)]
    cli("create", f"{db}.p", "--schema", "id INT, dt STRING", "--partition-by", "dt",
        "--option", "metastore.partitioned-table=true", *fs)
    p = tmp_path / "p.csv"
    p.write_text("id,dt\n1,2024-01-01\n2,2024-01-02\n")
    cli("write", f"{db}.p", str(p), *fs)
    cli("repair", f"{db}.p", *c)
    with client(hive_metastore) as hms:
        assert sorted(part.values for part in hms.list_partitions(db, "p")) == [["2024-01-01"], ["2024-01-02"]]
        assert [k.name for k in hms.get_table(db, "p").partitionKeys] == ["dt"]
    assert not [r for r in cli_json("repair", f"{db}.p", "--dry-run", *c) if r["action"] != "keep"]


def test_hive_repair_registers_a_table_with_option_external_as_external(hive_metastore: HiveMetastoreServer,
                                                                        tmp_path: Path) -> None:
    """Java's usingExternalTable: the table's ``EXTERNAL=TRUE`` option makes it an EXTERNAL
    table (whose files ``drop`` keeps), whatever the catalog's ``table.type``."""
    wh = tmp_path / "wh"
    db = fresh_db("rep")
    c = options_args({"metastore": "hive", "uri": hive_metastore.uri, "warehouse": wh.as_uri(),
                      "sync-all-properties": "false"})  # the option does not reach the parameters
    cli("create", f"{db}.e", "--schema", SCHEMA, "--option", "EXTERNAL=TRUE", "-w", str(wh))
    cli("create", f"{db}.m", "--schema", SCHEMA, "-w", str(wh))
    cli("repair", db, *c)
    with client(hive_metastore) as hms:
        assert hms.get_table(db, "e").tableType == "EXTERNAL_TABLE"
        assert hms.get_table(db, "m").tableType == "MANAGED_TABLE"


def test_hive_dry_run_lists_the_metastore_partitions_the_run_adds(hive_metastore: HiveMetastoreServer,
                                                                  tmp_path: Path) -> None:
    """A table the run registers with ``metastore.partitioned-table`` (or
    ``metastore.tag-to-partition``) gets its partitions (tags) added right after: the dry run
    lists them too, so its rows are exactly the run's."""
    wh = tmp_path / "wh"
    db = fresh_db("rep")
    c = options_args({"metastore": "hive", "uri": hive_metastore.uri, "warehouse": wh.as_uri()})
    cli("create", f"{db}.p", "--schema", "id INT, v STRING, dt STRING", "--partition-by", "dt",
        "--option", "metastore.partitioned-table=true", *c)
    src = tmp_path / "p.csv"
    src.write_text("id,v,dt\n1,a,2024-01-01\n2,b,2024-01-02\n3,c,2024-01-02\n")
    cli("write", f"{db}.p", str(src), *c)
    cli("create", f"{db}.t", "--schema", SCHEMA, "--option", "metastore.tag-to-partition=dt", *c)
    write(c, f"{db}.t", tmp_path, 2)
    cli("tag", "create", f"{db}.t", "2024-05-01", *c)
    with client(hive_metastore) as hms:
        assert len(hms.list_partitions(db, "p")) == 2
        hms.drop_table(db, "p", delete_data=False)
        hms.drop_table(db, "t", delete_data=False)
    before = tree(wh)

    for name, added in (("p", ["dt=2024-01-01", "dt=2024-01-02"]), ("t", ["dt=2024-05-01"])):
        plan = cli_json("repair", f"{db}.{name}", "--dry-run", *c)
        assert [r["hint"] for r in plan if r["action"] == "add"] == [f"metastore partition {p}" for p in added]
        assert tree(wh) == before
        with client(hive_metastore) as hms:
            assert name not in hms.list_tables(db)
        done = cli_json("repair", f"{db}.{name}", *c)
        assert done == plan  # the dry run printed exactly what the run did
        with client(hive_metastore) as hms:
            assert sorted("/".join(f"dt={v}" for v in p.values) for p in hms.list_partitions(db, name)) == added
        assert not [r for r in cli_json("repair", f"{db}.{name}", "--dry-run", *c) if r["action"] != "keep"]
