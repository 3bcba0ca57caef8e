"""A primary-key split too big to merge in memory is merged streaming (the compaction's k-way
merge of its sorted runs, a key range at a time): the rows, columns, types and order are the
in-memory read's, for every merge engine, deletes, deletion vectors, evolved schemas, key
prefilters and partition columns; and memory stays bounded."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.job import compact_table
from paimon_cli.core.data.predicate_parser import parse_predicate
from paimon_cli.core.data.types import BigIntType, DoubleType, IntType, VarCharType
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.mergetree import changelog, sort_merge
from paimon_cli.core.operation import merge_split_read
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.schema_change import AddColumn, RenameColumn
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.table.file_store_table import TimeTravel

KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}


def _write(cat: FileSystemCatalog, ident: str, rows: list[dict[str, Any]], kinds: list[int] | None = None) -> None:
    table = cat.get_table(ident)
    tw = TableWrite(table)
    data = pa.Table.from_pylist(rows, schema=arrow_schema(table.schema.fields))
    tw.write_arrow(data, pa.array(kinds, pa.int8()) if kinds is not None else None)
    FileStoreCommit(table).commit(tw.prepare_commit())


ENGINES: dict[str, dict[str, str]] = {
    "deduplicate": {},
    "deduplicate-sequence-field": {"sequence.field": "seq"},
    "first-row": {"merge-engine": "first-row", "ignore-delete": "true"},
    "partial-update": {"merge-engine": "partial-update", "ignore-delete": "true"},
    "aggregation": {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
                    "fields.seq.aggregate-function": "sum"},
    "aggregation-remove-on-delete": {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
                                     "aggregation.remove-record-on-delete": "true"},
    "lookup-aggregation": {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
                           "changelog-producer": "lookup"},
    "deletion-vectors": {"deletion-vectors.enabled": "true"},
    "ignore-delete": {"ignore-delete": "true"},
}


def _make(cat: FileSystemCatalog, engine: str) -> str:
    """PK (id, dt) partitioned by dt, 2 buckets: level-0 runs over compacted levels, overlapping
    keys, retractions, a schema change in the middle (renamed + added column)."""
    options = {"bucket": "2", "write-only": "true", **ENGINES[engine]}
    schema = Schema.of([("id", BigIntType(nullable=False), None), ("dt", VarCharType(4, nullable=False), None),
                        ("name", VarCharType(20), None), ("v", BigIntType(), None), ("seq", IntType(), None),
                        ("f", DoubleType(), None)],
                       partition_keys=["dt"], primary_keys=["id", "dt"], options=options)
    ident = "db.t"
    cat.create_table(ident, schema)
    rng = np.random.default_rng(7)
    for batch in range(6):
        ids = rng.choice(np.arange(400), size=150, replace=False)
        rows = [{"id": int(i), "dt": "ab"[int(i) % 2], "name": None if (i + batch) % 5 == 0 else f"n{batch}-{i}",
                 "v": int(i) + batch, "seq": int(rng.integers(0, 4)), "f": float(i) / 3}
                for i in ids]
        kinds = [KINDS["-D"] if batch >= 2 and k % 9 == 0 else
                 KINDS["-U"] if batch >= 3 and k % 13 == 0 else KINDS["+I"] for k in range(len(rows))]
        if batch == 3:
            cat.alter_table(ident, [RenameColumn("name", "label"), AddColumn("extra", IntType())])
        if batch >= 3:
            for r in rows:
                r["label"] = r.pop("name")
                r["extra"] = int(r["id"]) % 7
        _write(cat, ident, rows, kinds)
        if batch in (1, 4):
            compact_table(cat.get_table(ident), full=batch == 1, expire=False)
    if options.get("deletion-vectors.enabled"):
        _delete_positions(cat.get_table(ident))
    return ident


def _delete_positions(table: Any) -> None:
    """A deletion vector on the top file of every bucket (rows 0, 3, 9, ...)."""
    from paimon_cli.core.index.deletion_vectors import DeletionVector, write_deletion_vector_index
    from paimon_cli.core.manifest.index_manifest import IndexFileMeta
    from paimon_cli.core.mergetree.commit_message import CommitMessage

    tops: dict[Any, Any] = {}
    for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot()):
        k = (e.partition, e.bucket)
        if k not in tops or e.file.level > tops[k].file.level:
            tops[k] = e
    messages = []
    for n, e in enumerate(tops.values()):
        name = f"index-test-dv-{n}"
        dv = DeletionVector.from_positions(list(range(0, e.file.row_count, 3)))
        size, metas = write_deletion_vector_index(table.file_io, f"{table.path}/index/{name}", {e.file.file_name: dv})
        messages.append(CommitMessage(e.partition, e.bucket, e.total_buckets,
                                      new_index_files=[IndexFileMeta("DELETION_VECTORS", name, size, 1, tuple(metas))]))
    FileStoreCommit(table).commit(messages)


def _read(table: Any, streamed: bool, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> pa.Table:
    calls: list[int] = []
    real = merge_split_read.MergeFileSplitRead.read_streamed

    def spy(self: Any, split: Any) -> Any:
        calls.append(1)
        return real(self, split)

    with monkeypatch.context() as m:
        m.setattr(merge_split_read.MergeFileSplitRead, "read_streamed", spy)
        if streamed:
            m.setattr(merge_split_read, "STREAM_SPLIT_BYTES", 0)
            m.setattr(merge_split_read, "STREAM_BATCH_ROWS", 7)  # many key ranges per split
        tr = TableRead(table, **kw)
        out = pa.Table.from_batches(list(tr.iter_batches()), schema=tr.output_schema())
    assert bool(calls) == streamed, (calls, streamed)
    return out


def _reads(table: Any, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> tuple[pa.Table, pa.Table]:
    return _read(table, False, monkeypatch, **kw), _read(table, True, monkeypatch, **kw)


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_streamed_merge_equals_the_in_memory_merge(tmp_path: Path, engine: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    ident = _make(cat, engine)
    table = cat.get_table(ident)
    entries = FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())
    by_bucket: dict[Any, set[int]] = {}
    for e in entries:
        by_bucket.setdefault((e.partition, e.bucket), set()).add(e.file.level)
    assert all(0 in lv and len(lv) >= 2 for lv in by_bucket.values()), by_bucket  # runs on several levels
    if engine == "deletion-vectors":
        assert table.snapshot_manager.latest_snapshot().index_manifest  # DVs to apply
    cases: list[dict[str, Any]] = [
        {}, {"all_levels": True}, {"keep_deletes": True, "with_row_kind": True},
        {"projection": ["label", "id"], "predicate": parse_predicate("id >= 100 AND id < 300", table.schema.fields)},
        {"predicate": parse_predicate("dt = 'b' AND (v > 200 OR label IS NULL)", table.schema.fields)},
        {"projection": ["dt", "extra"]},
        {"limit": 123},
    ]
    for kw in cases:
        mem, streamed = _reads(table, monkeypatch, **kw)
        assert mem.num_rows > 0, kw
        assert streamed.schema == mem.schema, kw
        assert streamed.equals(mem), kw  # same rows in the same order
    # the snapshot before the schema change (time travel reads that schema)
    old = cat.get_table(ident)
    mem, streamed = _reads(old, monkeypatch, at=TimeTravel(snapshot_id=3))
    assert "label" not in mem.column_names and streamed.equals(mem)


def test_streamed_read_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`read` (stdout) and `read --to` write the same rows either way; `--limit` stops early."""
    import typer
    from typer.testing import CliRunner

    from paimon_cli.commands.read import read

    cat = FileSystemCatalog(str(tmp_path / "wh"))
    ident = _make(cat, "partial-update")
    app = typer.Typer()
    app.command()(read)
    app.command("noop")(lambda: None)

    def cli(*args: str) -> Any:
        res = CliRunner().invoke(app, ["read", ident, "-w", cat.warehouse, *args])
        assert res.exit_code == 0, res.output
        return res

    outs = {}
    for streamed in (False, True):
        with monkeypatch.context() as m:
            if streamed:
                m.setattr(merge_split_read, "STREAM_SPLIT_BYTES", 0)
                m.setattr(merge_split_read, "STREAM_BATCH_ROWS", 5)
            to = tmp_path / f"out-{streamed}.parquet"
            cli("--to", str(to))
            outs[streamed] = (pq.read_table(str(to)), cli("-o", "jsonl").stdout,
                              cli("-o", "jsonl", "--limit", "17", "--where", "id > 50").stdout,
                              cli("--explain", "-o", "json").stdout)
    (t0, j0, l0, e0), (t1, j1, l1, e1) = outs[False], outs[True]
    assert t0.num_rows > 100 and t1.equals(t0)
    assert j1 == j0 and len(l1.splitlines()) == 17 and l1 == l0
    steps = {r["step"]: r for r in json.loads(e1)}
    assert steps["merged streaming"]["buckets"] == 4 and steps["merged streaming"]["files"] > 4
    assert {r["step"]: r for r in json.loads(e0)}["merged streaming"]["buckets"] == 0


