"""Java Paimon 0.9 reads every table paimon-cli writes, row for row, and keeps writing into it.

The tables (built by :func:`build_written_tables`, shared with the pypaimon test) cover the
merge engines (deduplicate incl. row kinds and --delete, partial-update, aggregation,
sequence.field), every type in parquet/orc/avro, overwrite (whole, static partition, dynamic
partitions), dynamic bucket, append tables (unaware and fixed bucket), changelog-producer=input,
file rolling and write-buffer flushes. Then Java writes overlapping keys into our tables and
still reads one row per key (our bucket hashing and HASH index agree with Java's), Java
compacts our files, and we write again after Java (sequence numbers continue).
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.write_job import write_table
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.schema.table_schema import Schema

DB = "db"
FORMATS = ("parquet", "orc", "avro")

ALL_TYPES = (
    "id INT NOT NULL, dt STRING NOT NULL, c_bool BOOLEAN, c_tiny TINYINT, c_small SMALLINT, c_bigint BIGINT, "
    "c_float FLOAT, c_double DOUBLE, c_dec9 DECIMAL(9, 2), c_dec18 DECIMAL(18, 4), c_dec30 DECIMAL(30, 6), "
    "c_char CHAR(5), c_varchar VARCHAR(20), c_string STRING, c_bytes BYTES, c_date DATE, c_time TIME, "
    "c_ts3 TIMESTAMP(3), c_ts6 TIMESTAMP(6), c_ltz3 TIMESTAMP(3) WITH LOCAL TIME ZONE, "
    "c_array ARRAY<INT>, c_map MAP<STRING, INT>, c_row ROW<a INT, b STRING>"
)


def all_types_row(i: int, part: str, v: int) -> dict[str, Any]:
    """Deterministic row; every 5th has NULL in every value column. Floats are exact in float32."""
    row: dict[str, Any] = {c[0]: None for c in parse_columns(ALL_TYPES)}
    row.update(id=i, dt=part)
    if i % 5 == 0:
        return row
    row.update(
        c_bool=(i + v) % 2 == 0, c_tiny=-128 + i + v, c_small=-16000 + 300 * i + v,
        c_bigint=i * 10_000_000_000 + v, c_float=i * 0.25 + v, c_double=i * 1.5 + v,
        c_dec9=decimal.Decimal(f"{i * 100 + v}.{i % 100:02d}"),
        c_dec18=decimal.Decimal(f"-{i}1234567890.{v:04d}"),
        c_dec30=decimal.Decimal(f"{i}12345678901234567890.{v:06d}"),
        c_char=f"c{i}{v}"[:5], c_varchar=f"vc-{i}-{v}", c_string=f"s{i}-v{v}-ünï",
        c_bytes=bytes([i % 256, v, 0, 255]), c_date=dt.date(2024, 2, 28) + dt.timedelta(days=i + v),
        c_time=dt.time(i % 24, v % 60, 7),
        c_ts3=dt.datetime(2024, 3, 1, 12, 30, 15, 123000) + dt.timedelta(hours=i, milliseconds=v),
        c_ts6=dt.datetime(1999, 12, 31, 23, 59, 59, 654321) + dt.timedelta(minutes=i, microseconds=v),
        c_ltz3=dt.datetime(2024, 1, 1, 0, 0, 0, 5000, tzinfo=dt.timezone.utc) + dt.timedelta(days=i),
        c_array=[i, None, v] if i % 3 else [],
        c_map={"k": i, "n": None} if i % 3 else {},
        c_row={"a": i, "b": f"b{v}"} if i % 4 else {"a": None, "b": "only-b"},
    )
    return row


# ---------------------------------------------------------------------------- model


class Model:
    """Expected merged rows of a primary-key table (deduplicate) or an append table."""

    def __init__(self, keys: list[str] | None) -> None:
        self.keys = keys
        self.state: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.appended: list[dict[str, Any]] = []

    def apply(self, rows: list[dict[str, Any]], kinds: list[str] | None = None) -> None:
        for i, r in enumerate(rows):
            if self.keys is None:
                self.appended.append(dict(r))
                continue
            k = tuple(r[c] for c in self.keys)
            if kinds is not None and kinds[i] in ("-D", "-U"):
                self.state.pop(k, None)
            else:
                self.state[k] = dict(r)

    def overwrite(self, rows: list[dict[str, Any]], pred: Callable[[dict[str, Any]], bool]) -> None:
        if self.keys is None:
            self.appended = [r for r in self.appended if not pred(r)]
        else:
            self.state = {k: r for k, r in self.state.items() if not pred(r)}
        self.apply(rows)

    def rows(self) -> list[dict[str, Any]]:
        return list(self.state.values()) if self.keys is not None else list(self.appended)


@dataclass
class Written:
    name: str
    keys: tuple[str, ...]
    expected: list[dict[str, Any]]
    options: dict[str, str] = field(default_factory=dict)


def _input_file(tmp: Path, table: Any, rows: list[dict[str, Any]], extra: dict[str, list[Any]] | None = None,
                name: str | None = None) -> str:
    """Rows as a Parquet input file with the table's Arrow types (maps given as dicts)."""
    schema = arrow_schema(list(table.schema.fields))
    fixed = [{k: (list(v.items()) if isinstance(v, dict) and pa.types.is_map(schema.field(k).type) else v)
              for k, v in r.items() if k in schema.names} for r in rows]
    t = pa.Table.from_pylist(fixed, schema=pa.schema([f.with_metadata(None) for f in schema]))
    for col, values in (extra or {}).items():
        t = t.append_column(col, pa.array(values, pa.string()))
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / (name or f"in-{len(list(tmp.iterdir()))}.parquet")
    pq.write_table(t, path)
    return str(path)


