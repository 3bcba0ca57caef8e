"""File indexes against Java Paimon 0.9 (bloom filter byte-identity, bitmap V1 read by Java,
Java-written indexes used by our reads, rewrite-file-index results Java still reads).

Java side: tests/interop/java/FileIndexHelper.java (Java's own FileIndexPredicate on every
file's embedded index / ``.index`` file, and Java's filtered batch read).
Java 0.9 writes bitmap V1 only and ignores BSI, so V2 and BSI are checked elsewhere
(tests/core/test_fileindex_formats.py) against the upstream layout.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.rewrite_file_index import rewrite_file_index
from paimon_cli.core.data.binary_row import deserialize
from paimon_cli.core.data.predicate_parser import parse_predicate
from paimon_cli.core.fileindex.format import FileIndexContainer, index_file_names, write_container
from paimon_cli.core.fileindex.writer import DataFileIndexWriter
from paimon_cli.core.format.data_file import read_data_file
from paimon_cli.core.io import paths
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.schema.schema_change import DropColumn, RemoveOption, RenameColumn, SetOption

from .conftest import JavaTables, sort_rows
from .java_harness import JavaPaimon

pytestmark = pytest.mark.java
DB = "db"


def _helper(jp: JavaPaimon) -> Any:
    return jp._gateway.jvm.FileIndexHelper


def _live(table: Any) -> list[Any]:
    return FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())


def _bucket_dir(table: Any, e: Any) -> str:
    vals = deserialize(e.partition, table.schema.partition_types) if table.schema.partition_keys else []
    return paths.data_file_path(table.path, paths.partition_path_for(table.schema, vals), e.bucket, "").rstrip("/")


def _container(table: Any, e: Any) -> FileIndexContainer | None:
    m = e.file
    if m.embedded_index is not None:
        return FileIndexContainer(m.embedded_index)
    names = index_file_names(m.extra_files)
    if names:
        return FileIndexContainer(table.file_io.read_bytes(f"{_bucket_dir(table, e)}/{names[0]}"))
    return None


def _file_table(table: Any, e: Any) -> Any:
    fields = list(table.schema_manager.schema(e.file.schema_id).fields)
    return read_data_file(table.file_io, f"{_bucket_dir(table, e)}/{e.file.file_name}", fields)


# ------------------------------------------------------------------------- bloom byte identity


def test_bloom_filter_payload_is_byte_identical_to_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """Same data file + options -> the same bloom-filter bytes (and container) as Java 0.9."""
    wh = str(tmp_path / "wh")
    cols = [("id", "BIGINT"), ("s", "STRING"), ("i", "INT"), ("t", "TINYINT"), ("sm", "SMALLINT"),
            ("f", "FLOAT"), ("d", "DOUBLE"), ("day", "DATE"), ("ts", "TIMESTAMP(3)"), ("ts6", "TIMESTAMP(6)"),
            ("bin", "BYTES"), ("tm", "TIME")]
    names = [c for c, _ in cols]
    opts = {"file-index.bloom-filter.columns": ",".join(names), "file-index.in-manifest-threshold": "1"}
    for n in names:
        opts[f"file-index.bloom-filter.{n}.items"] = "500"
    opts["file-index.bloom-filter.s.fpp"] = "0.01"
    opts["file-index.bloom-filter.id.fpp"] = "0.3"
    java_paimon.create_table(wh, DB, "t", cols, [], [], opts)
    rnd = random.Random(11)
    rows = []
    for k in range(400):
        null = k % 13 == 0
        rows.append({
            "id": rnd.randint(-2**63, 2**63 - 1), "s": None if null else f"sé{rnd.randint(0, 10**9)}\u00e9\U0001f600"[:rnd.randint(0, 14)],
            "i": rnd.randint(-2**31, 2**31 - 1), "t": rnd.randint(-128, 127), "sm": rnd.randint(-2**15, 2**15 - 1),
            "f": rnd.choice([0.0, -0.0, 1.5, -2.25, rnd.random() * 1e6]), "d": rnd.choice([0.0, -0.0, rnd.random() * 1e12, -1e-300]),
            "day": dt.date(1960, 1, 1) + dt.timedelta(days=rnd.randint(0, 40000)),
            "ts": dt.datetime(1965, 1, 1) + dt.timedelta(milliseconds=rnd.randint(0, 3 * 10**12)),
            "ts6": dt.datetime(1965, 1, 1) + dt.timedelta(microseconds=rnd.randint(0, 3 * 10**15)),
            "bin": None if null else bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 40))),
            "tm": dt.time(rnd.randint(0, 23), rnd.randint(0, 59), rnd.randint(0, 59), rnd.randint(0, 999) * 1000),
        })
    java_paimon.write(wh, DB, "t", rows)
    table = FileSystemCatalog(wh).get_table(f"{DB}.t")
    (e,) = _live(table)
    java_container = _container(table, e)
    assert java_container is not None and index_file_names(e.file.extra_files)  # threshold 1 -> .index file
    java_payloads = java_container.read_all()
    assert set(java_payloads) == set(names)

    w = DataFileIndexWriter.create(table.schema, table.schema.options)
    assert w is not None
    data = _file_table(table, e)
    for batch in data.to_batches(max_chunksize=97):  # several batches: incremental build
        w.write_batch(batch)
    ours = w.serialized()
    for n in names:
        assert ours[n]["bloom-filter"] == java_payloads[n]["bloom-filter"], n
    # our container holds the same entries (Java keys them by name; the order carries no meaning)
    ours_container = FileIndexContainer(write_container(ours))
    assert ours_container.read_all() == java_payloads
    assert len(ours_container.data) == len(java_container.data)


# ------------------------------------------------------------------------- Java reads ours


def _pred_json(op: str, col: str, values: list[Any]) -> str:
    return json.dumps({"op": op, "col": col, "values": values})


_SQL = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _sql(op: str, col: str, values: list[Any]) -> str:
    def lit(v: Any) -> str:
        return f"'{v}'" if isinstance(v, str) else str(v)

    if op in _SQL:
        return f"{col} {_SQL[op]} {lit(values[0])}"
    if op == "in":
        return f"{col} IN ({', '.join(lit(v) for v in values)})"
    if op == "isnull":
        return f"{col} IS NULL"
    return f"{col} IS NOT NULL"


def _make_multi_file_table(jp: JavaPaimon, wh: str, name: str, commits: int = 6, seed: int = 5) -> None:
    cols = [("id", "BIGINT"), ("s", "STRING"), ("c", "INT"), ("g", "BIGINT")]
    jp.create_table(wh, DB, name, cols, [], [], {"bucket": "-1"})
    rnd = random.Random(seed)
    nid = 0
    for k in range(commits):
        rows = []
        for _ in range(300):
            rows.append({"id": nid, "s": None if rnd.random() < 0.05 else f"u{rnd.randint(k * 40, k * 40 + 60)}",
                         "c": None if rnd.random() < 0.05 else rnd.randint(k * 3, k * 3 + 4),
                         "g": rnd.randint(-50, 50) * (k + 1)})
            nid += 1
        jp.write(wh, DB, name, rows)


def test_java_reads_our_bitmap_v1_and_bloom_indexes(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """After our rewrite-file-index: Java's FileIndexPredicate, over our index bytes, skips a
    file exactly when it holds no match (bitmap equality/IN is exact; bloom never skips a
    match) and Java's filtered reads return exactly the rows of an unindexed scan."""
    wh = str(tmp_path / "wh")
    _make_multi_file_table(java_paimon, wh, "t")
    cat = FileSystemCatalog(wh)
    cat.alter_table(f"{DB}.t", [
        SetOption("file-index.bitmap.columns", "c"), SetOption("file-index.bitmap.c.version", "1"),
        SetOption("file-index.bloom-filter.columns", "s"), SetOption("file-index.bloom-filter.s.items", "400"),
    ])
    table = cat.get_table(f"{DB}.t")
    res = rewrite_file_index(table)
    assert res.snapshot_id is not None and len(res.changed) == 6
    table = cat.get_table(f"{DB}.t")
    assert table.snapshot_manager.latest_snapshot().commit_kind == "COMPACT"
    files = {e.file.file_name: _file_table(table, e) for e in _live(table)}
    all_rows = java_paimon.read(wh, DB, "t", row_kind=False)
    assert len(all_rows) == 1800  # Java 0.9 reads the DELETE+ADD pairs correctly

    rnd = random.Random(3)
    helper = _helper(java_paimon)
    cases: list[tuple[str, str, list[Any]]] = []
    for _ in range(25):
        cases.append(("eq", "c", [rnd.randint(-2, 22)]))
        cases.append(("in", "c", [rnd.randint(-2, 22) for _ in range(rnd.randint(1, 3))]))
        cases.append(("eq", "s", [f"u{rnd.randint(0, 260)}"]))
        cases.append(("in", "s", [f"u{rnd.randint(0, 260)}" for _ in range(2)]))
    cases += [("isnull", "c", []), ("isnotnull", "c", []), ("ne", "c", [4])]
    skipped = 0
    for op, col, vals in cases:
        verdicts = json.loads(helper.testFileIndexes(wh, DB, "t", _pred_json(op, col, vals)))
        assert set(verdicts) == set(files)
        expr = parse_predicate(_sql(op, col, vals), list(table.schema.fields)).to_arrow_expression()
        for name, data in files.items():
            has = data.filter(expr).num_rows > 0
            if has:
                assert verdicts[name], (op, col, vals, name)
            if col == "c" and op in ("eq", "in"):
                assert verdicts[name] == has, (op, col, vals, name)  # bitmap is exact
            skipped += not verdicts[name]
        got = json.loads(helper.filteredRead(wh, DB, "t", _pred_json(op, col, vals), "id"))
        want = sorted(r["id"] for r in all_rows if _match(r, op, col, vals))
        assert got["ids"] == want and got["duplicates"] == 0
    assert skipped > 50  # the indexes really prune