def test_streamed_lookup_read_keeps_one_high_level_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lookup-mode table holds a key's merged value on a lower level and the old one above:
    the streamed merge, like the in-memory one, counts only one of them."""
    assert sort_merge.HIGH_LEVEL_COL == changelog.LEVEL
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_table("db.t", Schema.of(
        [("id", IntType(nullable=False), None), ("v", BigIntType(), None)], primary_keys=["id"],
        options={"bucket": "1", "write-only": "true", "merge-engine": "aggregation",
                 "fields.v.aggregate-function": "sum", "changelog-producer": "lookup"}))

    def write(ids: list[int], v: int) -> None:
        _write(cat, "db.t", [{"id": i, "v": v} for i in ids])

    write(list(range(3000)), 10)
    compact_table(cat.get_table("db.t"), expire=False)
    write([1, 2999], 1)
    compact_table(cat.get_table("db.t"), expire=False)  # merged 11 on level 4, 10 stays on level 5
    write([1, 5], 100)  # and a level-0 record on top
    t = cat.get_table("db.t")
    mem, streamed = _reads(t, monkeypatch)
    rows = dict(zip(streamed.column("id").to_pylist(), streamed.column("v").to_pylist(), strict=True))
    assert rows[1] == 111 and rows[2999] == 11 and rows[5] == 110 and rows[0] == 10 and len(rows) == 3000
    assert streamed.equals(mem)


def test_small_splits_keep_the_in_memory_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    table = cat.get_table(_make(cat, "deduplicate"))
    split = TableRead(table).plan().splits[0]
    reader = TableRead(table)._split_read()
    assert isinstance(reader, merge_split_read.MergeFileSplitRead)
    size = merge_split_read.estimated_decoded_bytes(split)
    assert size == int(sum(f.file_size for f in split.files) * sort_merge.ARROW_PER_FILE_BYTE) > 0
    assert not reader.streams(split)
    monkeypatch.setattr(merge_split_read, "STREAM_SPLIT_BYTES", size - 1)
    assert reader.streams(split)


_PEAK = """
import resource, sys
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation import merge_split_read
from paimon_cli.core.operation.read import TableRead
if sys.argv[2] != "memory":
    merge_split_read.STREAM_SPLIT_BYTES = 0