def build_written_tables(wh: str, tmp: Path) -> dict[str, Written]:
    """Create and write every scenario table with paimon-cli; returns what each must contain."""
    cat = FileSystemCatalog(wh)
    out: dict[str, Written] = {}

    def create(name: str, columns: str, pk: tuple[str, ...] = (), part: tuple[str, ...] = (),
               options: dict[str, str] | None = None) -> Any:
        cat.create_table(f"{DB}.{name}", Schema.of(parse_columns(columns), partition_keys=part, primary_keys=pk,
                                                     options=options or {}))
        return cat.get_table(f"{DB}.{name}")

    def write(name: str, rows: list[dict[str, Any]], kinds: list[str] | None = None, **kw: Any) -> Any:
        table = cat.get_table(f"{DB}.{name}")
        extra = {"op": kinds} if kinds is not None else None
        path = _input_file(tmp / name, table, rows, extra)
        return write_table(table, [path], row_kind_column="op" if kinds is not None else None, **kw)

    # every type, three formats: two writes (updates, a delete, a new partition)
    for fmt in FORMATS:
        name = f"types_{fmt}"
        create(name, ALL_TYPES, ("id", "dt"), ("dt",), {"bucket": "2", "file.format": fmt})
        m = Model(["id", "dt"])
        r1 = [all_types_row(i, "2024-01-01" if i % 2 else "2024-01-02", 1) for i in range(1, 16)]
        write(name, r1)
        m.apply(r1)
        r2 = [all_types_row(i, "2024-01-01", 2) for i in (1, 3, 5)] + [all_types_row(7, "2024-01-01", 0),
                                                                     all_types_row(30, "2024-01-03", 2)]
        kinds = ["+U", "+U", "+U", "-D", "+I"]
        write(name, r2, kinds)
        m.apply(r2, kinds)
        out[name] = Written(name, ("dt", "id"), m.rows())

    # deduplicate: duplicates inside one input (last wins), row kinds, --delete
    create("dedup", "id INT NOT NULL, v STRING, n INT", ("id",), (), {"bucket": "1"})
    m = Model(["id"])
    r = [{"id": i, "v": f"a{i}", "n": i} for i in range(1, 7)] + [{"id": 1, "v": "a1-again", "n": 100}]
    write("dedup", r)
    m.apply(r)
    r = [{"id": 2, "v": None, "n": None}, {"id": 3, "v": "a3", "n": 3}, {"id": 3, "v": "a3-u", "n": 33},
         {"id": 7, "v": "a7", "n": 7}]
    kinds = ["-D", "-U", "+U", "+I"]
    write("dedup", r, kinds)
    m.apply(r, kinds)
    r = [{"id": 4, "v": None, "n": None}]
    table = cat.get_table(f"{DB}.dedup")
    write_table(table, [_input_file(tmp / "dedup", table, r)], delete=True)
    m.apply(r, ["-D"])
    out["dedup"] = Written("dedup", ("id",), m.rows())

    # partial-update: non-null fields of later records win, within one input and across writes
    create("partial", "id INT NOT NULL, a STRING, b INT, c DOUBLE", ("id",), (),
           {"bucket": "2", "merge-engine": "partial-update"})
    write("partial", [{"id": 1, "a": "x", "b": None, "c": 1.0}, {"id": 1, "a": None, "b": 5, "c": None},
                      {"id": 2, "a": "y", "b": None, "c": None}])
    write("partial", [{"id": 1, "a": None, "b": None, "c": 2.0}, {"id": 3, "a": "z", "b": 3, "c": 3.0},
                      {"id": 2, "a": None, "b": 22, "c": None}])
    out["partial"] = Written("partial", ("id",), [
        {"id": 1, "a": "x", "b": 5, "c": 2.0}, {"id": 2, "a": "y", "b": 22, "c": None},
        {"id": 3, "a": "z", "b": 3, "c": 3.0}])

    # aggregation
    create("agg", "id INT NOT NULL, total BIGINT, mx INT, last STRING, names STRING", ("id",), (), {
        "bucket": "2", "merge-engine": "aggregation", "fields.total.aggregate-function": "sum",
        "fields.mx.aggregate-function": "max", "fields.names.aggregate-function": "listagg"})
    write("agg", [{"id": 1, "total": 10, "mx": 3, "last": "p", "names": "a"},
                  {"id": 1, "total": 5, "mx": 9, "last": None, "names": "b"},
                  {"id": 2, "total": 1, "mx": 1, "last": "q", "names": None}])
    write("agg", [{"id": 1, "total": 100, "mx": 4, "last": "r", "names": "c"},
                  {"id": 2, "total": None, "mx": 7, "last": None, "names": "d"}])
    out["agg"] = Written("agg", ("id",), [
        {"id": 1, "total": 115, "mx": 9, "last": "r", "names": "a,b,c"},
        {"id": 2, "total": 1, "mx": 7, "last": "q", "names": "d"}])

    # sequence.field: the record with the larger ts wins, whatever the input order
    create("seqf", "id INT NOT NULL, ts BIGINT, v STRING", ("id",), (), {"bucket": "1", "sequence.field": "ts"})
    write("seqf", [{"id": 1, "ts": 5, "v": "new"}, {"id": 1, "ts": 3, "v": "old"}, {"id": 2, "ts": 1, "v": "b1"}])
    write("seqf", [{"id": 1, "ts": 4, "v": "late-but-older"}, {"id": 2, "ts": 2, "v": "b2"}])
    out["seqf"] = Written("seqf", ("id",), [{"id": 1, "ts": 5, "v": "new"}, {"id": 2, "ts": 2, "v": "b2"}])

    # dynamic bucket (HASH index): 3 keys per bucket
    create("dyn", "id INT NOT NULL, dt STRING NOT NULL, v STRING", ("id", "dt"), ("dt",),
           {"bucket": "-1", "dynamic-bucket.target-row-num": "3"})
    m = Model(["id", "dt"])
    r = [{"id": i, "dt": "a" if i <= 8 else "b", "v": f"v{i}"} for i in range(1, 12)]
    write("dyn", r)
    m.apply(r)
    r = [{"id": i, "dt": "a", "v": f"v{i}-u"} for i in (2, 8)] + [{"id": 20, "dt": "a", "v": "v20"}]
    write("dyn", r)
    m.apply(r)
    out["dyn"] = Written("dyn", ("dt", "id"), m.rows())

    # overwrite: whole unpartitioned table, a static partition, dynamic partitions
    create("ow_whole", "id INT NOT NULL, v STRING", ("id",), (), {"bucket": "2"})
    write("ow_whole", [{"id": i, "v": f"x{i}"} for i in range(1, 6)])
    write("ow_whole", [{"id": 3, "v": "y3"}, {"id": 9, "v": "y9"}], overwrite=True)
    out["ow_whole"] = Written("ow_whole", ("id",), [{"id": 3, "v": "y3"}, {"id": 9, "v": "y9"}])

    create("ow_static", "id INT NOT NULL, dt STRING NOT NULL, v STRING", ("id", "dt"), ("dt",), {"bucket": "2"})
    m = Model(["id", "dt"])
    r = [{"id": i, "dt": d, "v": f"{d}{i}"} for d in ("a", "b") for i in range(1, 4)]
    write("ow_static", r)
    m.apply(r)
    table = cat.get_table(f"{DB}.ow_static")
    no_dt = tmp / "ow_static" / "no-dt.csv"
    no_dt.write_text("id,v\n7,new7\n1,new1\n")
    write_table(table, [str(no_dt)], overwrite=True, overwrite_partition={"dt": "a"})
    m.overwrite([{"id": 7, "dt": "a", "v": "new7"}, {"id": 1, "dt": "a", "v": "new1"}], lambda x: x["dt"] == "a")
    out["ow_static"] = Written("ow_static", ("dt", "id"), m.rows())

    create("ow_dynamic", "id INT, dt STRING, v STRING", (), ("dt",), {})
    m = Model(None)
    r = [{"id": i, "dt": d, "v": f"{d}{i}"} for d in ("a", "b", "c") for i in range(1, 3)]
    write("ow_dynamic", r)
    m.apply(r)
    r = [{"id": 9, "dt": "b", "v": "b9"}]
    write("ow_dynamic", r, overwrite=True)
    m.overwrite(r, lambda x: x["dt"] == "b")
    out["ow_dynamic"] = Written("ow_dynamic", ("dt", "id"), m.rows())

    # append tables: bucket-unaware (partitioned) and fixed bucket by bucket-key
    create("app_unaware", "id INT, dt STRING, v STRING", (), ("dt",), {"file.format": "orc"})
    m = Model(None)
    for batch in ([{"id": i, "dt": "a" if i % 2 else "b", "v": f"v{i}"} for i in range(6)],
                  [{"id": 1, "dt": "a", "v": "dup"}, {"id": 99, "dt": None, "v": "default-partition"}]):
        write("app_unaware", batch)
        m.apply(batch)
    out["app_unaware"] = Written("app_unaware", ("dt", "id", "v"), m.rows())
    create("app_fixed", "id INT, v STRING", (), (), {"bucket": "3", "bucket-key": "id", "file.format": "avro"})
    m = Model(None)
    for batch in ([{"id": i, "v": f"v{i}"} for i in range(10)], [{"id": 3, "v": "again"}]):
        write("app_fixed", batch)
        m.apply(batch)
    out["app_fixed"] = Written("app_fixed", ("id", "v"), m.rows())

    # DATE partition (Java names the directory by the epoch day) and a DECIMAL key
    create("datepart", "id DECIMAL(12, 3) NOT NULL, d DATE NOT NULL, v STRING", ("id", "d"), ("d",), {"bucket": "3"})
    m = Model(["id", "d"])
    r = [{"id": decimal.Decimal(f"{i}.125"), "d": dt.date(2024, 1, 1 + i % 3), "v": f"v{i}"} for i in range(12)]
    write("datepart", r)
    m.apply(r)
    out["datepart"] = Written("datepart", ("d", "id"), m.rows())

    # changelog-producer=input
    create("clog", "id INT NOT NULL, v STRING", ("id",), (), {"bucket": "1", "changelog-producer": "input"})
    m = Model(["id"])
    r = [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 1, "v": "a2"}]
    write("clog", r)
    m.apply(r)
    out["clog"] = Written("clog", ("id",), m.rows())

    # rolling (tiny target-file-size) and write-buffer flushes with a key updated across flushes
    create("roll", "id INT NOT NULL, v STRING, pad STRING", ("id",), (),
           {"bucket": "1", "target-file-size": "8 kb", "write-buffer-size": "256 kb", "write-only": "true"})
    m = Model(["id"])
    r = [{"id": i % 3000, "v": f"v{i}", "pad": "p" * 40} for i in range(6000)]
    write("roll", r)
    m.apply(r)
    out["roll"] = Written("roll", ("id",), m.rows())

    # CSV and JSON inputs straight from text
    create("text_in", "id INT NOT NULL, amount DECIMAL(10, 2), ts TIMESTAMP(3), d DATE, name STRING", ("id",), (),
           {"bucket": "2"})
    table = cat.get_table(f"{DB}.text_in")
    (tmp / "text").mkdir(parents=True, exist_ok=True)
    (tmp / "text" / "a.csv").write_text("id,amount,ts,d,name\n1,12.50,2024-05-01 10:00:00.250,2024-05-01,007\n"
                                        "2,,,,\n")
    (tmp / "text" / "b.jsonl").write_text('{"id": 3, "amount": 0.1, "ts": "2024-05-01T00:00:00Z", "name": "j"}\n')
    write_table(table, [str(tmp / "text" / "*.csv"), str(tmp / "text" / "b.jsonl")])
    out["text_in"] = Written("text_in", ("id",), [
        {"id": 1, "amount": decimal.Decimal("12.50"), "ts": dt.datetime(2024, 5, 1, 10, 0, 0, 250000),
         "d": dt.date(2024, 5, 1), "name": "007"},
        {"id": 2, "amount": None, "ts": None, "d": None, "name": None},
        {"id": 3, "amount": decimal.Decimal("0.10"), "ts": dt.datetime(2024, 5, 1), "d": None, "name": "j"}])
    return out


