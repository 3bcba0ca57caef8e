"""rewrite-file-index, index placement, read pruning/explain, inspect rows/warnings, option
validation (exit 4) and the rolling writer's index hook -- on tables we write ourselves."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.rewrite_file_index import rewrite_file_index
from paimon_cli.core.compact.write_job import write_table
from paimon_cli.core.data.predicate_parser import parse_predicate
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.fileindex.format import FileIndexContainer, index_file_names
from paimon_cli.core.fileindex.writer import index_builder_factory
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.schema.schema_change import DropColumn, RemoveOption, RenameColumn, SetOption
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.system.file_indexes import file_index_rows, file_index_warnings

ID = "db.t"


@pytest.fixture
def cat(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


def _table(cat: FileSystemCatalog, tmp_path: Path, files: int = 4, rows: int = 500, **options: str) -> Any:
    cat.create_table(ID, Schema.of(parse_columns("id BIGINT, s STRING, c INT, dt STRING"), partition_keys=["dt"],
                                   options={"bucket": "-1", **options}))
    t = cat.get_table(ID)
    rnd = random.Random(4)
    nid = 0
    for k in range(files):
        data = []
        for _ in range(rows):
            data.append({"id": nid, "s": f"s{rnd.randint(0, 50)}_{k}", "c": rnd.choice([0, 100, k * 10 + 1]),
                         "dt": f"d{k % 2}"})
            nid += 1
        p = tmp_path / f"in{k}.parquet"
        pq.write_table(pa.Table.from_pylist(data), p)
        write_table(t, [str(p)])
    return cat.get_table(ID)


def _live(t: Any) -> list[Any]:
    return FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())


def _alter(cat: FileSystemCatalog, *changes: Any) -> Any:
    cat.alter_table(ID, list(changes))
    return cat.get_table(ID)


def test_rewrite_builds_then_skips_and_is_read_back(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = _table(cat, tmp_path)
    t = _alter(cat, SetOption("file-index.bloom-filter.columns", "s"), SetOption("file-index.bloom-filter.s.items", "100"),
               SetOption("file-index.bitmap.columns", "c"), SetOption("file-index.in-manifest-threshold", "64 kb"))
    before = {e.file.file_name for e in _live(t)}
    dry = rewrite_file_index(t, dry_run=True)
    assert len(dry.changed) == 4 and dry.snapshot_id is None
    assert t.snapshot_manager.latest_snapshot_id() == 4  # dry run commits nothing
    res = rewrite_file_index(t)
    t = cat.get_table(ID)
    snap = t.snapshot_manager.latest_snapshot()
    assert res.snapshot_id == snap.id and snap.commit_kind == "COMPACT" and res.rows_read == 2000
    assert {e.file.file_name for e in _live(t)} == before  # same data files
    for e in _live(t):
        c = FileIndexContainer(e.file.embedded_index) if e.file.embedded_index else None
        assert c is not None and not index_file_names(e.file.extra_files)  # under the 64 kb threshold
        assert {(x.column, x.index_type) for x in c.entries} == {("s", "bloom-filter"), ("c", "bitmap")}
    again = rewrite_file_index(t)
    assert again.snapshot_id is None and not again.changed
    assert TableRead(t).to_arrow().num_rows == 2000
    assert file_index_warnings(t) == []


def test_placement_threshold_and_new_index_file_names(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = _table(cat, tmp_path, files=2)
    t = _alter(cat, SetOption("file-index.bloom-filter.columns", "s"))  # default 1M items: ~600 KB
    rewrite_file_index(t)
    t = cat.get_table(ID)
    first = {e.file.file_name: index_file_names(e.file.extra_files) for e in _live(t)}
    assert all(v == [k + ".index"] and not None for k, v in first.items())
    assert all(e.file.embedded_index is None for e in _live(t))
    t = _alter(cat, SetOption("file-index.bloom-filter.s.fpp", "0.05"))  # stale -> rebuilt into a new file
    assert "built with other options" in " ".join(file_index_warnings(t))
    res = rewrite_file_index(t)
    assert len(res.changed) == 2 and res.index_files_written == 2
    t = cat.get_table(ID)
    for e in _live(t):
        assert index_file_names(e.file.extra_files) == [e.file.file_name + "-1.index"]
    # the old .index files stay (older snapshots use them)
    for name in first:
        hits = [p for p in Path(t.path).rglob(name + ".index")]
        assert len(hits) == 1
    t = _alter(cat, SetOption("file-index.in-manifest-threshold", "2 mb"))
    rewrite_file_index(t)
    t = cat.get_table(ID)
    assert all(e.file.embedded_index is not None and not index_file_names(e.file.extra_files) for e in _live(t))


def test_rename_keeps_index_drop_removes_it(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = _table(cat, tmp_path, files=2)
    t = _alter(cat, SetOption("file-index.bitmap.columns", "c,s"), SetOption("file-index.bitmap.s.version", "1"))
    rewrite_file_index(t)
    t = _alter(cat, RenameColumn("s", "name"))
    assert t.schema.options["file-index.bitmap.columns"] == "c,name"
    assert t.schema.options["file-index.bitmap.name.version"] == "1"
    assert not rewrite_file_index(t, dry_run=True).changed
    got = TableRead(t, predicate=parse_predicate("name = 's3_1'", list(t.schema.fields))).to_arrow()
    plain = TableRead(t).to_arrow()
    assert got.num_rows == plain.filter(pa.compute.field("name") == "s3_1").num_rows > 0
    # refused: dropping an indexed column while the option still names it
    with pytest.raises(InvalidInput, match="does not exist"):
        cat.alter_table(ID, [DropColumn("name")])
    t = _alter(cat, RemoveOption("file-index.bitmap.name.version"), SetOption("file-index.bitmap.columns", "c"),
               DropColumn("name"))
    assert any("no longer exists" in w for w in file_index_warnings(t))
    rows = file_index_rows(t).rows
    assert {r["current_column"] for r in rows if r["column_name"] == "s"} == {None}
    res = rewrite_file_index(t)
    assert res.indexes_dropped == 2 and res.indexes_built == 0
    t = cat.get_table(ID)
    assert file_index_warnings(t) == []
    assert {(r["column_name"], r["index_type"]) for r in file_index_rows(t).rows} == {("c", "bitmap")}


def test_read_prunes_with_indexes_and_explains_per_kind(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = _table(cat, tmp_path, files=6, rows=300)
    t = _alter(cat, SetOption("file-index.bloom-filter.columns", "s"), SetOption("file-index.bloom-filter.s.items", "200"),
               SetOption("file-index.bitmap.columns", "c"))
    rewrite_file_index(t)
    t = cat.get_table(ID)
    tr = TableRead(t, predicate=parse_predicate("c = 31", list(t.schema.fields)))
    explain = {r["step"]: r["files"] for r in tr.explain().rows}
    assert explain["pruned by bitmap index"] == 5 and explain["remaining"] == 1
    assert tr.to_arrow().num_rows == TableRead(t).to_arrow().filter(pa.compute.field("c") == 31).num_rows > 0
    tr = TableRead(t, predicate=parse_predicate("s = 's7_2'", list(t.schema.fields)))
    explain = {r["step"]: r["files"] for r in tr.explain().rows}
    assert explain["pruned by bloom-filter index"] >= 4
    t2 = _alter(cat, SetOption("file-index.read.enabled", "false"))
    tr = TableRead(t2, predicate=parse_predicate("c = 31", list(t2.schema.fields)))
    assert tr.plan().pruned_by_index == {}
    rows = file_index_rows(t).rows
    assert {r["distinct_values"] for r in rows if r["index_type"] == "bitmap"} == {3}
    assert {r["bloom_hash_functions"] for r in rows if r["index_type"] == "bloom-filter"} == {3}


def test_failed_commit_removes_new_index_files(cat: FileSystemCatalog, tmp_path: Path, monkeypatch: Any) -> None:
    t = _table(cat, tmp_path, files=2)
    t = _alter(cat, SetOption("file-index.bloom-filter.columns", "s"))

    def boom(*a: Any, **k: Any) -> None:
        raise RuntimeError("commit failed")

    from paimon_cli.core.operation import commit

    monkeypatch.setattr(commit.FileStoreCommit, "commit", boom)
    with pytest.raises(RuntimeError):
        rewrite_file_index(t)
    assert not list(Path(t.path).rglob("*.index"))
    assert cat.get_table(ID).snapshot_manager.latest_snapshot_id() == 2


def test_commit_of_unknown_outcome_keeps_new_index_files(
    cat: FileSystemCatalog, tmp_path: Path, monkeypatch: Any, snapshot_publish_fault: Any
) -> None:
    """The snapshot landed but the commit could not learn it: the index files it references
    must survive the clean-up."""
    from paimon_cli.core.errors import OutcomeUnknown

    t = _table(cat, tmp_path, files=2, **{"commit.min-retry-wait": "1 ms", "commit.max-retry-wait": "2 ms"})
    t = _alter(cat, SetOption("file-index.bloom-filter.columns", "s"))
    snapshot_publish_fault(lands=True, error=TimeoutError("no answer"), failing_reads=-1)
    with pytest.raises(OutcomeUnknown, match="snapshot 3"):
        rewrite_file_index(t)
    monkeypatch.undo()
    t = cat.get_table(ID)
    assert t.snapshot_manager.latest_snapshot_id() == 3
    referenced = [x for e in _live(t) for x in index_file_names(e.file.extra_files)]
    assert referenced and all((Path(t.path) / "dt=d0" / "bucket-0" / x).exists()
                              or (Path(t.path) / "dt=d1" / "bucket-0" / x).exists() for x in referenced)
    assert TableRead(t).to_arrow().num_rows == 1000


@pytest.mark.parametrize("options, message", [
    ({"file-index.zorder.columns": "c"}, "unknown index type"),
    ({"file-index.bloom-filter.columns": "c", "file-index.bloom-filter.c.fpp": "1.5"}, "fpp must be in (0, 1)"),
    ({"file-index.bloom-filter.columns": "c", "file-index.bloom-filter.c.fpp": "0"}, "fpp must be in (0, 1)"),
    ({"file-index.bitmap.columns": "m"}, "does not support"),
    ({"file-index.bloom-filter.columns": "flag"}, "does not support"),
    ({"file-index.bsi.columns": "s"}, "does not support"),
    ({"file-index.bitmap.columns": "nope"}, "does not exist"),
    ({"file-index.bitmap.columns": "c", "file-index.bitmap.c.version": "3"}, "version must be 1 or 2"),
    ({"file-index.bitmap.x.version": "1"}, "is not declared"),
])
def test_bad_options_exit_4_before_anything_is_written(tmp_path: Path, options: dict[str, str], message: str) -> None:
    runner = CliRunner()
    wh = str(tmp_path / "wh")
    args = ["create", "db.bad", "-w", wh, "--schema", "c INT, s STRING, m MAP<STRING, INT>, flag BOOLEAN"]
    for k, v in options.items():
        args += ["--option", f"{k}={v}"]
    r = runner.invoke(app, args)
    assert r.exit_code == 4, r.output
    assert message in r.output
    assert not os.path.exists(os.path.join(wh, "db.db", "bad"))
    # the same through alter on an existing table: nothing changes
    assert runner.invoke(app, ["create", "db.ok", "-w", wh, "--schema", "c INT, s STRING, m MAP<STRING, INT>, flag BOOLEAN"]).exit_code == 0
    alter = ["alter", "db.ok", "-w", wh]
    for k, v in options.items():
        alter += ["--set", f"{k}={v}"]
    r = runner.invoke(app, alter)
    assert r.exit_code == 4 and message in r.output
    assert FileSystemCatalog(wh).get_table("db.ok").schema.id == 0


def test_cli_rewrite_file_index(tmp_path: Path, cat: FileSystemCatalog) -> None:
    _table(cat, tmp_path, files=2)
    wh = str(tmp_path / "wh")
    runner = CliRunner()
    assert runner.invoke(app, ["alter", ID, "-w", wh, "--set", "file-index.bitmap.columns=c"]).exit_code == 0
    r = runner.invoke(app, ["rewrite-file-index", ID, "-w", wh, "--dry-run", "-o", "json"])
    assert r.exit_code == 0, r.output
    assert '"action": "build"' in r.stdout and r.stdout.count('"file_name"') == 2
    r = runner.invoke(app, ["rewrite-file-index", ID, "-w", wh, "--partition", "dt=d0", "-o", "json"])
    assert r.exit_code == 0 and '"files_changed": 1' in r.stdout
    r = runner.invoke(app, ["rewrite-file-index", ID, "-w", wh, "-o", "json"])
    assert r.exit_code == 0 and '"files_changed": 1' in r.stdout and '"files_unchanged": 1' in r.stdout
    r = runner.invoke(app, ["rewrite-file-index", ID, "-w", wh, "--where", "c = 1"])
    assert r.exit_code == 4


def test_rolling_writer_hook_builds_indexes(cat: FileSystemCatalog, tmp_path: Path) -> None:
    """The factory plugged into RollingFileWriter (write / compact) indexes every file it rolls."""
    from paimon_cli.core.data import binary_row
    from paimon_cli.core.mergetree.commit_message import CommitMessage
    from paimon_cli.core.mergetree.file_writer import APPEND, RollingFileWriter
    from paimon_cli.core.operation.commit import FileStoreCommit

    cat.create_table(ID, Schema.of(parse_columns("id BIGINT, c INT"), options={
        "bucket": "-1", "file-index.bitmap.columns": "c", "file-index.bloom-filter.columns": "id",
        "file-index.bloom-filter.id.items": "50", "target-file-size": "1 kb"}))
    t = cat.get_table(ID)
    factory = index_builder_factory(t.file_io, t.schema)
    w = RollingFileWriter(t, binary_row.EMPTY_ROW, 0, kind=APPEND, level=0, file_source=0,
                          index_builder_factory=factory)
    for k in range(5):
        w.write(pa.table({"id": pa.array(range(k * 400, k * 400 + 400), pa.int64()),
                          "c": pa.array([k] * 400, pa.int32())}))
    metas = w.close()
    assert len(metas) > 1
    FileStoreCommit(t).commit([CommitMessage(binary_row.EMPTY_ROW, 0, 0, metas)])
    t = cat.get_table(ID)
    assert not rewrite_file_index(t, dry_run=True).changed  # every rolled file already right
    assert file_index_warnings(t) == []
    tr = TableRead(t, predicate=parse_predicate("c = 3", list(t.schema.fields)))
    assert tr.to_arrow().num_rows == 400 and tr.plan().remaining.files < len(metas)


def test_compaction_builds_configured_indexes(cat: FileSystemCatalog, tmp_path: Path) -> None:
    """Files written by compaction (append and primary-key) carry the configured indexes."""
    from paimon_cli.core.compact.job import compact_table

    for name, pk, opts in (("a", (), {"bucket": "-1"}), ("p", ("id",), {"bucket": "2"})):
        ident = f"db.{name}"
        cat.create_table(ident, Schema.of(parse_columns("id BIGINT, s STRING, c INT"), primary_keys=pk, options=opts))
        t = cat.get_table(ident)
        for k in range(3):
            p = tmp_path / f"{name}{k}.parquet"
            pq.write_table(pa.table({"id": pa.array(range(k * 1000, k * 1000 + 3000), pa.int64()),
                                     "s": [f"x{i % 100}" for i in range(3000)],
                                     "c": pa.array([i % 7 for i in range(3000)], pa.int32())}), p)
            write_table(t, [str(p)])
        cat.alter_table(ident, [SetOption("file-index.bitmap.columns", "c"), SetOption("compaction.min.file-num", "2")])
        t = cat.get_table(ident)
        assert file_index_warnings(t)  # files written before the option lack the index
        compact_table(t, full=True)
        t = cat.get_table(ident)
        assert file_index_warnings(t) == [] and not rewrite_file_index(t, dry_run=True).changed
        assert {r["index_type"] for r in file_index_rows(t).rows} == {"bitmap"}


def test_dropped_and_re_added_column_never_uses_the_old_index(cat: FileSystemCatalog, tmp_path: Path) -> None:
    """apache/paimon#10122's failure mode: a column dropped and added again under the same name
    is a different field; the old files' index on the old column must not prune for it."""
    from paimon_cli.core.data.types import IntType
    from paimon_cli.core.schema.schema_change import AddColumn

    t = _table(cat, tmp_path, files=2)
    t = _alter(cat, SetOption("file-index.bitmap.columns", "c"))
    rewrite_file_index(t)
    t = _alter(cat, SetOption("file-index.bitmap.columns", "s"), DropColumn("c"))
    t = _alter(cat, AddColumn("c", IntType()), SetOption("file-index.bitmap.columns", "s,c"))
    p = tmp_path / "new.parquet"
    pq.write_table(pa.table({"id": pa.array([9_000_001], pa.int64()), "s": ["new"], "c": pa.array([1], pa.int32()),
                             "dt": ["d0"]}), p)
    write_table(t, [str(p)])
    t = cat.get_table(ID)
    # old files hold c=1 under the OLD field id; the new column is NULL there
    got = TableRead(t, predicate=parse_predicate("c IS NULL", list(t.schema.fields))).to_arrow()
    assert got.num_rows == 1000
    got = TableRead(t, predicate=parse_predicate("c = 1", list(t.schema.fields))).to_arrow()
    assert got.column("id").to_pylist() == [9_000_001]
    assert any("'c'" in w and "no longer exists" in w for w in file_index_warnings(t))
    res = rewrite_file_index(t)
    kinds = {(p.entry.file.file_name, x) for p in res.changed for x in p.drop}
    assert {x for _, x in kinds} == {("c", "bitmap")}  # the old-field index is dropped ...
    t = cat.get_table(ID)
    assert file_index_warnings(t) == []
    for r in file_index_rows(t).rows:  # ... and no index on the new c is claimed for the old files
        assert r["current_column"] in ("s", "c")
        if r["column_name"] == "c":
            assert r["record_count"] == 1
