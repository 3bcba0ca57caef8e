"""Session fixtures that run the real Java Paimon 0.9 (see java_harness.py).

``java_paimon``: one JVM per test session.
``java_tables``: one warehouse of tables written by Java (layout documented on JavaTables).
Every test that uses either fixture gets the ``java`` marker automatically.
"""

from __future__ import annotations

import datetime as dt
import decimal
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .java_harness import JavaPaimon

_JAVA_FIXTURES = {"java_paimon", "java_tables"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _JAVA_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.java)


@pytest.fixture(scope="session")
def java_paimon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaPaimon]:
    """A running JVM with Java Paimon 0.9; its stdout/stderr go to ``<basetemp>/java/jvm.log``."""
    if shutil.which("java") is None or shutil.which("javac") is None:
        pytest.fail("java/javac not on PATH: the Java Paimon 0.9 interop tests need a JDK 17")
    base = tmp_path_factory.mktemp("java")
    jp = JavaPaimon.start(log_path=base / "jvm.log", temp_dir=base / "io-tmp")
    try:
        yield jp
    finally:
        jp.close()


# ---------------------------------------------------------------------------- table layouts


@dataclass
class JavaTable:
    """One Java-written table and what it must contain."""

    db: str
    name: str
    path: str
    primary_keys: list[str]
    partition_keys: list[str]
    columns: list[tuple[str, str]]
    # snapshot id -> merged rows (no _row_kind), sorted with sort_rows(); only modelled snapshots.
    expected: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    # commit_kind of every snapshot as Java's $snapshots reports it, in id order.
    snapshot_kinds: list[str] = field(default_factory=list)

    @property
    def identifier(self) -> str:
        return f"{self.db}.{self.name}"

    @property
    def latest_expected(self) -> list[dict[str, Any]]:
        return self.expected[max(self.expected)]


@dataclass
class JavaTables:
    """Warehouse written by Java 0.9 (``warehouse``/db.db/<table>).

    pk_part   PK (id, dt), partitioned by dt, bucket=3, default format (parquet in 0.9), 15 columns.
              Snapshots: 1-4 APPEND, 5 COMPACT (full), 6 APPEND (updates + deletes).
              Tag ``t1`` -> snapshot 2; branch ``b1`` created from tag t1; consumer ``c1`` -> 4.
    append_t  append table, bucket=-1, partitioned by dt, parquet.
              Snapshots: 1-2 APPEND, 3 ANALYZE (statistics file: merged count + size).
    dv_t      PK (id), bucket=2, deletion-vectors.enabled, parquet; 3 write commits, each
              APPEND + COMPACT (6 snapshots); DV index files exist at the end.
    dyn_t     PK (id, dt), partitioned by dt, bucket=-1 (dynamic, HASH index), orc,
              dynamic-bucket.target-row-num=4; snapshots 1-2 APPEND.
    nested_t  append, bucket=-1, parquet, ARRAY/MAP/ROW columns; snapshot 1 APPEND.
    """

    warehouse: str
    tables: dict[str, JavaTable]

    def __getitem__(self, name: str) -> JavaTable:
        return self.tables[name]

    @property
    def pk_part(self) -> JavaTable:
        return self.tables["pk_part"]

    @property
    def append_t(self) -> JavaTable:
        return self.tables["append_t"]

    @property
    def dv_t(self) -> JavaTable:
        return self.tables["dv_t"]

    @property
    def dyn_t(self) -> JavaTable:
        return self.tables["dyn_t"]

    @property
    def nested_t(self) -> JavaTable:
        return self.tables["nested_t"]


def sort_rows(rows: list[dict[str, Any]], keys: tuple[str, ...] = ("dt", "id")) -> list[dict[str, Any]]:
    """Deterministic order for comparing Java reads with expectations."""
    return sorted(rows, key=lambda r: tuple((r.get(k) is None, r.get(k)) for k in keys if k in r))