# ---------------------------------------------------------------------------- comparisons


def sort_rows(rows: list[dict[str, Any]], keys: tuple[str, ...]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: tuple((r.get(k) is None, r.get(k)) for k in keys))


def java_form(row: dict[str, Any]) -> dict[str, Any]:
    """A row as the Java harness renders it, MAP as [[k, v]] pairs sorted by key (Java's Avro
    reader builds a HashMap, so entry order is not part of the data)."""
    out = {}
    for k, v in row.items():
        if k.startswith("c_map") and v is not None:
            pairs = [[mk, mv] for mk, mv in v.items()] if isinstance(v, dict) else [list(p) for p in v]
            v = sorted(pairs, key=lambda p: str(p[0]))
        out[k] = v
    return out


def java_input(row: dict[str, Any]) -> dict[str, Any]:
    """Rows for the Java harness: LTZ values as naive UTC (its parser takes LocalDateTime text)."""
    return {k: (v.astimezone(dt.timezone.utc).replace(tzinfo=None) if isinstance(v, dt.datetime) and v.tzinfo else v)
            for k, v in row.items()}


def java_read(jp: Any, wh: str, name: str, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    return sort_rows([java_form(r) for r in jp.read(wh, DB, name, row_kind=False)], keys)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Written]]:
    wh = tmp_path_factory.mktemp("written-wh")
    return str(wh), build_written_tables(str(wh), tmp_path_factory.mktemp("write-inputs"))