def test_write_builds_configured_indexes(cat: FileSystemCatalog, tmp_path: Path) -> None:
    """`write` indexes every data file it creates (append and primary-key), embedded or in a file."""
    for name, pk, opts in (("a", (), {"bucket": "-1", "file-index.in-manifest-threshold": "64 kb"}),
                           ("p", ("id",), {"bucket": "2"})):
        ident = f"db.{name}"
        cat.create_table(ident, Schema.of(parse_columns("id BIGINT, s STRING, c INT"), primary_keys=pk, options={
            **opts, "file-index.bloom-filter.columns": "s", "file-index.bloom-filter.s.items": "500",
            "file-index.bitmap.columns": "c"}))
        p = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"id": pa.array(range(3000), pa.int64()), "s": [f"x{i % 100}" for i in range(3000)],
                                 "c": pa.array([i % 7 for i in range(3000)], pa.int32())}), p)
        write_table(cat.get_table(ident), [str(p)])
        t = cat.get_table(ident)
        assert file_index_warnings(t) == [] and not rewrite_file_index(t, dry_run=True).changed
        assert {(r["column_name"], r["index_type"]) for r in file_index_rows(t).rows} == {
            ("s", "bloom-filter"), ("c", "bitmap")}
        if name == "a":
            assert all(e.file.embedded_index is not None for e in _live(t))
        else:
            assert all(index_file_names(e.file.extra_files) for e in _live(t))