def _match(r: dict[str, Any], op: str, col: str, vals: list[Any]) -> bool:
    v = r[col]
    if op == "isnull":
        return v is None
    if op == "isnotnull":
        return v is not None
    if v is None:
        return False
    if op == "eq":
        return v == vals[0]
    if op == "ne":
        return v != vals[0]
    if op == "in":
        return v in vals
    return {"lt": v < vals[0], "le": v <= vals[0], "gt": v > vals[0], "ge": v >= vals[0]}[op]


def test_java_writes_and_compacts_after_our_rewrite(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """The COMPACT snapshot of DELETE+ADD pairs (same file name) stays readable and writable
    for Java 0.9, whose file identifier ignores the index: later Java commits merge its
    manifests, and a Java compaction rewrites the files."""
    wh = str(tmp_path / "wh")
    _make_multi_file_table(java_paimon, wh, "t", commits=4)
    cat = FileSystemCatalog(wh)
    cat.alter_table(f"{DB}.t", [SetOption("file-index.bitmap.columns", "c"), SetOption("file-index.bitmap.c.version", "1"),
                                SetOption("manifest.merge-min-count", "2")])
    assert rewrite_file_index(cat.get_table(f"{DB}.t")).snapshot_id is not None
    java_paimon.write(wh, DB, "t", [{"id": 10_000 + i, "s": "x", "c": 1, "g": 0} for i in range(10)])
    java_paimon.write(wh, DB, "t", [{"id": 20_000 + i, "s": "y", "c": 2, "g": 0} for i in range(10)])
    rows = java_paimon.read(wh, DB, "t", row_kind=False)
    assert len(rows) == 1220 and len({r["id"] for r in rows}) == 1220
    java_paimon.compact(wh, DB, "t", options={"compaction.min.file-num": "2", "compaction.max.file-num": "3"})
    rows = java_paimon.read(wh, DB, "t", row_kind=False)
    assert len({r["id"] for r in rows}) == 1220
    ours = TableRead(cat.get_table(f"{DB}.t")).to_arrow()
    assert sorted(ours.column("id").to_pylist()) == sorted(r["id"] for r in rows)


# ------------------------------------------------------------------------- we read Java's


def test_our_reads_use_java_written_indexes(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """Java 0.9 writes bloom (embedded and .index) and bitmap V1 indexes; our read --where
    prunes with them and returns what Java's filtered read returns."""
    wh = str(tmp_path / "wh")
    cols = [("id", "BIGINT"), ("s", "STRING"), ("c", "INT"), ("g", "BIGINT")]
    java_paimon.create_table(wh, DB, "t", cols, [], [], {
        "file-index.bloom-filter.columns": "s", "file-index.bloom-filter.s.items": "300",
        "file-index.bitmap.columns": "c", "file-index.in-manifest-threshold": "600",
    })
    rnd = random.Random(9)
    nid = 0
    for k in range(6):
        rows = []
        for _ in range(200):
            # every file spans c 0..30 (stats cannot prune), but holds only 4 distinct values
            rows.append({"id": nid, "s": f"u{rnd.randint(k * 50, k * 50 + 40)}",
                         "c": rnd.choice([0, 30, k * 3 + 1, k * 3 + 2]), "g": k})
            nid += 1
        java_paimon.write(wh, DB, "t", rows)
    table = FileSystemCatalog(wh).get_table(f"{DB}.t")
    kinds = set()
    for e in _live(table):
        c = _container(table, e)
        assert c is not None
        kinds |= {(x.column, x.index_type) for x in c.entries}
    assert kinds == {("s", "bloom-filter"), ("c", "bitmap")}
    helper = _helper(java_paimon)
    pruned_any = {"bloom-filter": 0, "bitmap": 0}
    for _ in range(30):
        for op, col, vals in (("eq", "s", [f"u{rnd.randint(0, 300)}"]), ("eq", "c", [rnd.randint(0, 18)]),
                              ("in", "c", [rnd.randint(0, 18), rnd.randint(0, 18)])):
            tr = TableRead(table, predicate=parse_predicate(_sql(op, col, vals), list(table.schema.fields)))
            ours = sorted(tr.to_arrow().column("id").to_pylist())
            java = json.loads(helper.filteredRead(wh, DB, "t", _pred_json(op, col, vals), "id"))["ids"]
            assert ours == java
            plan = tr.plan()
            for k in pruned_any:
                pruned_any[k] += plan.pruned_by_index.get(k, type(plan.remaining)()).files
            explain = {r["step"]: r["files"] for r in tr.explain().rows}
            assert explain["remaining"] == plan.remaining.files
    assert pruned_any["bloom-filter"] > 0 and pruned_any["bitmap"] > 0


# ------------------------------------------------------------------------- schema evolution


def test_rewrite_after_rename_and_drop_java_reads(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """A rename keeps the index on the same field id (no rebuild, Java still uses it under the
    file's old name); removing the option / dropping the column makes rewrite drop it."""
    wh = str(tmp_path / "wh")
    _make_multi_file_table(java_paimon, wh, "t", commits=3)
    cat = FileSystemCatalog(wh)
    ident = f"{DB}.t"
    cat.alter_table(ident, [SetOption("file-index.bitmap.columns", "c,g"), SetOption("file-index.bitmap.c.version", "1"),
                            SetOption("file-index.bitmap.g.version", "1")])
    rewrite_file_index(cat.get_table(ident))
    cat.alter_table(ident, [RenameColumn("c", "c2")])
    table = cat.get_table(ident)
    assert table.schema.options["file-index.bitmap.columns"] == "c2,g"
    assert table.schema.options["file-index.bitmap.c2.version"] == "1"
    res = rewrite_file_index(table, dry_run=True)
    assert not res.changed  # still right: same field id
    files = {e.file.file_name: _file_table(table, e) for e in _live(table)}
    helper = _helper(java_paimon)
    for v in range(0, 12):
        verdicts = json.loads(helper.testFileIndexes(wh, DB, "t", _pred_json("eq", "c2", [v])))
        for name, data in files.items():
            has = data.filter(pc.field("c") == v).num_rows > 0  # old file schema name
            assert verdicts[name] == has
        tr = TableRead(table, predicate=parse_predicate(f"c2 = {v}", list(table.schema.fields)))
        assert sorted(tr.to_arrow().column("id").to_pylist()) == \
            json.loads(helper.filteredRead(wh, DB, "t", _pred_json("eq", "c2", [v]), "id"))["ids"]

    # drop column g together with its index option: rewrite drops the index entries
    cat.alter_table(ident, [RemoveOption("file-index.bitmap.g.version"), SetOption("file-index.bitmap.columns", "c2"),
                            DropColumn("g")])
    table = cat.get_table(ident)
    from paimon_cli.core.system.file_indexes import file_index_warnings

    warnings = file_index_warnings(table)
    assert any("'g'" in w and "no longer exists" in w for w in warnings)
    res = rewrite_file_index(table)
    assert len(res.changed) == 3 and res.indexes_dropped == 3 and res.indexes_built == 0
    table = cat.get_table(ident)
    for e in _live(table):
        assert {x.column for x in _container(table, e).entries} == {"c"}
    assert file_index_warnings(table) == []
    assert len(java_paimon.read(wh, DB, "t", row_kind=False)) == 900

    # remove every index: rewrite drops the containers
    cat.alter_table(ident, [RemoveOption("file-index.bitmap.c2.version"), RemoveOption("file-index.bitmap.columns")])
    table = cat.get_table(ident)
    res = rewrite_file_index(table)
    assert len(res.changed) == 3
    table = cat.get_table(ident)
    assert all(e.file.embedded_index is None and not index_file_names(e.file.extra_files) for e in _live(table))
    assert len(java_paimon.read(wh, DB, "t", row_kind=False)) == 900


def test_default_bitmap_is_v2_which_java_09_cannot_filter_with(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """The default bitmap version is 2 (current Java); Java 0.9 only knows 1, so its filtered
    reads on that column fail exactly as on a table Java 1.x indexed (documented in the README;
    version=1 is the 0.9-compatible choice, tested above). Plain reads are unaffected."""
    wh = str(tmp_path / "wh")
    java_paimon.create_table(wh, DB, "t", [("id", "BIGINT"), ("c", "INT")], [], [], {"bucket": "-1"})
    java_paimon.write(wh, DB, "t", [{"id": i, "c": i % 5} for i in range(100)])
    cat = FileSystemCatalog(wh)
    cat.alter_table(f"{DB}.t", [SetOption("file-index.bitmap.columns", "c")])
    rewrite_file_index(cat.get_table(f"{DB}.t"))
    table = cat.get_table(f"{DB}.t")
    (e,) = _live(table)
    (payload,) = [_container(table, e).payload(x) for x in _container(table, e).entries]
    assert payload[0] == 2
    with pytest.raises(Exception, match="lower than 2"):  # py4j error from Java's BitmapFileIndex
        _helper(java_paimon).filteredRead(wh, DB, "t", _pred_json("eq", "c", [3]), "id")
    assert len(java_paimon.read(wh, DB, "t")) == 100
    got = TableRead(table, predicate=parse_predicate("c = 3", list(table.schema.fields))).to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(3, 100, 5))


def test_rewrite_on_java_dv_table_keeps_its_deletion_vectors(
    java_paimon: JavaPaimon, java_tables: JavaTables, tmp_path: Path
) -> None:
    """dv_t holds live deletion vectors Java 0.9 wrote; the rewrite replaces file metas under
    the same names, so the vectors keep applying: Java and we read the same rows."""
    t = java_tables.dv_t
    wh = str(tmp_path / "wh")
    shutil.copytree(java_tables.warehouse, wh)
    cat = FileSystemCatalog(wh)
    table = cat.get_table(t.identifier)
    assert any(ie.index_file.index_type == "DELETION_VECTORS" and ie.index_file.dv_ranges
               for ie in FileStoreScan(table).index_entries(table.snapshot_manager.latest_snapshot()))
    cat.alter_table(t.identifier, [SetOption("file-index.bloom-filter.columns", "id")])
    assert rewrite_file_index(cat.get_table(t.identifier)).snapshot_id is not None
    assert sort_rows(java_paimon.read(wh, t.db, t.name, row_kind=False)) == t.latest_expected
    ours = TableRead(cat.get_table(t.identifier)).to_arrow().to_pylist()
    assert sort_rows(ours) == t.latest_expected