TABLES = ["types_parquet", "types_orc", "types_avro", "dedup", "partial", "agg", "seqf", "dyn", "ow_whole",
          "ow_static", "ow_dynamic", "app_unaware", "app_fixed", "datepart", "clog", "roll", "text_in"]


@pytest.mark.parametrize("name", TABLES)
def test_java_reads_what_we_wrote(java_paimon: Any, written: tuple[str, dict[str, Written]], name: str) -> None:
    wh, tables = written
    w = tables[name]
    got = java_read(java_paimon, wh, name, w.keys)
    assert got == sort_rows([java_form(r) for r in w.expected], w.keys)


def test_java_sees_our_snapshots_and_files(java_paimon: Any, written: tuple[str, dict[str, Written]]) -> None:
    wh, tables = written
    snaps = java_paimon.system_table(wh, DB, "ow_static", "snapshots")
    kinds = [r[snaps["columns"].index("commit_kind")] for r in snaps["rows"]]
    assert kinds == ["APPEND", "OVERWRITE"]
    clog = java_paimon.system_table(wh, DB, "clog", "snapshots")
    assert clog["rows"][0][clog["columns"].index("changelog_record_count")] == 3
    files = java_paimon.system_table(wh, DB, "roll", "files")
    assert len(files["rows"]) > 3  # rolled and flushed into several level-0 files
    levels = {r[files["columns"].index("level")] for r in files["rows"]}
    assert levels == {0}