@pytest.mark.parametrize("bucket", [-1, 1])
def test_rewrite_keeps_live_deletion_vectors(cat: FileSystemCatalog, bucket: int) -> None:
    """The index rewrite replaces a file's meta under the same name, so its deletion vector
    still applies: the commit is not a conflict and deleted rows stay deleted."""
    from tests.core.test_compact_append import add_dvs, dv_index_names, live, make, read_all, rows_of, write

    t = make(cat, "dv", bucket, part=(), **{"deletion-vectors.enabled": "true"})
    expected = []
    for k in range(2):
        expected += rows_of(k, 10, ("x",))
        write(t, rows_of(k, 10, ("x",)))
    files = sorted(live(t), key=lambda e: e.file.min_sequence_number)
    add_dvs(t, {files[0].file.file_name: [0, 3]})
    gone = {expected[0]["id"], expected[3]["id"]}
    want = sorted([r for r in expected if r["id"] not in gone], key=lambda r: (r["id"], r["dt"]))
    index_before = dv_index_names(t)
    cat.alter_table(t.identifier, [SetOption("file-index.bloom-filter.columns", "id")])
    t = cat.get_table(t.identifier)
    res = rewrite_file_index(t)
    assert res.snapshot_id is not None and len(res.changed) == 2
    t = cat.get_table(t.identifier)
    assert dv_index_names(t) == index_before  # the vectors stay where they were
    assert read_all(t) == want