if sys.argv[2] == "streamed-small":
    merge_split_read.STREAM_BATCH_ROWS = 8192
t = FileSystemCatalog(sys.argv[1]).get_table("db.big")
# what any read loads first, so the growth below is the data's
import numpy, pyarrow.compute, pyarrow.parquet
import paimon_cli.core.mergetree.changelog, paimon_cli.core.mergetree.levels, paimon_cli.core.mergetree.sort_merge
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
import pyarrow.compute as pc
rows = total = ids = 0
for b in TableRead(t).iter_batches():
    rows += b.num_rows
    ids += pc.sum(b.column("id")).as_py()
    total += 8 * b.num_rows + pc.sum(pc.utf8_length(b.column("s"))).as_py()
print(rows, ids, total, base, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


@pytest.mark.slow
def test_streamed_read_peak_memory_stays_below_the_bucket(tmp_path: Path) -> None:
    """One bucket of 3 x 800,000 records with ~200-character values (3 sorted runs, half of
    each overlapping the next; 1,600,000 merged rows, ~330 MiB): the streamed read's peak RSS grows by well under the data it returns, where the
    in-memory merge holds it all."""
    wh = str(tmp_path / "wh")
    make = textwrap.dedent("""
        import sys
        import numpy as np, pyarrow as pa, pyarrow.compute as pc
        from paimon_cli.core.catalog.filesystem import FileSystemCatalog
        from paimon_cli.core.data.types import BigIntType, VarCharType
        from paimon_cli.core.operation.commit import FileStoreCommit
        from paimon_cli.core.operation.write import TableWrite
        from paimon_cli.core.schema.table_schema import Schema
        cat = FileSystemCatalog(sys.argv[1])
        cat.create_table("db.big", Schema.of([("id", BigIntType(nullable=False), None), ("s", VarCharType(300), None)],
                         primary_keys=["id"], options={"bucket": "1", "write-only": "true",
                                                       "file.compression": "zstd"}))
        n = 800_000
        rng = np.random.default_rng(1)
        for c in range(3):
            ids = np.arange(c * n // 2, c * n // 2 + n, dtype=np.int64)
            tail = pa.array(rng.integers(0, 1 << 62, n).astype(str))
            s = pc.binary_join_element_wise(pa.array(np.full(n, f"{c}" * 180)), tail, "-")
            t = cat.get_table("db.big")
            tw = TableWrite(t)
            tw.write_arrow(pa.table({"id": ids, "s": s}))
            FileStoreCommit(t).commit(tw.prepare_commit())
    """)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run([sys.executable, "-c", make, wh], check=True, env=env, timeout=600)
    out = {}
    for mode in ("streamed-small", "streamed", "memory"):
        res = subprocess.run([sys.executable, "-c", _PEAK, wh, mode], check=True, env=env, timeout=600,
                             capture_output=True, text=True)
        rows, ids, total, base, peak = (int(x) for x in res.stdout.split())
        out[mode] = (rows, ids, total, (peak - base) * 1024)  # ru_maxrss: KiB on Linux
    rows, ids, total, grown = out["streamed-small"]
    print(out)
    assert rows == 1_600_000 and ids == sum(range(rows))
    assert out["streamed"][:3] == out["memory"][:3] == (rows, ids, total)
    assert total > 300 << 20
    assert grown < total / 4, out  # a lowered budget: a small fraction of the bucket
    # the default budget: a few of the reader's batches per run (65,536 rows at most), far
    # below the in-memory merge
    assert out["streamed"][3] < out["memory"][3] / 4, out
    assert out["memory"][3] > total, out  # the in-memory merge holds the whole bucket (and more)
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss > 0