class _PkModel:
    """Deduplicate merge engine in Python: the expected content after each commit."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        self.state: dict[tuple[Any, ...], dict[str, Any]] = {}

    def apply(self, rows: list[dict[str, Any]], kinds: list[str] | None) -> None:
        for i, row in enumerate(rows):
            key = tuple(row[k] for k in self.keys)
            if kinds is not None and kinds[i] in ("-D", "-U"):
                self.state.pop(key, None)
            else:
                self.state[key] = dict(row)

    def rows(self) -> list[dict[str, Any]]:
        return sort_rows(list(self.state.values()))


PK_PART_COLUMNS: list[tuple[str, str]] = [
    ("id", "INT"),
    ("dt", "STRING"),
    ("c_bigint", "BIGINT"),
    ("c_string", "STRING"),
    ("c_double", "DOUBLE"),
    ("c_dec10", "DECIMAL(10, 2)"),
    ("c_dec25", "DECIMAL(25, 4)"),
    ("c_bool", "BOOLEAN"),
    ("c_date", "DATE"),
    ("c_ts3", "TIMESTAMP(3)"),
    ("c_ts6", "TIMESTAMP(6)"),
    ("c_bytes", "BYTES"),
    ("c_small", "SMALLINT"),
    ("c_tiny", "TINYINT"),
    ("c_float", "FLOAT"),
]


def pk_part_row(i: int, part: str, version: int) -> dict[str, Any]:
    """Deterministic row; every 7th id has NULLs in all value columns. Floats are exact in float32."""
    if i % 7 == 0:
        row: dict[str, Any] = {name: None for name, _ in PK_PART_COLUMNS}
        row.update(id=i, dt=part, c_string=f"null-ish-{i}-v{version}")
        return row
    v = version
    return {
        "id": i,
        "dt": part,
        "c_bigint": i * 10_000_000_000 + v,
        "c_string": f"name-{i}-v{v}-ünï",
        "c_double": i * 1.1 + v,
        "c_dec10": decimal.Decimal(f"{i * 100 + v}.{i % 100:02d}"),
        "c_dec25": decimal.Decimal(f"-{i}12345678901234567.{v:04d}"),
        "c_bool": (i + v) % 2 == 0,
        "c_date": dt.date(2024, 1, 1) + dt.timedelta(days=i * 3 + v),
        "c_ts3": dt.datetime(2024, 3, 1, 12, 30, 15, 123000) + dt.timedelta(hours=i, milliseconds=v),
        "c_ts6": dt.datetime(2024, 3, 1, 0, 0, 0, 654321) + dt.timedelta(minutes=i, microseconds=v),
        "c_bytes": bytes([i % 256, v % 256, 0, 255]),
        "c_small": (i * 300 + v) % 32000 - 16000,
        "c_tiny": (i + v) % 256 - 128,
        "c_float": i * 0.25 + v,
    }


def _commit(jp: JavaPaimon, wh: str, t: JavaTable, model: _PkModel | None, rows: list[dict[str, Any]],
            kinds: list[str] | None = None) -> int:
    sid = jp.write(wh, t.db, t.name, rows, kinds)
    if model is not None:
        model.apply(rows, kinds)
        t.expected[sid] = model.rows()
    return sid


def _snapshot_kinds(jp: JavaPaimon, wh: str, t: JavaTable) -> list[str]:
    res = jp.system_table(wh, t.db, t.name, "snapshots")
    kind = res["columns"].index("commit_kind")
    sid = res["columns"].index("snapshot_id")
    return [r[kind] for r in sorted(res["rows"], key=lambda r: r[sid])]


def build_java_tables(jp: JavaPaimon, warehouse: Path) -> JavaTables:
    """Write the JavaTables layout with Java Paimon 0.9 into ``warehouse``."""
    wh = str(warehouse)
    tables: dict[str, JavaTable] = {}
    db = "db"

    # (a) pk_part --------------------------------------------------------------------
    t = JavaTable(db, "pk_part", f"{wh}/{db}.db/pk_part", ["id", "dt"], ["dt"], PK_PART_COLUMNS)
    jp.create_table(wh, db, t.name, t.columns, t.primary_keys, t.partition_keys, {"bucket": "3"})
    m = _PkModel(["id", "dt"])
    d1, d2, d3, d4 = "2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"
    _commit(jp, wh, t, m, [pk_part_row(i, d1, 1) for i in range(1, 9)]
            + [pk_part_row(i, d2, 1) for i in range(1, 6)])
    _commit(jp, wh, t, m, [pk_part_row(i, d1, 2) for i in (2, 4)] + [pk_part_row(i, d2, 1) for i in range(6, 9)])
    _commit(jp, wh, t, m, [pk_part_row(i, d3, 1) for i in range(1, 7)] + [pk_part_row(1, d2, 3)])
    _commit(jp, wh, t, m, [pk_part_row(8, d1, 1), pk_part_row(2, d3, 4)], ["-D", "+U"])
    sid = jp.compact(wh, db, t.name, full=True)
    t.expected[sid] = m.rows()
    _commit(jp, wh, t, m, [pk_part_row(1, d1, 5), pk_part_row(3, d2, 1), pk_part_row(1, d4, 1)],
            ["+U", "-D", "+I"])
    jp.create_tag(wh, db, t.name, "t1", 2)
    jp.create_branch(wh, db, t.name, "b1", "t1")
    jp.reset_consumer(wh, db, t.name, "c1", 4)
    tables[t.name] = t

    # (b) append_t -------------------------------------------------------------------
    cols = [("id", "INT"), ("dt", "STRING"), ("name", "STRING"), ("amount", "DECIMAL(12, 3)"),
            ("ts", "TIMESTAMP(6)"), ("flag", "BOOLEAN")]
    t = JavaTable(db, "append_t", f"{wh}/{db}.db/append_t", [], ["dt"], cols)
    jp.create_table(wh, db, t.name, cols, [], ["dt"], {"bucket": "-1", "file.format": "parquet"})

    def arow(i: int) -> dict[str, Any]:
        return {"id": i, "dt": d1 if i % 2 else d2, "name": None if i % 5 == 0 else f"a{i}",
                "amount": decimal.Decimal(f"{i}.{i:03d}"),
                "ts": dt.datetime(2024, 5, 1, 8, 0, 0) + dt.timedelta(seconds=i, microseconds=i),
                "flag": i % 3 == 0}

    all_rows: list[dict[str, Any]] = []
    for batch in ([arow(i) for i in range(1, 11)], [arow(i) for i in range(11, 16)]):
        sid = jp.write(wh, db, t.name, batch)
        all_rows += batch
        t.expected[sid] = sort_rows(list(all_rows))
    jp.analyze(wh, db, t.name)
    tables[t.name] = t

    # (c) dv_t -----------------------------------------------------------------------
    cols = [("id", "INT"), ("name", "STRING"), ("v", "BIGINT")]
    t = JavaTable(db, "dv_t", f"{wh}/{db}.db/dv_t", ["id"], [], cols)
    jp.create_table(wh, db, t.name, cols, ["id"], [],
                    {"bucket": "2", "deletion-vectors.enabled": "true", "file.format": "parquet"})
    m = _PkModel(["id"])
    _commit(jp, wh, t, m, [{"id": i, "name": f"n{i}", "v": i} for i in range(1, 21)])
    _commit(jp, wh, t, m, [{"id": i, "name": f"n{i}-u", "v": i + 100} for i in range(1, 6)])
    _commit(jp, wh, t, m, [{"id": 6, "name": None, "v": None}, {"id": 7, "name": None, "v": None},
                           {"id": 8, "name": "n8-u", "v": 808}], ["-D", "-D", "+U"])
    tables[t.name] = t

    # (d) dyn_t ----------------------------------------------------------------------
    cols = [("id", "INT"), ("dt", "STRING"), ("v", "STRING")]
    t = JavaTable(db, "dyn_t", f"{wh}/{db}.db/dyn_t", ["id", "dt"], ["dt"], cols)
    jp.create_table(wh, db, t.name, cols, ["id", "dt"], ["dt"],
                    {"bucket": "-1", "dynamic-bucket.target-row-num": "4", "file.format": "orc"})
    m = _PkModel(["id", "dt"])
    _commit(jp, wh, t, m, [{"id": i, "dt": d1, "v": f"v{i}"} for i in range(1, 11)]
            + [{"id": i, "dt": d2, "v": f"v{i}"} for i in range(1, 4)])
    _commit(jp, wh, t, m, [{"id": i, "dt": d1, "v": f"v{i}-u"} for i in (1, 5, 9)]
            + [{"id": i, "dt": d2, "v": f"v{i}"} for i in range(4, 8)])
    tables[t.name] = t

    # (e) nested_t -------------------------------------------------------------------
    cols = [("id", "INT"), ("tags", "ARRAY<STRING>"), ("attrs", "MAP<STRING, INT>"),
            ("point", "ROW<x DOUBLE, y DOUBLE>")]
    t = JavaTable(db, "nested_t", f"{wh}/{db}.db/nested_t", [], [], cols)
    jp.create_table(wh, db, t.name, cols, [], [], {"bucket": "-1", "file.format": "parquet"})
    rows = [
        {"id": 1, "tags": ["a", "b"], "attrs": {"k1": 1, "k2": 2}, "point": {"x": 1.5, "y": -2.0}},
        {"id": 2, "tags": [], "attrs": {}, "point": {"x": 0.0, "y": None}},
        {"id": 3, "tags": None, "attrs": None, "point": None},
        {"id": 4, "tags": ["x", None], "attrs": {"n": None}, "point": {"x": 3.0, "y": 4.0}},
    ]
    sid = jp.write(wh, db, t.name, rows)
    # Java renders MAP as [[key, value], ...] pairs and ROW as an object.
    t.expected[sid] = [dict(r, attrs=None if r["attrs"] is None else [[k, v] for k, v in r["attrs"].items()])
                       for r in rows]
    tables[t.name] = t

    for t in tables.values():
        t.snapshot_kinds = _snapshot_kinds(jp, wh, t)
    return JavaTables(wh, tables)


@pytest.fixture(scope="session")
def java_tables(java_paimon: JavaPaimon, tmp_path_factory: pytest.TempPathFactory) -> JavaTables:
    """Tables written by Java 0.9 in one warehouse; treat them as READ-ONLY (shared by the session)."""
    return build_java_tables(java_paimon, tmp_path_factory.mktemp("java-warehouse"))