def _notes(t: Any, where: str) -> dict[str, str | None]:
    rows = TableRead(t, predicate=parse_predicate(where, list(t.schema.fields))).explain().rows
    return {r["step"].removeprefix("pruned by ").removesuffix(" index"): r["note"] for r in rows}


def test_explain_says_why_an_index_pruned_nothing(cat: FileSystemCatalog, tmp_path: Path) -> None:
    """Issue 27 item 17: --explain showed "pruned by bloom-filter index 0" without a word on why.
    (s25_9 is inside every file's min/max, so stats keep the files and the index step sees them.)"""
    t = _table(cat, tmp_path, files=3, rows=100)
    t = _alter(cat, SetOption("file-index.bloom-filter.columns", "s,c"), SetOption("file-index.bloom-filter.s.items", "200"),
               SetOption("file-index.bloom-filter.c.items", "200"))
    stale = _notes(t, "s = 's25_9'")["bloom-filter"]  # configured after the files were written
    assert stale is not None and stale.startswith("none of the 3 file(s) holds a bloom-filter index on s")
    assert "3 without any file index" in stale and "rewrite-file-index" in stale
    rewrite_file_index(t)
    t = cat.get_table(ID)
    pruned = _notes(t, "s = 's25_9'")
    assert pruned["bloom-filter"] is None  # it pruned: nothing to explain
    assert pruned["bitmap"] == "no bitmap index on s" and pruned["file indexes combined"] is None
    assert _notes(t, "c = 0")["bloom-filter"] == "3 file(s) checked: their bloom-filter index on c allows a match in each"
    assert _notes(t, "id = 5")["bloom-filter"] == "no bloom-filter index on id (file-index.bloom-filter.columns = c,s)"
    assert _notes(t, "s > 'a'")["bloom-filter"] == ("the --where has no condition a bloom-filter index decides "
                                                    "(= and IN only)")
    off = _alter(cat, SetOption("file-index.read.enabled", "false"))
    assert _notes(off, "s = 's25_9'")["bloom-filter"] == "file-index.read.enabled = false"