@pytest.mark.parametrize("name", ["types_parquet", "types_orc", "types_avro", "dedup", "dyn", "datepart", "roll"])
def test_java_writes_overlapping_keys_then_reads_one_row_per_key(
    java_paimon: Any, written: tuple[str, dict[str, Written]], name: str
) -> None:
    """Java puts each key in the bucket we put it in (hash / HASH index), so merges find it."""
    wh, tables = written
    w = tables[name]
    pk = [k for k in w.keys]
    base = {tuple(r[k] for k in pk): r for r in w.expected}
    overlap = [dict(r) for r in list(base.values())[:5]]
    for r in overlap:
        for col in ("v", "c_string"):
            if col in r:
                r[col] = f"java-{r[col]}"
    java_paimon.write(wh, DB, name, [java_input(r) for r in overlap])
    for r in overlap:
        base[tuple(r[k] for k in pk)] = r
    got = java_read(java_paimon, wh, name, w.keys)
    assert got == sort_rows([java_form(r) for r in base.values()], w.keys)
    w.expected = list(base.values())


def test_we_write_after_java_and_java_compacts(java_paimon: Any, written: tuple[str, dict[str, Written]],
                                              tmp_path: Path) -> None:
    """Our sequence numbers continue after Java's, so our newer rows win; Java compacts our files."""
    wh, tables = written
    cat = FileSystemCatalog(wh)
    for name in ("dedup", "dyn"):
        w = tables[name]
        java_paimon.write(wh, DB, name, [dict(r) for r in w.expected[:2]])
        table = cat.get_table(f"{DB}.{name}")
        newer = [dict(r, v=f"ours-again-{r.get('v')}") for r in w.expected[:3]]
        write_table(table, [_input_file(tmp_path / name, table, newer)])
        pk = list(w.keys)
        state = {tuple(r[k] for k in pk): r for r in w.expected}
        for r in newer:
            state[tuple(r[k] for k in pk)] = r
        expected = sort_rows([java_form(r) for r in state.values()], w.keys)
        assert java_read(java_paimon, wh, name, w.keys) == expected
        java_paimon.compact(wh, DB, name, full=True)
        assert java_read(java_paimon, wh, name, w.keys) == expected


