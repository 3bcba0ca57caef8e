"""migrate-table / migrate-database / migrate-file (Java's procedures of the same names): Hive
Parquet and ORC tables made in a real Hive Metastore 2.3.9 through the Thrift client, their
files written by pyarrow, become Paimon tables; our ``read`` and Java Paimon 0.9's HiveCatalog
read them row for row equal to the original data. Dry runs and refusals change nothing."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, fresh_db
from .test_hive_catalog import cat_args, cli, cli_json

SERDES = {
    "parquet": ("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"),
    "orc": ("org.apache.hadoop.hive.ql.io.orc.OrcSerde", "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
            "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"),
    "avro": ("org.apache.hadoop.hive.serde2.avro.AvroSerDe", "org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
             "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat"),
    "text": ("org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", "org.apache.hadoop.mapred.TextInputFormat",
             "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"),
}
COLUMNS = [("id", "int"), ("name", "string"), ("amount", "decimal(10,2)"), ("day", "date"), ("score", "double")]
SCHEMA = pa.schema([("id", pa.int32()), ("name", pa.string()), ("amount", pa.decimal128(10, 2)),
                    ("day", pa.date32()), ("score", pa.float64())])


def _batch(start: int, n: int) -> pa.Table:
    return pa.table({
        "id": pa.array(range(start, start + n), pa.int32()),
        "name": pa.array([None if i % 5 == 0 else f"n{i}" for i in range(start, start + n)]),
        "amount": pa.array([decimal.Decimal(f"{i}.25") for i in range(start, start + n)], pa.decimal128(10, 2)),
        "day": pa.array([dt.date(2024, 1, 1 + i % 28) for i in range(start, start + n)], pa.date32()),
        "score": pa.array([i / 3 for i in range(start, start + n)], pa.float64()),
    }, schema=SCHEMA)


def _write(fmt: str, path: Path, data: pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt in WRITERS:
        WRITERS[fmt](path, data)
        return
    # gzip/zlib: what the Java 0.9 test classpath can decode (it has no snappy); no dictionary for
    # the decimal, as Hive's parquet-mr v1 writer (Java 0.9 cannot decode a dictionary-encoded
    # FIXED_LEN_BYTE_ARRAY decimal)
    if fmt == "parquet":
        pq.write_table(data, path, compression="gzip", use_dictionary=["name"])
    elif fmt == "orc":
        orc.write_table(data, path, compression="zlib")
    else:
        path.write_text("\n".join(",".join(str(v) for v in r.values()) for r in data.to_pylist()))


TS_COLUMNS = [("id", "int"), ("at", "timestamp")]


def _ts_batch(start: int, n: int, unit: str = "ms", sub_ms: bool = False) -> pa.Table:
    """Timestamps of whole milliseconds (one before 1970, every fourth null); ``sub_ms`` adds
    a microsecond to one value (what TIMESTAMP(3) cannot hold)."""
    base = dt.datetime(2024, 3, 10, 1, 2, 3, 4000)
    at = [None if i % 4 == 0 else dt.datetime(1960, 6, 1, 12, 0, 0, 123000) if i % 7 == 3
          else base + dt.timedelta(days=i, milliseconds=1001 * i) for i in range(start, start + n)]
    if sub_ms and n > 1:
        at[1] = dt.datetime(2024, 1, 1, 0, 0, 0, 1)
    return pa.table({"id": pa.array(range(start, start + n), pa.int32()), "at": pa.array(at, pa.timestamp(unit))})


def _parquet_ts(int96: bool) -> Callable[[Path, pa.Table], None]:
    def write(path: Path, data: pa.Table) -> None:
        if int96:  # what Hive's ParquetHiveSerDe writes
            pq.write_table(data, path, compression="gzip", use_deprecated_int96_timestamps=True)
        else:  # INT64 TIMESTAMP(MILLIS/MICROS) as Spark or Impala write into Hive tables
            pq.write_table(data, path, compression="gzip", coerce_timestamps=data.schema.field("at").type.unit)
    return write


# the Avro schema Hive's AvroSerDe writes for COLUMNS and TS_COLUMNS' "at"
HIVE_AVRO_TYPES = {
    "id": "int", "name": "string", "amount": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
    "day": {"type": "int", "logicalType": "date"}, "score": "double",
    "at": {"type": "long", "logicalType": "timestamp-millis"}, "tags": {"type": "array", "items": ["null", "string"]},
}


def _write_avro(path: Path, data: pa.Table, types: dict[str, Any] | None = None) -> None:
    import fastavro

    types = {**HIVE_AVRO_TYPES, **(types or {})}
    schema = {"type": "record", "name": "t", "namespace": "hive", "fields": [
        {"name": n, "type": ["null", types[n]], "default": None} for n in data.schema.names]}
    with path.open("wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), data.to_pylist(), codec="deflate")


# file kinds of the timestamp and nested tests: how the file is written, and the Hive SerDe it is under
WRITERS: dict[str, Callable[[Path, pa.Table], None]] = {
    "parquet-int96": _parquet_ts(True), "parquet-millis": _parquet_ts(False), "parquet-micros": _parquet_ts(False),
    # lists as list.item, not the standard list.element
    "parquet-legacy-lists": lambda path, data: pq.write_table(data, path, compression="gzip",
                                                              use_compliant_nested_type=False),
}
SERDE_OF = {kind: "parquet" for kind in WRITERS}
WRITERS["avro"] = _write_avro
WRITERS["avro-long-id"] = lambda path, data: _write_avro(path, data, {"id": "long"})
SERDE_OF["avro-long-id"] = "avro"


def _sd(fmt: str, location: Path, cols: list[tuple[str, str]]) -> Any:
    from pymetastore.hive_metastore import ttypes

    serde, inp, out = SERDES[fmt]
    return ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema(name=n, type=t) for n, t in cols], location=f"file:{location}",
        inputFormat=inp, outputFormat=out, serdeInfo=ttypes.SerDeInfo(serializationLib=serde, parameters={}))


def make_hive_table(server: HiveMetastoreServer, wh: Path, db: str, name: str, fmt: str, *,
                    partitioned: bool, cols: list[tuple[str, str]] = COLUMNS,
                    parameters: dict[str, str] | None = None,
                    batch: Callable[[int, int], pa.Table] = _batch) -> list[dict[str, Any]]:
    """A managed Hive table at ``<wh>/<db>.db/<name>`` with two files per partition (and a
    ``_SUCCESS`` marker); returns its rows."""
    from pymetastore.hive_metastore import ttypes

    location = wh / f"{db}.db" / name
    expected: list[dict[str, Any]] = []
    with client(server) as hms:
        if hms.list_databases().count(db) == 0:
            hms.create_database(db, (wh / f"{db}.db").as_uri())
        keys = [ttypes.FieldSchema(name="dt", type="string")] if partitioned else []
        sd = _sd(SERDE_OF.get(fmt, fmt), location, cols)
        if (parameters or {}).get("transactional") == "true":  # Hive 2.3: ACID tables are bucketed ORC
            sd.numBuckets, sd.bucketCols = 2, ["id"]
        hms.create_table(ttypes.Table(tableName=name, dbName=db, owner="t", sd=sd,
                                      partitionKeys=keys, parameters={"comment": "sales", **(parameters or {})},
                                      tableType="MANAGED_TABLE"))
        parts = ["2024-01-01", "2024-01-02"] if partitioned else [None]
        start = 0
        for p in parts:
            d = location / f"dt={p}" if p else location
            for i in range(2):
                data = batch(start, 7 + i)
                start += 7 + i
                _write(fmt, d / f"00000{i}_0", data)
                expected += [{**r, **({"dt": p} if p else {})} for r in data.to_pylist()]
            (d / "_SUCCESS").write_text("")
            if p:
                hms.add_partitions(db, name, [ttypes.Partition(dbName=db, tableName=name, values=[p],
                                                               sd=_sd(SERDE_OF.get(fmt, fmt), d, cols),
                                                               parameters={})])
    return sorted(expected, key=lambda r: r["id"])


def _norm(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with values as comparable text (our JSON and Java render dates/decimals as text)."""
    return sorted(({k: _text(v) for k, v in r.items()} for r in rows), key=lambda r: int(r["id"]))