@pytest.mark.parametrize("options, merged", [({}, True), ({"deletion-vectors.enabled": "true"}, False)])
def test_explain_names_merge_on_read_on_a_primary_key_table(tmp_path: Path, options: dict[str, str],
                                                            merged: bool) -> None:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_table("db.pk", Schema.of(parse_columns("id BIGINT NOT NULL, status STRING"), primary_keys=["id"],
                                        options={"bucket": "1", "file-index.bloom-filter.columns": "status",
                                                 "file-index.bloom-filter.status.items": "100", **options}))
    p = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": pa.array(range(50), pa.int64()), "status": ["a", "z"] * 25}), p)
    write_table(cat.get_table("db.pk"), [str(p)])
    note = _notes(cat.get_table("db.pk"), "status = 'nope'")["bloom-filter"]
    if merged:  # no deletion vectors: no file may be skipped on its own index
        assert note is not None and note.startswith("merge-on-read: a primary-key row may be replaced")
    else:  # the write compacted level 0 up: the level-1 file is checked and pruned
        assert note is None


def test_a_note_when_index_files_outweigh_their_data_files(tmp_path: Path) -> None:
    """Issue 27 item 17: Java's default bloom filter (1M items) made a 585 KiB .index beside
    each small data file without a word."""
    wh = str(tmp_path / "wh")
    runner = CliRunner()

    def run(*args: str) -> Any:
        res = runner.invoke(app, [*args, "-w", wh])
        assert res.exit_code == 0, res.output
        return res

    run("create", "db.t", "--schema", "id BIGINT, s STRING", "--option", "bucket=-1",
        "--option", "file-index.bloom-filter.columns=s", "--option", "compaction.min.file-num=2")
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": pa.array(range(1000), pa.int64()), "s": [f"v{i}" for i in range(1000)]}), src)
    written = run("write", "db.t", str(src)).stderr
    assert "note: file index: 1 of 1 .index file(s) written are larger than their data file (up to 585.1 KiB" in written
    assert ("the bloom filter on 's' is sized for 1,000,000 items at fpp 0.1 (585.0 KiB per file, however few rows it "
            "holds; these files hold up to 1,000 rows): set file-index.bloom-filter.s.items") in written
    run("write", "db.t", str(src))
    assert "note: file index: 1 of 1 .index file(s)" in run("compact", "db.t").stderr
    run("alter", "db.t", "--set", "file-index.bloom-filter.s.fpp=0.05")
    assert "note: file index: 1 of 1 .index file(s)" in run("rewrite-file-index", "db.t").stderr
    # sized for the files: no note (the index is embedded or smaller than the file)
    run("alter", "db.t", "--set", "file-index.bloom-filter.s.items=1000")
    assert "file index:" not in run("write", "db.t", str(src)).stderr
    assert "file index:" not in run("rewrite-file-index", "db.t").stderr


def test_explain_on_a_terminal_gives_the_notes_as_lines(tmp_path: Path) -> None:
    """The terminal table shows the counts only; why each index pruned nothing follows on stderr."""
    from tests.cli.test_terminal_output import on_tty

    wh = str(tmp_path / "wh")
    cat = FileSystemCatalog(wh)
    cat.create_table("db.pk", Schema.of(parse_columns("id BIGINT NOT NULL, status STRING"), primary_keys=["id"],
                                        options={"bucket": "1", "file-index.bloom-filter.columns": "status"}))
    p = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": pa.array(range(50), pa.int64()), "status": ["a", "z"] * 25}), p)
    write_table(cat.get_table("db.pk"), [str(p)])
    out, err, code = on_tty("read", "db.pk", "--where", "status = 'nope'", "--explain", "-w", wh)
    assert code == 0, err
    assert "pruned by bloom-filter index" in out and "merge-on-read" not in out
    assert "pruned by bloom-filter index: merge-on-read: a primary-key row may be replaced" in err
