"""`create`d and `alter`ed tables are accepted by the real Java Paimon 0.9.

Why: a schema file is the contract every engine reads first. If our CLI writes one that
Java parses differently (other field ids, other key order, a type spelling Java does not
know), Java writers would silently produce files our readers map wrongly, or refuse the
table outright. So: Java writes into and reads from every table the CLI creates; the same
alter sequence applied by the CLI and by Java yields byte-identical schema files (save
``timeMillis``); and requests Java refuses are refused by the CLI as well, writing nothing.

Java's catalog (CachingCatalog) keeps a table's schema from its first load. After the CLI
alters a table, Java is addressed through another spelling of the same warehouse
(``file://<wh>``) so it loads the new schema, as a fresh Java process would.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.schema.table_schema import TableSchema

from .java_harness import JavaPaimon, JavaPaimonError

pytestmark = pytest.mark.java

DB = "db"


# ---------------------------------------------------------------------------- helpers


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    return CliRunner()


@pytest.fixture
def wh(tmp_path: Path) -> str:
    path = tmp_path / "wh"
    path.mkdir()
    return str(path)


def cli(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


def cli_ok(runner: CliRunner, *args: str) -> Any:
    result = cli(runner, *args)
    assert result.exit_code == 0, (args, result.output)
    return result


def fresh(wh: str) -> str:
    """Another spelling of ``wh``: Java opens a new catalog and re-reads every schema."""
    return "file://" + wh


def schema_file(wh: str, table: str, sid: int) -> Path:
    return Path(wh) / f"{DB}.db" / table / "schema" / f"schema-{sid}"


def schema_text(wh: str, table: str, sid: int) -> str:
    return schema_file(wh, table, sid).read_text("utf-8")


def our_schema(wh: str, table: str) -> TableSchema:
    return FileSystemCatalog(wh).get_table(f"{DB}.{table}").schema


_TIME_MILLIS = re.compile(r'"timeMillis" : \d+')


def masked(text: str) -> str:
    return _TIME_MILLIS.sub('"timeMillis" : <masked>', text)


def parsed_without_time(text: str) -> dict[str, Any]:
    obj = json.loads(text)
    assert isinstance(obj.pop("timeMillis"), int)
    return obj


def assert_same_schema_file(wh: str, ours: str, javas: str, sid: int) -> None:
    a, b = schema_text(wh, ours, sid), schema_text(wh, javas, sid)
    assert parsed_without_time(a) == parsed_without_time(b), f"schema-{sid}: parsed JSON differs"
    assert masked(a) == masked(b), f"schema-{sid}: file text differs beyond timeMillis"


def assert_java_sees_our_schema(jp: JavaPaimon, wh: str, table: str) -> None:
    """Java's $schemas and $options show exactly what our schema files hold."""
    ours = FileSystemCatalog(wh).get_table(f"{DB}.{table}").schema_manager.list_all()
    res = jp.system_table(fresh(wh), DB, table, "schemas")
    cols = res["columns"]
    rows = sorted((dict(zip(cols, r, strict=True)) for r in res["rows"]), key=lambda r: r["schema_id"])
    assert [r["schema_id"] for r in rows] == [s.id for s in ours]
    for row, s in zip(rows, ours, strict=True):
        assert json.loads(row["fields"]) == [f.to_json() for f in s.fields]
        assert json.loads(row["partition_keys"]) == s.partition_keys
        assert json.loads(row["primary_keys"]) == s.primary_keys
        assert json.loads(row["options"]) == s.options
        assert row["comment"] == s.comment
        got = dt.datetime.fromisoformat(row["update_time"])
        assert got == dt.datetime.fromtimestamp(s.time_millis // 1000).replace(microsecond=(s.time_millis % 1000) * 1000)
    res = jp.system_table(fresh(wh), DB, table, "options")
    assert {k: v for k, v in res["rows"]} == ours[-1].options


def java_rows(jp: JavaPaimon, warehouse: str, table: str, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    rows = jp.read(warehouse, DB, table, row_kind=False)
    return sorted(rows, key=lambda r: tuple((r[k] is None, r[k]) for k in keys))


def java_form(row: dict[str, Any]) -> dict[str, Any]:
    """What Java's read returns for a row we wrote: MAP as [[k, v], ...] pairs."""
    return {k: ([[mk, mv] for mk, mv in v.items()] if isinstance(v, dict) and k.startswith("c_map") else v)
            for k, v in row.items()}


# ---------------------------------------------------------------------------- tables the CLI creates

ALL_TYPES = (
    "id INT NOT NULL, dt STRING NOT NULL, c_bigint BIGINT, c_string STRING, c_dec10 DECIMAL(10,2), "
    "c_dec25 DECIMAL(25,4), c_bool BOOLEAN, c_date DATE, c_ts3 TIMESTAMP(3), c_ts6 TIMESTAMP(6), "
    "c_bytes BYTES, c_double DOUBLE, c_float FLOAT, c_small SMALLINT, c_tiny TINYINT, c_varchar VARCHAR(20), "
    "c_char CHAR(5), c_array ARRAY<INT>, c_map MAP<STRING,INT>, c_row ROW<a INT, b STRING>"
)
ALL_TYPES_SQL = [
    ("id", "INT NOT NULL"), ("dt", "STRING NOT NULL"), ("c_bigint", "BIGINT"), ("c_string", "STRING"),
    ("c_dec10", "DECIMAL(10, 2)"), ("c_dec25", "DECIMAL(25, 4)"), ("c_bool", "BOOLEAN"), ("c_date", "DATE"),
    ("c_ts3", "TIMESTAMP(3)"), ("c_ts6", "TIMESTAMP(6)"), ("c_bytes", "BYTES"), ("c_double", "DOUBLE"),
    ("c_float", "FLOAT"), ("c_small", "SMALLINT"), ("c_tiny", "TINYINT"), ("c_varchar", "VARCHAR(20)"),
    ("c_char", "CHAR(5)"), ("c_array", "ARRAY<INT>"), ("c_map", "MAP<STRING, INT>"), ("c_row", "ROW<a INT, b STRING>"),
]


def all_types_row(i: int, part: str, version: int) -> dict[str, Any]:
    """Deterministic row; every 4th has NULLs in every value column. Floats are exact in float32."""
    row: dict[str, Any] = {name: None for name, _ in ALL_TYPES_SQL}
    row.update(id=i, dt=part)
    if i % 4 == 0:
        return row
    v = version
    row.update(
        c_bigint=i * 10_000_000_000 + v,
        c_string=f"s{i}-v{v}-ünï",
        c_dec10=decimal.Decimal(f"{i * 100 + v}.{i:02d}"),
        c_dec25=decimal.Decimal(f"-{i}1234567890123456789.{v:04d}"),
        c_bool=(i + v) % 2 == 0,
        c_date=dt.date(2024, 2, 28) + dt.timedelta(days=i + v),
        c_ts3=dt.datetime(2024, 3, 1, 12, 30, 15, 123000) + dt.timedelta(hours=i, milliseconds=v),
        c_ts6=dt.datetime(1999, 12, 31, 23, 59, 59, 654321) + dt.timedelta(minutes=i, microseconds=v),
        c_bytes=bytes([i, v, 0, 255]),
        c_double=i * 1.5 + v,
        c_float=i * 0.25 + v,
        c_small=-16000 + i * 300 + v,
        c_tiny=-128 + i + v,
        c_varchar=f"vc-{i}-{v}",
        c_char=f"c{i}{v}"[:5],
        c_array=[i, None, v] if i % 3 else [],
        c_map={"k": i, "n": None} if i % 3 else {},
        c_row={"a": i, "b": f"b{v}"} if i % 5 else {"a": None, "b": "only-b"},
    )
    return row


def test_java_writes_and_reads_partitioned_pk_table_with_every_type(runner: CliRunner, wh: str, java_paimon: JavaPaimon) -> None:
    cli_ok(runner, "create", "db.all_types", "--schema", ALL_TYPES, "--primary-key", "id,dt",
           "--partition-by", "dt", "--option", "bucket=3", "-w", wh)
    schema = our_schema(wh, "all_types")
    # Java's asSQLString quotes nested field names
    assert [f.type.as_sql() for f in schema.fields] == [t.replace("a INT, b", "`a` INT, `b`") for _, t in ALL_TYPES_SQL]
    assert schema.options == {"bucket": "3"}

    model: dict[tuple[int, str], dict[str, Any]] = {}
    batches = [
        [all_types_row(i, "2024-01-01", 1) for i in range(1, 9)] + [all_types_row(i, "2024-01-02", 1) for i in range(1, 6)],
        [all_types_row(i, "2024-01-01", 2) for i in (2, 3)] + [all_types_row(7, "2024-01-03", 2)],
    ]
    for n, batch in enumerate(batches, start=1):
        assert java_paimon.write(wh, DB, "all_types", batch) == n
        model.update({(r["id"], r["dt"]): r for r in batch})
    expected = sorted((java_form(r) for r in model.values()), key=lambda r: (r["dt"], r["id"]))
    assert java_rows(java_paimon, wh, "all_types", ("dt", "id")) == expected
    assert_java_sees_our_schema(java_paimon, wh, "all_types")


def test_java_writes_and_reads_append_table(runner: CliRunner, wh: str, java_paimon: JavaPaimon) -> None:
    cli_ok(runner, "create", "db.events", "--schema",
           "id INT, dt STRING, name VARCHAR(20), amount DECIMAL(12,3), ts TIMESTAMP(6), flag BOOLEAN",
           "--partition-by", "dt", "--option", "bucket=-1", "--option", "file.format=parquet", "-w", wh)
    rows = [{"id": i, "dt": "2024-05-01" if i % 2 else "2024-05-02", "name": None if i % 5 == 0 else f"n{i}",
             "amount": decimal.Decimal(f"{i}.{i:03d}"), "ts": dt.datetime(2024, 5, 1, 8) + dt.timedelta(seconds=i, microseconds=i),
             "flag": i % 3 == 0} for i in range(1, 16)]
    assert java_paimon.write(wh, DB, "events", rows[:10]) == 1
    assert java_paimon.write(wh, DB, "events", rows[10:]) == 2
    # an append table keeps every row, duplicates included
    assert java_paimon.write(wh, DB, "events", rows[:1]) == 3
    expected = sorted(rows + rows[:1], key=lambda r: r["id"])
    assert sorted(java_paimon.read(wh, DB, "events", row_kind=False), key=lambda r: r["id"]) == expected
    assert our_schema(wh, "events").primary_keys == []
    assert_java_sees_our_schema(java_paimon, wh, "events")


def test_java_writes_and_reads_dynamic_bucket_pk_table(runner: CliRunner, wh: str, java_paimon: JavaPaimon) -> None:
    cli_ok(runner, "create", "db.dyn", "--schema", "id INT, dt STRING, v STRING", "--primary-key", "id,dt",
           "--partition-by", "dt", "--option", "bucket=-1", "--option", "dynamic-bucket.target-row-num=3",
           "--option", "file.format=orc", "-w", wh)
    # Java makes primary-key columns NOT NULL; so must we
    assert [f.type.as_sql() for f in our_schema(wh, "dyn").fields] == ["INT NOT NULL", "STRING NOT NULL", "STRING"]
    model: dict[tuple[int, str], dict[str, Any]] = {}
    batches = [
        [{"id": i, "dt": "d1", "v": f"v{i}"} for i in range(1, 11)] + [{"id": i, "dt": "d2", "v": f"v{i}"} for i in range(1, 4)],
        [{"id": i, "dt": "d1", "v": f"v{i}-u"} for i in (1, 5, 9)] + [{"id": i, "dt": "d2", "v": f"w{i}"} for i in range(3, 8)],
    ]
    for n, batch in enumerate(batches, start=1):
        assert java_paimon.write(wh, DB, "dyn", batch) == n
        model.update({(r["id"], r["dt"]): r for r in batch})
    expected = sorted(model.values(), key=lambda r: (r["dt"], r["id"]))
    assert java_rows(java_paimon, wh, "dyn", ("dt", "id")) == expected
    # dynamic bucket mode really was used: rows spread over several buckets of partition d1
    files = java_paimon.system_table(wh, DB, "dyn", "files")
    bucket_col, part_col = files["columns"].index("bucket"), files["columns"].index("partition")
    assert len({r[bucket_col] for r in files["rows"] if "d1" in r[part_col]}) >= 3
    assert_java_sees_our_schema(java_paimon, wh, "dyn")


def test_java_writes_and_reads_table_from_schema_json_file(runner: CliRunner, wh: str, tmp_path: Path,
                                                           java_paimon: JavaPaimon) -> None:
    spec = {
        "fields": [
            {"id": 7, "name": "k", "type": "BIGINT NOT NULL", "description": "the key"},
            {"id": 3, "name": "part", "type": "INT NOT NULL"},
            {"id": 9, "name": "tags", "type": {"type": "ARRAY", "element": "STRING"}},
            {"id": 1, "name": "attrs", "type": {"type": "MAP NOT NULL", "key": "STRING NOT NULL", "value": "DOUBLE"}},
            {"id": 2, "name": "pt", "type": {"type": "ROW", "fields": [
                {"id": 0, "name": "x", "type": "DOUBLE"}, {"id": 4, "name": "y", "type": "DOUBLE"}]}},
        ],
        "partitionKeys": ["part"],
        "primaryKeys": ["k", "part"],
        "options": {"bucket": "2", "file.format": "avro"},
        "comment": "from a file",
    }
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(spec), "utf-8")
    cli_ok(runner, "create", "db.from_json", "--schema", f"@{path}", "-w", wh)
    schema = json.loads(schema_text(wh, "from_json", 0))
    # ids in the file are renumbered from 0 the way Java numbers a new table (nested fields included)
    assert [(f["id"], f["name"]) for f in schema["fields"]] == [(0, "k"), (1, "part"), (2, "tags"), (3, "attrs"), (4, "pt")]
    assert [f["id"] for f in schema["fields"][4]["type"]["fields"]] == [5, 6]
    assert schema["highestFieldId"] == 6
    assert schema["comment"] == "from a file" and schema["fields"][0]["description"] == "the key"

    rows = [
        {"k": 1, "part": 1, "tags": ["a", None], "attrs": {"x": 1.5}, "pt": {"x": 1.0, "y": -2.5}},
        {"k": 2, "part": 1, "tags": [], "attrs": {}, "pt": None},
        {"k": 3, "part": 2, "tags": None, "attrs": {"n": None, "m": 0.25}, "pt": {"x": 0.5, "y": None}},
    ]
    assert java_paimon.write(wh, DB, "from_json", rows) == 1
    expected = [dict(r, attrs=[[k, v] for k, v in r["attrs"].items()]) for r in rows]
    assert java_rows(java_paimon, wh, "from_json", ("part", "k")) == expected
    assert_java_sees_our_schema(java_paimon, wh, "from_json")

    # the same request made to Java gives the same schema-0 (Java cannot carry the
    # description through the harness, so compare that field apart)
    java_paimon.create_table(wh, DB, "from_json_java",
                             [("k", "BIGINT NOT NULL"), ("part", "INT NOT NULL"), ("tags", "ARRAY<STRING>"),
                              ("attrs", "MAP<STRING NOT NULL, DOUBLE> NOT NULL"), ("pt", "ROW<x DOUBLE, y DOUBLE>")],
                             ["k", "part"], ["part"], {"bucket": "2", "file.format": "avro"})
    java_schema = parsed_without_time(schema_text(wh, "from_json_java", 0))
    ours = parsed_without_time(schema_text(wh, "from_json", 0))
    assert ours.pop("comment") == "from a file" and "comment" not in java_schema
    assert ours["fields"][0].pop("description") == "the key"
    assert ours == java_schema


def _java_create_with_comments(jp: JavaPaimon, warehouse: str, table: str, columns: list[tuple[str, str, str | None]],
                               primary_keys: list[str], partition_keys: list[str], options: dict[str, str],
                               comment: str | None) -> None:
    """Java's own Schema.Builder with column descriptions and a table comment (the harness has no such call)."""
    jvm = jp._gateway.jvm  # noqa: SLF001 - the harness exposes no column-comment DDL
    p = jvm.org.apache.paimon
    b = p.schema.Schema.newBuilder()
    for name, sql, desc in columns:
        dtype = (p.types.DataTypeJsonParser.parseAtomicTypeSQLString(sql) if "<" not in sql
                 else p.utils.JsonSerdeUtil.fromJson(sql, p.types.DataType._java_lang_class))
        b.column(name, dtype, desc)
    pks, parts = jvm.java.util.ArrayList(), jvm.java.util.ArrayList()
    for k in primary_keys:
        pks.add(k)
    for k in partition_keys:
        parts.add(k)
    b.primaryKey(pks).partitionKeys(parts)
    for k, v in options.items():
        b.option(k, v)
    if comment is not None:
        b.comment(comment)
    catalog = _java_catalog(jp, warehouse)
    catalog.createDatabase(DB, True)
    catalog.createTable(p.catalog.Identifier.create(DB, table), b.build(), False)


def _java_catalog(jp: JavaPaimon, warehouse: str) -> Any:
    p = jp._gateway.jvm.org.apache.paimon  # noqa: SLF001
    opts = p.options.Options()
    opts.set("warehouse", warehouse)
    opts.set("cache-enabled", "false")
    return p.catalog.CatalogFactory.createCatalog(p.catalog.CatalogContext.create(opts))


def _java_alter(jp: JavaPaimon, warehouse: str, table: str, changes: list[Any]) -> None:
    jvm = jp._gateway.jvm  # noqa: SLF001
    lst = jvm.java.util.ArrayList()
    for c in changes:
        lst.add(c)
    _java_catalog(jp, warehouse).alterTable(jvm.org.apache.paimon.catalog.Identifier.create(DB, table), lst, False)


def _java_type(jp: JavaPaimon, sql: str) -> Any:
    return jp._gateway.jvm.org.apache.paimon.types.DataTypeJsonParser.parseAtomicTypeSQLString(sql)  # noqa: SLF001


def test_java_writes_and_reads_commented_table(runner: CliRunner, wh: str, java_paimon: JavaPaimon) -> None:
    cli_ok(runner, "create", "db.commented", "--schema",
           "id BIGINT NOT NULL COMMENT 'order id', note STRING COMMENT 'it''s free text, with a comma', qty INT",
           "--primary-key", "id", "--option", "bucket=1", "--comment", "Orders — ünïcode and \"quotes\"", "-w", wh)
    schema = our_schema(wh, "commented")
    assert schema.comment == "Orders — ünïcode and \"quotes\""
    assert [f.description for f in schema.fields] == ["order id", "it's free text, with a comma", None]

    rows = [{"id": 1, "note": "a", "qty": 2}, {"id": 2, "note": None, "qty": None}]
    assert java_paimon.write(wh, DB, "commented", rows) == 1
    assert java_rows(java_paimon, wh, "commented", ("id",)) == rows
    assert_java_sees_our_schema(java_paimon, wh, "commented")

    # Java's Schema.Builder with the same comments writes the same file
    _java_create_with_comments(java_paimon, wh, "commented_java",
                               [("id", "BIGINT NOT NULL", "order id"), ("note", "STRING", "it's free text, with a comma"),
                                ("qty", "INT", None)], ["id"], [], {"bucket": "1"}, "Orders — ünïcode and \"quotes\"")
    assert_same_schema_file(wh, "commented", "commented_java", 0)


# ---------------------------------------------------------------------------- alter parity

TWIN_COLUMNS = [("id", "INT", "the id"), ("dt", "STRING", None), ("name", "VARCHAR(10)", None),
                ("amount", "DECIMAL(10, 2)", "money"), ("extra", "STRING", None)]
TWIN_ROWS = [{"id": i, "dt": f"d{i % 2}", "name": f"n{i}", "amount": decimal.Decimal(f"{i}.25"), "extra": f"x{i}"}
             for i in range(1, 7)]


def test_alter_sequence_matches_java_byte_for_byte(runner: CliRunner, wh: str, java_paimon: JavaPaimon) -> None:
    """A: created and altered by the CLI; B: created and altered by Java. Every schema-N equal."""
    jp = java_paimon
    cli_ok(runner, "create", "db.a", "--schema",
           "id INT COMMENT 'the id', dt STRING, name VARCHAR(10), amount DECIMAL(10,2) COMMENT 'money', extra STRING",
           "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=2",
           "--option", "snapshot.num-retained.max=20", "--comment", "twin", "-w", wh)
    _java_create_with_comments(jp, wh, "b", TWIN_COLUMNS, ["id", "dt"], ["dt"],
                               {"bucket": "2", "snapshot.num-retained.max": "20"}, "twin")
    assert_same_schema_file(wh, "a", "b", 0)
    # both twins hold data, so the alters run against tables with snapshots
    assert jp.write(wh, DB, "a", TWIN_ROWS) == 1
    assert jp.write(wh, DB, "b", TWIN_ROWS) == 1

    sc = jp._gateway.jvm.org.apache.paimon.schema.SchemaChange  # noqa: SLF001
    steps: list[tuple[list[str], list[Any]]] = [
        (["--set", "write-buffer-size=64 mb"], [sc.setOption("write-buffer-size", "64 mb")]),
        (["--set", "snapshot.num-retained.max=30"], [sc.setOption("snapshot.num-retained.max", "30")]),
        (["--unset", "write-buffer-size"], [sc.removeOption("write-buffer-size")]),
        (["--add-column", "note STRING"], [sc.addColumn("note", _java_type(jp, "STRING"))]),
        (["--add-column", "qty BIGINT COMMENT 'how many'"], [sc.addColumn("qty", _java_type(jp, "BIGINT"), "how many")]),
        (["--rename-column", "name:title"], [sc.renameColumn("name", "title")]),
        (["--drop-column", "extra"], [sc.dropColumn("extra")]),
        (["--comment", "twin, renamed"], [sc.updateComment("twin, renamed")]),
        # several changes in one command are one schema version, applied in this order
        (["--set", "a.b=1", "--unset", "snapshot.num-retained.max", "--add-column", "late DOUBLE",
          "--rename-column", "note:memo", "--drop-column", "qty", "--comment", "last"],
         [sc.setOption("a.b", "1"), sc.removeOption("snapshot.num-retained.max"),
          sc.addColumn("late", _java_type(jp, "DOUBLE")), sc.renameColumn("note", "memo"), sc.dropColumn("qty"),
          sc.updateComment("last")]),
    ]
    for sid, (args, java_changes) in enumerate(steps, start=1):
        cli_ok(runner, "alter", "db.a", *args, "-w", wh)
        _java_alter(jp, wh, "b", java_changes)
        assert_same_schema_file(wh, "a", "b", sid)
    final = json.loads(schema_text(wh, "a", len(steps)))
    assert [f["name"] for f in final["fields"]] == ["id", "dt", "title", "amount", "memo", "late"]
    assert final["highestFieldId"] == 7 and final["comment"] == "last"
    assert final["options"] == {"bucket": "2", "a.b": "1"}

    # the nested-type add goes through the harness's own alter call (Java's type parser)
    cli_ok(runner, "alter", "db.a", "--add-column", "r ROW<x INT, y ARRAY<STRING>>", "-w", wh)
    jp.alter_table(fresh(wh), DB, "b", [{"add": ["r", "ROW<x INT, y ARRAY<STRING>>"]}])
    assert_same_schema_file(wh, "a", "b", len(steps) + 1)
    assert json.loads(schema_text(wh, "a", len(steps) + 1))["highestFieldId"] == 10

    # Java still writes and reads A after our alters; old files map by field id
    new_rows = [{"id": 1, "dt": "d1", "title": "t1", "amount": decimal.Decimal("9.99"), "memo": "m",
                 "late": 0.5, "r": {"x": 1, "y": ["p", None]}},
                {"id": 10, "dt": "d0", "title": None, "amount": None, "memo": None, "late": None, "r": None}]
    assert jp.write(fresh(wh), DB, "a", new_rows) == 2
    expected = {(r["id"], r["dt"]): {"id": r["id"], "dt": r["dt"], "title": r["name"], "amount": r["amount"],
                                     "memo": None, "late": None, "r": None} for r in TWIN_ROWS}
    expected.update({(r["id"], r["dt"]): r for r in new_rows})
    assert java_rows(jp, fresh(wh), "a", ("dt", "id")) == sorted(expected.values(), key=lambda r: (r["dt"], r["id"]))
    assert_java_sees_our_schema(jp, wh, "a")


def test_java_twin_created_by_harness_matches_cli_create(runner: CliRunner, wh: str, java_paimon: JavaPaimon) -> None:
    """schema-0 of the every-type table: CLI and Java's Schema.Builder agree byte for byte."""
    cli_ok(runner, "create", "db.ours", "--schema", ALL_TYPES.replace(" NOT NULL", ""), "--primary-key", "id,dt",
           "--partition-by", "dt", "--option", "bucket=3", "--option", "file.format=orc", "-w", wh)
    java_paimon.create_table(wh, DB, "javas", ALL_TYPES_SQL, ["id", "dt"], ["dt"], {"bucket": "3", "file.format": "orc"})
    assert_same_schema_file(wh, "ours", "javas", 0)


# ---------------------------------------------------------------------------- refusal parity

COLS2 = [("id", "INT NOT NULL"), ("v", "STRING")]


def _sql_columns(cols: list[tuple[str, str]]) -> str:
    return ", ".join(f"{n} {t}" for n, t in cols)


REFUSED: dict[str, tuple[list[tuple[str, str]], list[str], list[str], dict[str, str], str]] = {
    # name: (columns, primary key, partition keys, options, what our message must mention)
    "fixed_bucket_pk_without_partition_key": (
        [("id", "INT NOT NULL"), ("dt", "STRING NOT NULL"), ("v", "STRING")], ["id"], ["dt"], {"bucket": "2"}, "dynamic bucket"),
    "partition_key_not_a_column": (COLS2, ["id"], ["nope"], {"bucket": "2"}, "nope"),
    "primary_key_on_array": ([("id", "ARRAY<INT> NOT NULL"), ("v", "STRING")], ["id"], [], {"bucket": "2"}, "ARRAY"),
    "bucket_key_missing_column": (COLS2, ["id"], [], {"bucket": "2", "bucket-key": "nope"}, "nope"),
    "bucket_key_missing_column_append": ([("id", "INT"), ("v", "STRING")], [], [], {"bucket": "2", "bucket-key": "nope"}, "nope"),
    "unknown_merge_engine": (COLS2, ["id"], [], {"bucket": "2", "merge-engine": "dedup"}, "dedup"),
    "sequence_field_missing": (COLS2, ["id"], [], {"bucket": "2", "sequence.field": "nope"}, "nope"),
    "bucket_zero": (COLS2, ["id"], [], {"bucket": "0"}, "bucket"),
    "bucket_zero_append": ([("id", "INT"), ("v", "STRING")], [], [], {"bucket": "0"}, "bucket"),
    "duplicate_column": ([("id", "INT NOT NULL"), ("id", "STRING")], ["id"], [], {"bucket": "2"}, "id"),
    "append_fixed_bucket_without_bucket_key": ([("id", "INT"), ("v", "STRING")], [], [], {"bucket": "2"}, "bucket-key"),
    "partition_on_row": ([("id", "INT"), ("r", "ROW<a INT>")], [], ["r"], {}, "ROW"),
    "primary_key_on_map": ([("id", "INT NOT NULL"), ("m", "MAP<STRING, INT> NOT NULL")], ["id", "m"], [], {"bucket": "2"}, "MAP"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_invalid_create_refused_by_java_and_by_cli(runner: CliRunner, wh: str, java_paimon: JavaPaimon, case: str) -> None:
    cols, pks, parts, options, mention = REFUSED[case]
    with pytest.raises(JavaPaimonError):
        java_paimon.create_table(wh, "jdb", case, cols, pks, parts, options)
    assert not (Path(wh) / "jdb.db" / case / "schema" / "schema-0").exists()

    target = Path(wh) / "cli-wh"  # not there yet: a refused create must not even make the warehouse
    args = ["create", f"{DB}.{case}", "--schema", _sql_columns(cols), "-w", str(target)]
    if pks:
        args += ["--primary-key", ",".join(pks)]
    if parts:
        args += ["--partition-by", ",".join(parts)]
    for k, v in options.items():
        args += ["--option", f"{k}={v}"]
    result = cli(runner, *args)
    assert result.exit_code == 4, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert mention in lines[0], lines[0]
    assert "Traceback" not in result.output and result.stdout == ""
    assert not target.exists(), sorted(str(p) for p in target.rglob("*"))


def test_option_typo_accepted_by_java_refused_by_cli(runner: CliRunner, wh: str, java_paimon: JavaPaimon) -> None:
    """A deliberate difference: Java keeps an unknown key like 'buket' (and ignores it); we refuse it."""
    java_paimon.create_table(wh, "jdb", "typo", COLS2, ["id"], [], {"buket": "2"})
    assert json.loads((Path(wh) / "jdb.db" / "typo" / "schema" / "schema-0").read_text())["options"] == {"buket": "2"}
    target = Path(wh) / "cli-wh"
    result = cli(runner, "create", "db.typo", "--schema", _sql_columns(COLS2), "--primary-key", "id",
                 "--option", "buket=2", "-w", str(target))
    assert result.exit_code == 4, result.output
    assert result.stderr.count("\n") == 1 and "did you mean 'bucket'" in result.stderr
    assert not target.exists()


# ---------------------------------------------------------------------------- alter refusal parity

ALTER_REFUSED: dict[str, tuple[list[dict[str, Any]], list[str], int]] = {
    # name: (harness changes for Java, CLI arguments, our exit code)
    "rename_partition_key": ([{"rename": ["dt", "day"]}], ["--rename-column", "dt:day"], 4),
    "drop_primary_key_column": ([{"drop": "id"}], ["--drop-column", "id"], 4),
    "drop_partition_key": ([{"drop": "dt"}], ["--drop-column", "dt"], 4),
    "add_existing_column": ([{"add": ["v", "INT"]}], ["--add-column", "v INT"], 4),
    "add_not_null_column": ([{"add": ["n", "INT NOT NULL"]}], ["--add-column", "n INT NOT NULL"], 4),
    "drop_missing_column": ([{"drop": "nope"}], ["--drop-column", "nope"], 3),
    "rename_missing_column": ([{"rename": ["nope", "x"]}], ["--rename-column", "nope:x"], 3),
    "rename_to_existing_column": ([{"rename": ["v", "w"]}], ["--rename-column", "v:w"], 4),
    "change_merge_engine": ([{"set": {"merge-engine": "first-row"}}], ["--set", "merge-engine=first-row"], 4),
    "change_sequence_field": ([{"set": {"sequence.field": "w"}}], ["--set", "sequence.field=w"], 4),
    "set_primary_key_option": ([{"set": {"primary-key": "v"}}], ["--set", "primary-key=v"], 4),
    "bucket_to_dynamic": ([{"set": {"bucket": "-1"}}], ["--set", "bucket=-1"], 4),
    "bucket_zero": ([{"set": {"bucket": "0"}}], ["--set", "bucket=0"], 4),
    "reset_bucket": ([{"remove": "bucket"}], ["--unset", "bucket"], 4),
}
ALTER_COLS = [("id", "INT NOT NULL"), ("dt", "STRING NOT NULL"), ("v", "STRING"), ("w", "BIGINT")]


@pytest.mark.parametrize("case", sorted(ALTER_REFUSED))
def test_invalid_alter_refused_by_java_and_by_cli(runner: CliRunner, wh: str, java_paimon: JavaPaimon, case: str) -> None:
    java_changes, args, code = ALTER_REFUSED[case]
    for name in ("j", "c"):  # Java's twin and ours, both with a snapshot (immutable options locked)
        java_paimon.create_table(wh, DB, name, ALTER_COLS, ["id", "dt"], ["dt"], {"bucket": "2"})
        assert java_paimon.write(wh, DB, name, [{"id": 1, "dt": "d", "v": "x", "w": 1}]) == 1
    with pytest.raises(JavaPaimonError):
        java_paimon.alter_table(wh, DB, "j", java_changes)
    assert not schema_file(wh, "j", 1).exists()
    result = cli(runner, "alter", "db.c", *args, "-w", wh)
    assert result.exit_code == code, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.stderr
    assert sorted(p.name for p in schema_file(wh, "c", 0).parent.iterdir()) == ["schema-0"]


def test_rename_primary_key_column_differs_from_java_09(runner: CliRunner, wh: str, java_paimon: JavaPaimon) -> None:
    """A known difference: Java 0.9 refuses to rename a primary-key column; Java 1.x (and we) allow it.

    The renamed key is carried into ``primaryKeys``; Java 0.9 itself still writes and reads
    the table afterwards, merging old and new rows on the renamed key.
    """
    for name in ("j", "c"):
        java_paimon.create_table(wh, DB, name, ALTER_COLS, ["id", "dt"], ["dt"], {"bucket": "2"})
        assert java_paimon.write(wh, DB, name, [{"id": 1, "dt": "d", "v": "x", "w": 1},
                                               {"id": 2, "dt": "d", "v": "y", "w": 2}]) == 1
    with pytest.raises(JavaPaimonError, match="Cannot drop/rename primary key"):
        java_paimon.alter_table(wh, DB, "j", [{"rename": ["id", "ident"]}])
    cli_ok(runner, "alter", "db.c", "--rename-column", "id:ident", "-w", wh)
    new = json.loads(schema_text(wh, "c", 1))
    assert new["primaryKeys"] == ["ident", "dt"] and new["fields"][0] == {"id": 0, "name": "ident", "type": "INT NOT NULL"}
    assert java_paimon.write(fresh(wh), DB, "c", [{"ident": 2, "dt": "d", "v": "y2", "w": 22}]) == 2
    assert java_rows(java_paimon, fresh(wh), "c", ("ident",)) == [
        {"ident": 1, "dt": "d", "v": "x", "w": 1}, {"ident": 2, "dt": "d", "v": "y2", "w": 22}]