def test_first_row_and_dv_tables_java_reads_our_writes(tmp_path: Path, java_paimon: Any) -> None:
    """Formerly refused: our write compacts level 0 up like a Java writer, so Java sees the rows at once."""
    wh = str(tmp_path / "wh")
    cat = FileSystemCatalog(wh)
    first = tmp_path / "in1.csv"
    first.write_text("id,v\n1,a\n2,b\n1,c\n")
    second = tmp_path / "in2.csv"
    second.write_text("id,v\n2,x\n3,y\n")
    for name, opts in (("fr", {"merge-engine": "first-row"}), ("dv", {"deletion-vectors.enabled": "true"})):
        cat.create_table(f"{DB}.{name}", Schema.of(parse_columns("id INT NOT NULL, v STRING"), primary_keys=["id"],
                                                   options={"bucket": "2", **opts}))
        write_table(cat.get_table(f"{DB}.{name}"), [str(first)])
        fr = name == "fr"
        assert java_read(java_paimon, wh, name, ("id",)) == [{"id": 1, "v": "a" if fr else "c"}, {"id": 2, "v": "b"}]
        write_table(cat.get_table(f"{DB}.{name}"), [str(second)])
        want = [{"id": 1, "v": "a" if fr else "c"}, {"id": 2, "v": "b" if fr else "x"}, {"id": 3, "v": "y"}]
        assert java_read(java_paimon, wh, name, ("id",)) == want
        # Java keeps writing and compacting the table
        java_paimon.write(wh, DB, name, [{"id": 4, "v": "j"}, {"id": 1, "v": "j"}])
        java_paimon.compact(wh, DB, name, full=True)
        want = sorted([*want, {"id": 4, "v": "j"}], key=lambda r: r["id"])
        if not fr:
            want[0] = {"id": 1, "v": "j"}
        assert java_read(java_paimon, wh, name, ("id",)) == want