def _text(v: Any) -> str | None:
    if isinstance(v, dt.datetime):  # TIMESTAMP(3): what our JSON shows
        return v.isoformat(sep=" ", timespec="milliseconds")
    if isinstance(v, (list, dict)):  # nested: maps as [key, value] pairs, as both readers give them
        return json.dumps(v, sort_keys=True)
    return None if v is None else str(v)


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "unpartitioned"])
def test_migrate_table_reads_back_row_for_row(fmt: str, partitioned: bool, hive_metastore: HiveMetastoreServer,
                                              java_hive: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("mig")
    expected = make_hive_table(hive_metastore, wh, db, "sales", fmt, partitioned=partitioned)
    c = cat_args(hive_metastore, wh)
    before = _tree(wh)

    # the dry run names every file and where it goes, and changes nothing
    plan = cli_json("migrate-table", f"{db}.sales", "--dry-run", *c)
    assert len(plan) == (4 if partitioned else 2)
    assert all(r["to"].endswith(f".{fmt}") and "/sales_paimon_/" in r["to"] and "/bucket-0/" in r["to"]
               for r in plan), plan
    assert sum(r["rows"] for r in plan) == len(expected)
    assert _tree(wh) == before
    assert {t["table"] for t in cli_json("list", db, *c)} == {"sales"}

    cli("migrate-table", f"{db}.sales", "--option", "file.compression=zstd", *c)
    # the Hive table is gone: its name is now the Paimon table, at the managed location
    listed = cli_json("list", db, *c)
    assert listed == [{"database": db, "table": "sales", "type": "paimon"}]
    with client(hive_metastore) as hms:
        assert hms.find_table(db, "sales_paimon_") is None
    table_dir = wh / f"{db}.db" / "sales"
    data_files = sorted(p.name for p in table_dir.rglob(f"*.{fmt}"))
    assert data_files == sorted([f"00000{i}_0.{fmt}" for i in range(2)] * (2 if partitioned else 1))

    ours = cli_json("read", f"{db}.sales", *c)
    assert _norm(ours) == _norm(expected)
    java = java_hive.read(hive_spec(hive_metastore, wh), db, "sales", row_kind=False)
    assert _norm(java) == _norm(expected)


def test_refusals_change_nothing(hive_metastore: HiveMetastoreServer, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("migno")
    make_hive_table(hive_metastore, wh, db, "csv", "text", partitioned=False)
    make_hive_table(hive_metastore, wh, db, "ts", "parquet", partitioned=False,
                    cols=[*COLUMNS, ("at", "uniontype<int,string>")])
    c = cat_args(hive_metastore, wh)
    make_hive_table(hive_metastore, wh, db, "acid", "orc", partitioned=False, parameters={"transactional": "true"})
    cli("create", f"{db}.already", "--schema", "id INT", *c)
    before = _tree(wh)

    res = cli("migrate-table", f"{db}.missing", *c, expect=3)
    assert "does not exist" in res.stderr
    res = cli("migrate-table", f"{db}.csv", *c, expect=1)
    assert "error: migrate-table: table" in res.stderr
    assert "LazySimpleSerDe" in res.stderr and "only Parquet, ORC and Avro" in res.stderr
    res = cli("migrate-table", f"{db}.ts", *c, expect=1)
    assert "error: migrate-table: column at has Hive type uniontype<int,string>" in res.stderr
    res = cli("migrate-table", f"{db}.acid", *c, expect=1)
    assert "error: migrate-table: table" in res.stderr and "transactional (ACID)" in res.stderr
    res = cli("migrate-table", f"{db}.already", *c, expect=4)
    assert "error: migrate-table: table" in res.stderr and "already a Paimon table" in res.stderr
    res = cli("migrate-table", f"{db}.csv", "--option", "bucket=4", *c, expect=4)
    assert "error: migrate-table makes" in res.stderr and "bucket must be -1" in res.stderr
    res = cli("migrate-file", f"{db}.acid", f"{db}.already", *c, expect=1)
    assert "error: migrate-file: table" in res.stderr and "transactional (ACID)" in res.stderr
    # one table that cannot migrate refuses the whole database, naming that command
    res = cli("migrate-database", db, *c, expect=1)
    assert "error: migrate-database: " in res.stderr
    assert _tree(wh) == before
    kinds = {t["table"]: t["type"] for t in cli_json("list", db, *c)}
    assert kinds == {"csv": "format-table", "ts": "format-table", "acid": "format-table", "already": "paimon"}


def test_file_missing_a_column_is_refused(hive_metastore: HiveMetastoreServer, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("migcol")
    make_hive_table(hive_metastore, wh, db, "t", "orc", partitioned=False,
                    cols=[*COLUMNS, ("extra", "string")])
    c = cat_args(hive_metastore, wh)
    before = _tree(wh)
    res = cli("migrate-table", f"{db}.t", *c, expect=1)
    assert "has no column extra" in res.stderr
    assert _tree(wh) == before


def test_failed_move_moves_every_file_back(hive_metastore: HiveMetastoreServer, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.io.fileio import FileIO

    wh = tmp_path / "wh"
    db = fresh_db("migfail")
    make_hive_table(hive_metastore, wh, db, "t", "parquet", partitioned=True)
    c = cat_args(hive_metastore, wh)
    before = _tree(wh)
    real = FileIO.rename_file
    calls = {"n": 0}

    def flaky(self: FileIO, src: str, dst: str) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk said no")
        real(self, src, dst)

    monkeypatch.setattr(FileIO, "rename_file", flaky)
    cli("migrate-table", f"{db}.t", *c, expect=1)
    monkeypatch.setattr(FileIO, "rename_file", real)
    assert _tree(wh) == before  # files back, staging table gone
    assert [t["table"] for t in cli_json("list", db, *c)] == ["t"]
    with client(hive_metastore) as hms:
        assert hms.find_table(db, "t_paimon_") is None


def test_migrate_database_and_migrate_file(hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon,
                                           tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("migdb")
    a = make_hive_table(hive_metastore, wh, db, "a", "parquet", partitioned=True)
    b = make_hive_table(hive_metastore, wh, db, "b", "orc", partitioned=False)
    c = cat_args(hive_metastore, wh)
    cli("create", f"{db}.p", "--schema", "id INT", *c)
    before = _tree(wh)
    plan = cli_json("migrate-database", db, "--dry-run", *c)
    assert {r["source_table"] for r in plan} == {f"{db}.a", f"{db}.b"}
    assert _tree(wh) == before
    cli("migrate-database", db, *c)
    assert {t["table"]: t["type"] for t in cli_json("list", db, *c)} == {"a": "paimon", "b": "paimon", "p": "paimon"}
    spec = hive_spec(hive_metastore, wh)
    assert _norm(java_hive.read(spec, db, "a", row_kind=False)) == _norm(a)
    assert _norm(java_hive.read(spec, db, "b", row_kind=False)) == _norm(b)

    # migrate-file: another Hive table's files into the existing Paimon table a (same partition key)
    more = make_hive_table(hive_metastore, wh, db, "more", "parquet", partitioned=True)
    for r in more:
        r["id"] += 1000
    # the new table's ids overlap a's; rewrite its files with shifted ids so the union is checkable
    for f in (wh / f"{db}.db" / "more").rglob("00000*"):
        t = pq.read_table(f)
        _write("parquet", f, t.set_column(0, "id", pa.compute.add(t.column("id"), pa.scalar(1000, pa.int32()))))
    cli("migrate-file", f"{db}.more", f"{db}.a", "--dry-run", *c)
    assert "more" in {t["table"] for t in cli_json("list", db, *c)}
    cli("migrate-file", f"{db}.more", f"{db}.a", *c)
    assert "more" not in {t["table"] for t in cli_json("list", db, *c)}
    assert _norm(cli_json("read", f"{db}.a", *c)) == _norm(a + more)
    assert _norm(java_hive.read(spec, db, "a", row_kind=False)) == _norm(a + more)


def test_files_written_meanwhile_keep_the_hive_table(hive_metastore: HiveMetastoreServer, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.catalog import hive_migrate

    wh = tmp_path / "wh"
    db = fresh_db("miglate")
    expected = make_hive_table(hive_metastore, wh, db, "t", "orc", partitioned=False)
    c = cat_args(hive_metastore, wh)
    late = wh / f"{db}.db" / "t" / "000009_0"
    real = hive_migrate._commit

    def commit_then_a_writer_adds_a_file(*args: Any) -> None:
        real(*args)
        _write("orc", late, _batch(500, 3))

    monkeypatch.setattr(hive_migrate, "_commit", commit_then_a_writer_adds_a_file)
    res = cli("migrate-table", f"{db}.t", *c, expect=6)
    assert "appeared in the Hive table since the plan" in res.stderr
    assert late.exists()  # not deleted with the Hive table: it is kept
    kinds = {t["table"]: t["type"] for t in cli_json("list", db, *c)}
    assert kinds == {"t": "format-table", "t_paimon_": "paimon"}
    assert _norm(cli_json("read", f"{db}.t_paimon_", *c)) == _norm(expected)


def _java_migrate(java: JavaPaimon, spec: str, db: str, table: str) -> None:
    """Java Paimon 0.9's own HiveMigrator (in the bridge jar), as its migrate_table procedure runs it."""
    import json

    jvm = java._gateway.jvm
    conf = jvm.java.util.HashMap()
    for k, v in json.loads(spec).items():
        conf.put(k, v)
    catalog = jvm.org.apache.paimon.catalog.CatalogFactory.createCatalog(
        jvm.org.apache.paimon.catalog.CatalogContext.create(jvm.org.apache.paimon.options.Options.fromMap(conf)))
    migrator = jvm.org.apache.paimon.hive.migrate.HiveMigrator(catalog, db, table, db, table + "_paimon_",
                                                               jvm.java.util.HashMap())
    migrator.executeMigrate()
    migrator.renameTable(False)


def _files(rows: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        r = {k: v for k, v in r.items() if k != "creation_time"}
        r["file_path"] = str(Path(r["file_path"]).relative_to(root))
        out.append(r)
    return sorted(out, key=lambda r: r["file_path"])


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_same_table_as_javas_hive_migrator(fmt: str, hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon,
                                           tmp_path: Path) -> None:
    """Oracle: two identical Hive tables, one migrated by Java 0.9's HiveMigrator, one by us: the
    same schema (fields, partition keys), the same data files where Java puts them, and the same
    file metas (row counts, stats, sequence numbers, level, source) in the manifests."""
    wh = tmp_path / "wh"
    ours_db, java_db = fresh_db("migours"), fresh_db("migjava")
    expected = make_hive_table(hive_metastore, wh, ours_db, "t", fmt, partitioned=True)
    assert make_hive_table(hive_metastore, wh, java_db, "t", fmt, partitioned=True) == expected
    c = cat_args(hive_metastore, wh)
    cli("migrate-table", f"{ours_db}.t", *c)
    _java_migrate(java_hive, hive_spec(hive_metastore, wh), java_db, "t")

    ours_schema = cli_json("inspect", "schemas", f"{ours_db}.t", *c)[-1]
    java_schema = cli_json("inspect", "schemas", f"{java_db}.t", *c)[-1]
    for key in ("fields", "partition_keys", "primary_keys", "comment"):
        assert ours_schema[key] == java_schema[key], key
    ours_files = _files(cli_json("inspect", "files", f"{ours_db}.t", *c), wh / f"{ours_db}.db")
    java_files = _files(cli_json("inspect", "files", f"{java_db}.t", *c), wh / f"{java_db}.db")
    assert ours_files == java_files
    assert _norm(java_hive.read(hive_spec(hive_metastore, wh), java_db, "t", row_kind=False)) == _norm(expected)


def test_target_table_and_keep_origin(hive_metastore: HiveMetastoreServer, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("migkeep")
    expected = make_hive_table(hive_metastore, wh, db, "h", "parquet", partitioned=True)
    c = cat_args(hive_metastore, wh)
    res = cli("migrate-table", f"{db}.h", "--keep-origin", *c, expect=4)
    assert "--target-table" in res.stderr
    cli("migrate-table", f"{db}.h", "--target-table", f"{db}.p", "--keep-origin", *c)
    kinds = {t["table"]: t["type"] for t in cli_json("list", db, *c)}
    assert kinds == {"h": "format-table", "p": "paimon"}  # the Hive table stays, without its files
    assert not list((wh / f"{db}.db" / "h").rglob("0000*"))
    assert _norm(cli_json("read", f"{db}.p", *c)) == _norm(expected)
    # migrate-file refuses a Hive table whose partition keys are not the Paimon table's
    make_hive_table(hive_metastore, wh, db, "flat", "parquet", partitioned=False)
    before = _tree(wh)
    res = cli("migrate-file", f"{db}.flat", f"{db}.p", *c, expect=4)
    assert "partition keys" in res.stderr
    assert _tree(wh) == before



@pytest.mark.parametrize("kind", ["parquet-millis", "orc"])
def test_timestamp_column_as_javas_hive_migrator(kind: str, hive_metastore: HiveMetastoreServer,
                                                 java_hive: JavaPaimon, tmp_path: Path) -> None:
    """A Hive TIMESTAMP column (Parquet INT64 millis, ORC timestamp) becomes TIMESTAMP(3), as
    Java's HiveTypeUtils maps it: the same schema and file metas (stats) as Java 0.9's
    HiveMigrator gives, and we and Java 0.9 read the rows back."""
    wh = tmp_path / "wh"
    ours_db, java_db = fresh_db("migtsours"), fresh_db("migtsjava")
    unit = "ms" if kind == "parquet-millis" else "ns"

    def batch(start: int, n: int) -> pa.Table:
        return _ts_batch(start, n, unit)

    expected = make_hive_table(hive_metastore, wh, ours_db, "t", kind, partitioned=True, cols=TS_COLUMNS,
                               batch=batch)
    make_hive_table(hive_metastore, wh, java_db, "t", kind, partitioned=True, cols=TS_COLUMNS, batch=batch)
    c = cat_args(hive_metastore, wh)
    cli("migrate-table", f"{ours_db}.t", *c)
    _java_migrate(java_hive, hive_spec(hive_metastore, wh), java_db, "t")

    ours_schema = cli_json("inspect", "schemas", f"{ours_db}.t", *c)[-1]
    java_schema = cli_json("inspect", "schemas", f"{java_db}.t", *c)[-1]
    for key in ("fields", "partition_keys", "primary_keys", "comment"):
        assert ours_schema[key] == java_schema[key], key
    assert [f["type"] for f in ours_schema["fields"]] == ["INT", "TIMESTAMP(3)", "STRING"]
    ours_files = _files(cli_json("inspect", "files", f"{ours_db}.t", *c), wh / f"{ours_db}.db")
    java_files = _files(cli_json("inspect", "files", f"{java_db}.t", *c), wh / f"{java_db}.db")
    assert ours_files == java_files
    assert ours_files[0]["min_value_stats"]["at"] == "1960-06-01T12:00:00.123"
    spec = hive_spec(hive_metastore, wh)
    assert _norm(cli_json("read", f"{ours_db}.t", *c)) == _norm(expected)
    assert _norm(java_hive.read(spec, ours_db, "t", row_kind=False)) == _norm(expected)


@pytest.mark.parametrize(("kind", "unit", "sub_ms", "message"), [
    ("parquet-int96", "ns", False, "is a Parquet INT96 (or INT64 nanosecond) timestamp"),
    ("parquet-micros", "us", False, "is a Parquet INT64 us timestamp"),
    ("orc", "ns", True, "holds timestamps finer than milliseconds"),
], ids=["parquet-int96", "parquet-micros", "orc-sub-millisecond"])
def test_timestamps_java_would_misread_are_refused(kind: str, unit: str, sub_ms: bool, message: str,
                                                   hive_metastore: HiveMetastoreServer, tmp_path: Path) -> None:
    """Java 0.9 fails on INT96 as TIMESTAMP(3) and reads INT64 micros as millis (its stats of
    such a file are years off); TIMESTAMP(3) cannot hold a finer value: refused, nothing moved."""
    wh = tmp_path / "wh"
    db = fresh_db("migtsno")
    make_hive_table(hive_metastore, wh, db, "t", kind, partitioned=False, cols=TS_COLUMNS,
                    batch=lambda start, n: _ts_batch(start, n, unit, sub_ms))
    c = cat_args(hive_metastore, wh)
    before = _tree(wh)
    res = cli("migrate-table", f"{db}.t", *c, expect=1)
    assert message in res.stderr and "column at" in res.stderr, res.stderr
    res = cli("migrate-database", db, *c, expect=1)
    assert message in res.stderr
    assert _tree(wh) == before
    assert cli_json("list", db, *c) == [{"database": db, "table": "t", "type": "format-table"}]


def test_an_orc_timestamp_nanoseconds_cannot_hold_is_refused(hive_metastore: HiveMetastoreServer,
                                                             tmp_path: Path) -> None:
    """pyarrow reads ORC timestamps as nanoseconds, wrapping beyond 1677-09-21..2262-04-11 up to
    pyarrow 25 (26 raises): the file's statistics are checked first, so a migration never
    records wrapped min/max stats; refused naming the file, column and value, nothing moved."""
    wh = tmp_path / "wh"
    db = fresh_db("migtsfar")

    def batch(start: int, n: int) -> pa.Table:
        t = _ts_batch(start, n)
        at = t.column("at").to_pylist()
        at[1] = dt.datetime(1500, 6, 1, 12)
        return t.set_column(1, "at", pa.array(at, pa.timestamp("ms")))

    make_hive_table(hive_metastore, wh, db, "t", "orc", partitioned=False, cols=TS_COLUMNS, batch=batch)
    c = cat_args(hive_metastore, wh)
    before = _tree(wh)
    res = cli("migrate-table", f"{db}.t", *c, expect=1)
    assert "column at holds 1500-06-01T12:00:00.000000000 (ORC timestamp), outside the nanosecond range" \
        in res.stderr and "refused rather than migrated with wrong statistics" in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert _tree(wh) == before


NESTED_COLUMNS = [("id", "int"), ("tags", "array<string>"), ("attrs", "map<string,int>"),
                  ("addr", "struct<city:string,zip:int,geo:array<double>>")]
NESTED_SCHEMA = pa.schema([
    ("id", pa.int32()), ("tags", pa.list_(pa.string())), ("attrs", pa.map_(pa.string(), pa.int32())),
    ("addr", pa.struct([("city", pa.string()), ("zip", pa.int32()), ("geo", pa.list_(pa.float64()))]))])


def _nested_batch(start: int, n: int) -> pa.Table:
    """Arrays, maps and structs with null and empty values (and null elements)."""
    ids = list(range(start, start + n))
    return pa.table({
        "id": ids,
        "tags": [None if i % 5 == 0 else [] if i % 5 == 1 else [f"t{i}", None, f"u{i}"][: 1 + i % 3] for i in ids],
        "attrs": [None if i % 4 == 0 else [(f"k{i}", i), ("z", None)][: 1 + i % 2] for i in ids],
        "addr": [None if i % 6 == 0 else {"city": None if i % 3 == 0 else f"c{i}", "zip": i * 10,
                                           "geo": [i / 2, -i / 4]} for i in ids],
    }, schema=NESTED_SCHEMA)


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_nested_columns_as_javas_hive_migrator(fmt: str, hive_metastore: HiveMetastoreServer,
                                               java_hive: JavaPaimon, tmp_path: Path) -> None:
    """Hive array/map/struct columns become ARRAY/MAP/ROW as Java's HiveTypeUtils maps them: the
    same schema (nested field ids too) and file metas (stats) as Java 0.9's HiveMigrator, and
    we and Java 0.9 read the rows back."""
    wh = tmp_path / "wh"
    ours_db, java_db = fresh_db("mignestours"), fresh_db("mignestjava")
    expected = make_hive_table(hive_metastore, wh, ours_db, "t", fmt, partitioned=True, cols=NESTED_COLUMNS,
                               batch=_nested_batch)
    make_hive_table(hive_metastore, wh, java_db, "t", fmt, partitioned=True, cols=NESTED_COLUMNS,
                    batch=_nested_batch)
    c = cat_args(hive_metastore, wh)
    cli("migrate-table", f"{ours_db}.t", *c)
    _java_migrate(java_hive, hive_spec(hive_metastore, wh), java_db, "t")

    ours_schema = cli_json("inspect", "schemas", f"{ours_db}.t", *c)[-1]
    java_schema = cli_json("inspect", "schemas", f"{java_db}.t", *c)[-1]
    for key in ("fields", "partition_keys", "primary_keys", "comment"):
        assert ours_schema[key] == java_schema[key], key
    assert [f["type"]["type"] for f in ours_schema["fields"][1:4]] == ["ARRAY", "MAP", "ROW"]
    ours_files = _files(cli_json("inspect", "files", f"{ours_db}.t", *c), wh / f"{ours_db}.db")
    java_files = _files(cli_json("inspect", "files", f"{java_db}.t", *c), wh / f"{java_db}.db")
    assert ours_files == java_files  # nested columns: no min/max (Parquet: no null count either)
    spec = hive_spec(hive_metastore, wh)
    assert _norm(cli_json("read", f"{ours_db}.t", *c)) == _norm(expected)
    assert _norm(java_hive.read(spec, ours_db, "t", row_kind=False)) == _norm(expected)


def test_nested_parquet_layouts_java_is_not_shown_to_read_are_refused(hive_metastore: HiveMetastoreServer,
                                                                      tmp_path: Path) -> None:
    """Lists as ``list.item`` (not the standard ``list.element``; Hive's own ``bag`` layout is
    refused the same way): refused by name, nothing moved; an unmapped nested type too."""
    wh = tmp_path / "wh"
    db = fresh_db("mignestno")
    make_hive_table(hive_metastore, wh, db, "t", "parquet-legacy-lists", partitioned=False, cols=NESTED_COLUMNS,
                    batch=_nested_batch)
    make_hive_table(hive_metastore, wh, db, "u", "orc", partitioned=False,
                    cols=[*COLUMNS, ("x", "array<uniontype<int,string>>")])
    c = cat_args(hive_metastore, wh)
    before = _tree(wh)
    res = cli("migrate-table", f"{db}.t", *c, expect=1)
    assert "nested column tags is stored as tags.list.item" in res.stderr, res.stderr
    res = cli("migrate-table", f"{db}.u", *c, expect=1)
    assert "column x has Hive type array<uniontype<int,string>>" in res.stderr
    assert _tree(wh) == before
    assert {t["table"]: t["type"] for t in cli_json("list", db, *c)} == {"t": "format-table", "u": "format-table"}


AVRO_COLUMNS = [*COLUMNS, ("at", "timestamp")]


def _avro_batch(start: int, n: int) -> pa.Table:
    data = _batch(start, n)
    return data.append_column("at", _ts_batch(start, n).column("at"))


def test_avro_table_as_javas_hive_migrator(hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon,
                                           tmp_path: Path) -> None:
    """An Avro Hive table (Java's migrator takes Avro too): file.format avro, the same schema and
    file metas (row counts, names, sizes) as Java 0.9's HiveMigrator, stats from the rows, and
    we and Java 0.9 read it back."""
    wh = tmp_path / "wh"
    ours_db, java_db = fresh_db("migavours"), fresh_db("migavjava")
    expected = make_hive_table(hive_metastore, wh, ours_db, "t", "avro", partitioned=True, cols=AVRO_COLUMNS,
                               batch=_avro_batch)
    make_hive_table(hive_metastore, wh, java_db, "t", "avro", partitioned=True, cols=AVRO_COLUMNS, batch=_avro_batch)
    c = cat_args(hive_metastore, wh)
    plan = cli_json("migrate-table", f"{ours_db}.t", "--dry-run", *c)
    assert sum(r["rows"] for r in plan) == len(expected) and all(r["to"].endswith(".avro") for r in plan)
    cli("migrate-table", f"{ours_db}.t", *c)
    _java_migrate(java_hive, hive_spec(hive_metastore, wh), java_db, "t")

    ours_schema = cli_json("inspect", "schemas", f"{ours_db}.t", *c)[-1]
    java_schema = cli_json("inspect", "schemas", f"{java_db}.t", *c)[-1]
    for key in ("fields", "partition_keys", "primary_keys", "comment"):
        assert ours_schema[key] == java_schema[key], key
    assert ours_schema["options"]["file.format"] == "avro"
    ours_files = _files(cli_json("inspect", "files", f"{ours_db}.t", *c), wh / f"{ours_db}.db")
    java_files = _files(cli_json("inspect", "files", f"{java_db}.t", *c), wh / f"{java_db}.db")
    # Java 0.9's Avro stats extractor gives no stats at all (later Java computes them from the
    # rows); ours are computed from the rows by the code that gives the Avro files we write theirs
    stats = ("null_value_counts", "min_value_stats", "max_value_stats")
    assert all(v is None for f in java_files for k in stats for v in f[k].values())
    assert [{k: v for k, v in f.items() if k not in stats} for f in ours_files] == [
        {k: v for k, v in f.items() if k not in stats} for f in java_files]
    first = ours_files[0]
    assert (first["null_value_counts"]["name"], first["min_value_stats"]["at"], first["max_value_stats"]["amount"]
            ) == (2, "1960-06-01T12:00:00.123", "6.25")
    spec = hive_spec(hive_metastore, wh)
    assert _norm(cli_json("read", f"{ours_db}.t", *c)) == _norm(expected)
    assert _norm(java_hive.read(spec, ours_db, "t", row_kind=False)) == _norm(expected)


def test_avro_columns_paimon_would_misread_are_refused(hive_metastore: HiveMetastoreServer,
                                                      tmp_path: Path) -> None:
    """An Avro file whose column is another Avro type than Paimon's for the Hive type (a long
    for an int), and nested columns of an Avro table: refused by name, nothing moved."""
    wh = tmp_path / "wh"
    db = fresh_db("migavno")
    make_hive_table(hive_metastore, wh, db, "t", "avro-long-id", partitioned=False)
    make_hive_table(hive_metastore, wh, db, "n", "avro", partitioned=False, cols=[*COLUMNS, ("tags", "array<string>")],
                    batch=lambda start, n: _batch(start, n).append_column("tags", pa.array([["a", None]] * n)))
    c = cat_args(hive_metastore, wh)
    before = _tree(wh)
    res = cli("migrate-table", f"{db}.t", *c, expect=1)
    assert "column id is Avro long in the file, which Paimon does not read as INT" in res.stderr, res.stderr
    res = cli("migrate-table", f"{db}.n", *c, expect=1)
    assert "nested column tags in an Avro Hive table" in res.stderr, res.stderr
    assert _tree(wh) == before
    assert {t["table"]: t["type"] for t in cli_json("list", db, *c)} == {"t": "hive-table", "n": "hive-table"}
