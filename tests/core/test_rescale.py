"""core/compact/rescale.py: a fixed-bucket partition keeps its bucket number until it is rescaled.

The refusal: after ``alter --set bucket=N`` the writer would hash keys into the new layout
while the old rows stay in the old one (two rows per key). Java refuses such a write ("Try
to write partition ... with a new bucket num N, but the previous bucket num is M"); so do
``write`` and ``compact`` here, with nothing changed on disk, and the commit refuses the same
when a concurrent rescale re-laid out a partition after the writer restored its buckets.

The way out, ``rescale``: after it the merged rows are exactly those before (one row per
key, deletes stay deleted, level-0 rows of DV tables not lost), every live file of a
rewritten partition carries the new ``_TOTAL_BUCKETS`` and sits in the bucket its keys hash
to, writes of existing keys then update instead of duplicating, and a dry run / failed /
conflicting run leaves the table byte for byte as it was.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.job import compact_table
from paimon_cli.core.compact.plan import plan_compaction
from paimon_cli.core.compact.rescale import plan_rescale, rescale
from paimon_cli.core.compact.write_job import write_table, write_table_result
from paimon_cli.core.data import binary_row
from paimon_cli.core.errors import CommitConflict, InvalidInput
from paimon_cli.core.format.arrow_schema import arrow_schema, key_value_file_fields
from paimon_cli.core.format.data_file import read_data_file
from paimon_cli.core.index.bucket import bucket_hashes, bucket_ids, bucket_key_fields
from paimon_cli.core.io import paths
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.schema_change import SetOption
from tests.core.test_write import make


@pytest.fixture
def cat(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


class Inputs:
    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path
        self.n = 0

    def __call__(self, text: str) -> list[str]:
        self.n += 1
        p = self.dir / f"in{self.n}.csv"
        p.write_text(text)
        return [str(p)]


@pytest.fixture
def csv(tmp_path: Path) -> Inputs:
    return Inputs(tmp_path)


def tree(root: str) -> dict[str, str]:
    out = {}
    for p in sorted(Path(root).rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "<dir>"
    return out


def rows(table: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in TableRead(table).to_arrow().to_pylist())


def live(table: Any) -> list[Any]:
    return FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())


def check_layout(table: Any, partition_buckets: dict[bytes, int]) -> None:
    """Every live file of each partition carries its expected total buckets and holds only
    rows whose bucket key hashes to the file's bucket."""
    schema = table.schema
    fields = key_value_file_fields(schema) if schema.primary_keys else list(schema.fields)
    for e in live(table):
        want = partition_buckets.get(e.partition)
        if want is None:
            continue
        assert e.total_buckets == want, (e.partition, e.total_buckets, want)
        values = binary_row.deserialize(e.partition, schema.partition_types) if schema.partition_keys else []
        path = paths.data_file_path(table.path, paths.partition_path_for(schema, values), e.bucket, e.file.file_name)
        data = read_data_file(table.file_io, path, fields)
        got = set(bucket_ids(bucket_hashes(data, bucket_key_fields(schema)), want).tolist())
        assert got <= {e.bucket}, (e.bucket, got)


def part(table: Any, value: str) -> bytes:
    return binary_row.serialize([value], table.schema.partition_types)


def rebucket(cat: FileSystemCatalog, name: str, n: int) -> Any:
    cat.alter_table(f"db.{name}", [SetOption("bucket", str(n))])
    return cat.get_table(f"db.{name}")


# ---------------------------------------------------------------------------------------
# The refusal of write / compact / commit
# ---------------------------------------------------------------------------------------


def test_write_into_a_partition_of_another_bucket_number_is_refused(cat: FileSystemCatalog, csv: Inputs) -> None:
    t = make(cat, "p", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL", ("id", "dt"), ("dt",), bucket="2")
    write_table(t, csv("id,v,dt\n1,a,x\n2,b,x\n3,c,x\n4,d,y\n"))
    t = rebucket(cat, "p", 5)
    before = tree(t.path)
    with pytest.raises(InvalidInput) as ei:
        write_table(t, csv("id,v,dt\n1,A,x\n2,B,x\n3,C,x\n"))
    msg = str(ei.value)
    assert "partition dt=x" in msg and "2 buckets" in msg and "bucket option is 5" in msg
    assert "paimon-cli rescale db.p --partition dt=x" in msg
    assert tree(t.path) == before  # nothing written, nothing left behind
    assert rows(t) == [(1, "a", "x"), (2, "b", "x"), (3, "c", "x"), (4, "d", "y")]
    # a partition without files takes the new layout; an overwrite replaces the old one
    write_table(t, csv("id,v,dt\n7,n,z\n"))
    snap = write_table(t, csv("id,v,dt\n1,A,x\n"), overwrite=True)
    assert snap is not None
    by_part: dict[bytes, set[int]] = {}
    for e in FileStoreScan(t).plan(snap):
        by_part.setdefault(e.partition, set()).add(e.total_buckets)
    assert by_part == {part(t, "x"): {5}, part(t, "y"): {2}, part(t, "z"): {5}}
    assert rows(t) == [(1, "A", "x"), (4, "d", "y"), (7, "n", "z")]


def test_unpartitioned_and_append_tables_are_refused_too(cat: FileSystemCatalog, csv: Inputs) -> None:
    t = make(cat, "u", "id BIGINT NOT NULL, v STRING", ("id",), bucket="2")
    write_table(t, csv("id,v\n1,a\n2,b\n3,c\n"))
    t = rebucket(cat, "u", 5)
    before = tree(t.path)
    with pytest.raises(InvalidInput, match=r"db\.u holds files written with 2 buckets.*paimon-cli rescale db\.u$"):
        write_table(t, csv("id,v\n3,C\n"))
    assert tree(t.path) == before

    a = make(cat, "a", "id BIGINT, v STRING", bucket="2", **{"bucket-key": "id"})
    write_table(a, csv("id,v\n1,a\n2,b\n"))
    a = rebucket(cat, "a", 3)
    before = tree(a.path)
    with pytest.raises(InvalidInput, match="rescale db.a"):
        write_table(a, csv("id,v\n3,c\n"))
    assert tree(a.path) == before


def test_dynamic_and_unaware_tables_are_not_affected(cat: FileSystemCatalog, csv: Inputs) -> None:
    d = make(cat, "d", "id BIGINT NOT NULL, v STRING", ("id",), bucket="-1")
    write_table(d, csv("id,v\n1,a\n2,b\n"))
    write_table(d, csv("id,v\n1,A\n"))
    assert rows(d) == [(1, "A"), (2, "b")]
    a = make(cat, "a", "id BIGINT, v STRING")
    write_table(a, csv("id,v\n1,a\n"))
    write_table(a, csv("id,v\n1,a\n"))
    assert rows(a) == [(1, "a"), (1, "a")]


def test_compact_is_refused(cat: FileSystemCatalog, csv: Inputs) -> None:
    t = make(cat, "p", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL", ("id", "dt"), ("dt",), bucket="2")
    for i in range(3):
        write_table(t, csv(f"id,v,dt\n1,a{i},x\n2,b{i},y\n"), options={"write-only": "true"})
    t = rebucket(cat, "p", 4)
    before = tree(t.path)
    with pytest.raises(InvalidInput, match=r"compact: partition dt=x .*2 buckets.*rescale db\.p --partition dt=x"):
        compact_table(t, full=True)
    with pytest.raises(InvalidInput, match="compact: partition dt=y"):
        plan_compaction(t, partitions=["dt=y"])
    assert tree(t.path) == before


def test_commit_refuses_an_append_into_a_partition_rescaled_meanwhile(cat: FileSystemCatalog, csv: Inputs) -> None:
    t = make(cat, "p", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL", ("id", "dt"), ("dt",), bucket="2")
    write_table(t, csv("id,v,dt\n1,a,x\n2,b,x\n3,c,x\n"))
    # a writer restores its buckets (2) ...
    tw = TableWrite(t)
    tw.write_arrow(pa.Table.from_pylist([{"id": 1, "v": "A", "dt": "x"}], schema=arrow_schema(list(t.schema.fields))))
    messages = tw.prepare_commit()
    assert tw.restored_snapshot_id == 1
    # ... while the partition is rewritten with 5 buckets
    t5 = rebucket(cat, "p", 5)
    write_table(t5, csv("id,v,dt\n1,a,x\n2,b,x\n3,c,x\n"), overwrite=True)
    before = tree(t.path)
    with pytest.raises(CommitConflict, match="partition dt=x changed from 5 to 2"):
        FileStoreCommit(t).commit(messages, "APPEND", restored_snapshot_id=tw.restored_snapshot_id)
    ours = {str(Path(p).relative_to(t.path)) for p in tw.written}
    assert ours and ours <= set(before)
    tw.abort()
    assert tree(t.path) == {k: v for k, v in before.items() if k not in ours}  # no snapshot, no manifest
    assert rows(t5) == [(1, "a", "x"), (2, "b", "x"), (3, "c", "x")]
    # the same write commits fine when nothing re-laid the partition out since it restored
    r = write_table_result(t5, csv("id,v,dt\n1,Z,x\n"))
    assert r.snapshot is not None
    assert rows(t5) == [(1, "Z", "x"), (2, "b", "x"), (3, "c", "x")]


# ---------------------------------------------------------------------------------------
# rescale
# ---------------------------------------------------------------------------------------


def pk_table(cat: FileSystemCatalog, csv: Inputs, name: str = "p", **options: str) -> Any:
    t = make(cat, name, "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL", ("id", "dt"), ("dt",),
             bucket="2", **options)
    write_table(t, csv("id,v,dt\n" + "".join(f"{i},a{i},{'x' if i % 3 else 'y'}\n" for i in range(40))))
    write_table(t, csv("id,v,dt\n" + "".join(f"{i},b{i},{'x' if i % 3 else 'y'}\n" for i in range(0, 40, 2))))
    write_table(t, csv("id,v,dt,op\n1,,x,-D\n2,,x,-D\n3,,y,-D\n"), row_kind_column="op")
    return t


def test_pk_partitioned_rescale_keeps_rows_and_takes_new_writes(cat: FileSystemCatalog, csv: Inputs) -> None:
    t = pk_table(cat, csv)
    expected = rows(t)
    assert len(expected) == 37
    res = rescale(t, bucket_num=5)
    t = cat.get_table("db.p")
    assert t.schema.bucket == 5 and res.schema_id == t.schema.id == 1
    snap = t.snapshot_manager.latest_snapshot()
    assert (res.snapshot_id, res.commit_kind, snap.commit_kind, snap.schema_id) == (snap.id, "OVERWRITE", "OVERWRITE", 1)
    assert snap.id == 4  # ONE snapshot
    assert rows(t) == expected
    check_layout(t, {part(t, "x"): 5, part(t, "y"): 5})
    # each new bucket is one sorted run on the top level, sequence numbers fresh
    levels = {(e.partition, e.bucket): set() for e in live(t)}
    for e in live(t):
        levels[(e.partition, e.bucket)].add(e.file.level)
        assert e.file.min_sequence_number >= 0 and e.file.delete_row_count == 0
    assert all(v == {t.options.num_levels - 1} for v in levels.values())
    assert res.rows_out == 37 and res.files_out == len(live(t))
    # the table keeps taking writes: existing keys update, no duplicates
    write_table(t, csv("id,v,dt\n0,c0,y\n4,c4,x\n1,c1,x\n"))
    got = {(r[0], r[2]): r[1] for r in rows(t)}
    assert len(got) == len(rows(t)) == 38
    assert got[(0, "y")] == "c0" and got[(4, "x")] == "c4" and got[(1, "x")] == "c1"
    assert rescale(t).snapshot_id is None  # nothing left to do


def test_partition_subset_and_option_already_set(cat: FileSystemCatalog, csv: Inputs) -> None:
    t = pk_table(cat, csv)
    expected = rows(t)
    cat.alter_table("db.p", [SetOption("bucket", "3")])
    t = cat.get_table("db.p")
    plan = plan_rescale(t, ["dt=y"])
    assert [(p.label, p.current_buckets) for p in plan.partitions] == [("dt=y", 2)]
    assert plan.new_buckets == 3 and not plan.sets_option
    res = rescale(t, ["dt=y"])
    assert res.schema_id is None and cat.get_table("db.p").schema.id == 1
    assert rows(t) == expected
    check_layout(t, {part(t, "x"): 2, part(t, "y"): 3})
    with pytest.raises(InvalidInput, match="rescale db.p --partition dt=x"):
        write_table(t, csv("id,v,dt\n4,z,x\n"))
    write_table(t, csv("id,v,dt\n0,z,y\n"))
    res = rescale(t)  # the remaining partition
    assert [p.label for p in res.plan.partitions] == ["dt=x"] and res.plan.unchanged == 1
    check_layout(t, {part(t, "x"): 3, part(t, "y"): 3})
    assert {r[0]: r[1] for r in rows(t) if r[2] == "y"}[0] == "z"


def test_dry_run_changes_nothing(cat: FileSystemCatalog, csv: Inputs) -> None:
    t = pk_table(cat, csv)
    before = tree(t.path)
    res = rescale(t, bucket_num=4, dry_run=True)
    assert tree(t.path) == before
    assert res.dry_run and res.snapshot_id is None and res.schema_id is None
    p = res.plan
    assert p.sets_option and (p.bucket_option, p.new_buckets) == (2, 4)
    by_label = {x.label: x for x in p.partitions}
    assert set(by_label) == {"dt=x", "dt=y"}
    entries = live(t)
    for label, value in (("dt=x", "x"), ("dt=y", "y")):
        mine = [e for e in entries if e.partition == part(t, value)]
        assert by_label[label].files == len(mine)
        assert by_label[label].rows == sum(e.file.row_count for e in mine)
        assert by_label[label].bytes == sum(e.file.file_size for e in mine)
    assert [r["partition"] for r in p.rows().rows] == ["dt=x", "dt=y"]


def test_unpartitioned_and_append_tables(cat: FileSystemCatalog, csv: Inputs) -> None:
    u = make(cat, "u", "id BIGINT NOT NULL, v STRING", ("id",), bucket="3")
    write_table(u, csv("id,v\n" + "".join(f"{i},a{i}\n" for i in range(30))))
    write_table(u, csv("id,v\n" + "".join(f"{i},b{i}\n" for i in range(0, 30, 3))))
    expected = rows(u)
    res = rescale(u, bucket_num=2)
    u = cat.get_table("db.u")
    assert rows(u) == expected and res.commit_kind == "OVERWRITE"
    check_layout(u, {binary_row.EMPTY_ROW: 2})

    a = make(cat, "a", "id BIGINT, v STRING, dt STRING", part=("dt",), bucket="2", **{"bucket-key": "id"})
    data = "".join(f"{i % 7},a{i},{'x' if i % 2 else 'y'}\n" for i in range(50))
    write_table(a, csv("id,v,dt\n" + data))
    write_table(a, csv("id,v,dt\n" + data))  # duplicates are rows of an append table
    expected = rows(a)
    assert len(expected) == 100
    res = rescale(a, bucket_num=3)
    a = cat.get_table("db.a")
    assert rows(a) == expected and res.rows_out == 100
    check_layout(a, {part(a, "x"): 3, part(a, "y"): 3})
    write_table(a, csv("id,v,dt\n1,n,x\n"))
    assert len(rows(a)) == 101


def test_deletion_vector_and_first_row_tables_keep_level0_rows(cat: FileSystemCatalog, csv: Inputs) -> None:
    for name, options in (("dv", {"deletion-vectors.enabled": "true"}), ("fr", {"merge-engine": "first-row"})):
        t = make(cat, name, "id BIGINT NOT NULL, v STRING", ("id",), bucket="2", **options)
        write_table(t, csv("id,v\n" + "".join(f"{i},a{i}\n" for i in range(20))))
        write_table(t, csv("id,v\n" + "".join(f"{i},b{i}\n" for i in range(10, 30))))
        # not compacted yet: readers do not see these rows
        write_table(t, csv("id,v\n" + "".join(f"{i},c{i}\n" for i in range(25, 35))), options={"write-only": "true"})
        assert any(e.file.level == 0 for e in live(t))
        hidden = rows(t)
        res = rescale(t, bucket_num=3)
        t = cat.get_table(f"db.{name}")
        got = rows(t)
        assert all(e.file.level > 0 for e in live(t))  # visible in the one OVERWRITE snapshot
        assert len(got) == 35 and res.snapshot_id == t.snapshot_manager.latest_snapshot_id()
        values = dict(got)
        if name == "dv":
            assert (values[5], values[15], values[27]) == ("a5", "b15", "c27")
        else:  # first-row keeps the first
            assert (values[5], values[15], values[27]) == ("a5", "a15", "b27")
        assert len(hidden) == 30  # the level-0 rows were not visible before
        if name == "fr":
            assert set(hidden) <= set(got)
        check_layout(t, {binary_row.EMPTY_ROW: 3})


def test_merge_engines_and_changelog_input(cat: FileSystemCatalog, csv: Inputs) -> None:
    t = make(cat, "agg", "id BIGINT NOT NULL, n BIGINT, s STRING", ("id",), bucket="2",
             **{"merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
                "changelog-producer": "input"})
    write_table(t, csv("id,n,s\n1,1,a\n2,2,b\n3,3,c\n"))
    write_table(t, csv("id,n,s\n1,10,x\n3,30,y\n"))
    expected = rows(t)
    assert expected == [(1, 11, "x"), (2, 2, "b"), (3, 33, "y")]
    before = {str(p) for p in Path(t.path).rglob("changelog-*")}
    rescale(t, bucket_num=3)
    t = cat.get_table("db.agg")
    assert rows(t) == expected
    snap = t.snapshot_manager.latest_snapshot()
    assert snap.changelog_manifest_list is None  # an overwrite commits no changelog
    assert {str(p) for p in Path(t.path).rglob("changelog-*")} == before  # and writes none
    write_table(t, csv("id,n,s\n1,100,z\n"))
    assert rows(t)[0] == (1, 111, "z")

    lk = make(cat, "lk", "id BIGINT NOT NULL, s STRING", ("id",), bucket="2", **{"changelog-producer": "lookup"})
    write_table(lk, csv("id,s\n1,a\n2,b\n3,c\n"))
    write_table(lk, csv("id,s\n1,x\n4,d\n"), options={"write-only": "true"})
    expected = rows(lk)
    before = {str(p) for p in Path(lk.path).rglob("changelog-*")}
    rescale(lk, bucket_num=3)
    lk = cat.get_table("db.lk")
    assert rows(lk) == expected == [(1, "x"), (2, "b"), (3, "c"), (4, "d")]
    assert lk.snapshot_manager.latest_snapshot().changelog_manifest_list is None
    assert {str(p) for p in Path(lk.path).rglob("changelog-*")} == before  # the compaction's changelog is gone


def test_small_write_buffer_gives_one_sorted_run_per_bucket(cat: FileSystemCatalog, csv: Inputs) -> None:
    t = make(cat, "big", "id BIGINT NOT NULL, v STRING", ("id",), bucket="2",
             **{"write-buffer-size": "64kb", "target-file-size": "32kb"})
    write_table(t, csv("id,v\n" + "".join(f"{i},{hashlib.sha256(str(i).encode()).hexdigest()}\n"
                                          for i in range(6000))))
    expected = rows(t)
    rescale(t, bucket_num=3)
    t = cat.get_table("db.big")
    assert rows(t) == expected
    top = t.options.num_levels - 1
    assert {e.file.level for e in live(t)} == {top}
    assert len(live(t)) > 3  # rolled files of one run
    check_layout(t, {binary_row.EMPTY_ROW: 3})
    written = {p.name for p in Path(t.path).rglob("data-*")}
    referenced = {e.file.file_name for s in range(1, 4) for e in FileStoreScan(t).plan(t.snapshot_manager.snapshot(s))}
    assert written == referenced  # the level-0 files the compaction replaced are gone


def test_emptied_partition_loses_its_files(cat: FileSystemCatalog, csv: Inputs) -> None:
    t = make(cat, "e", "id BIGINT NOT NULL, dt STRING NOT NULL", ("id", "dt"), ("dt",), bucket="2")
    write_table(t, csv("id,dt\n1,x\n2,x\n3,y\n"))
    write_table(t, csv("id,dt,op\n1,x,-D\n2,x,-D\n"), row_kind_column="op", options={"write-only": "true"})
    assert rows(t) == [(3, "y")]
    res = rescale(t, bucket_num=3)
    t = cat.get_table("db.e")
    assert res.commit_kind == "OVERWRITE" and rows(t) == [(3, "y")]
    assert {e.partition for e in live(t)} == {part(t, "y")}
    check_layout(t, {part(t, "y"): 3})
    write_table(t, csv("id,dt\n1,x\n"))
    assert rows(t) == [(1, "x"), (3, "y")]


def test_concurrent_append_fails_the_commit_and_leaves_nothing(cat: FileSystemCatalog, csv: Inputs) -> None:
    t = pk_table(cat, csv)
    cat.alter_table("db.p", [SetOption("bucket", "3")])
    t = cat.get_table("db.p")
    pre = tree(t.path)
    state: dict[str, Any] = {}

    def concurrent() -> None:
        state["mine"] = set(tree(t.path)) - set(pre)  # what the rescale wrote so far
        assert any(k.endswith(".parquet") for k in state["mine"])
        # another job overwrites one of the partitions meanwhile
        write_table(cat.get_table("db.p"), csv("id,v,dt\n7,n,x\n"), overwrite=True, overwrite_partition={"dt": "x"})
        state["tree"] = tree(t.path)
        state["rows"] = rows(t)

    with pytest.raises(CommitConflict, match="after base snapshot"):
        rescale(t, before_commit=concurrent)
    end = tree(t.path)
    files = {k: v for k, v in end.items() if v != "<dir>"}
    # every file the rescale wrote is gone again, the concurrent job's are all there
    assert files == {k: v for k, v in state["tree"].items() if v != "<dir>" and k not in state["mine"]}
    assert all(any(f.startswith(d + "/") for f in files) for d, v in end.items() if v == "<dir>" and d in state["mine"])
    assert rows(t) == state["rows"]
    assert [r for r in rows(t) if r[2] == "x"] == [(7, "n", "x")]


def test_refusals(cat: FileSystemCatalog, csv: Inputs) -> None:
    d = make(cat, "d", "id BIGINT NOT NULL, v STRING", ("id",), bucket="-1")
    with pytest.raises(InvalidInput, match="bucket = -1 \\(dynamic bucket\\); rescale applies to fixed-bucket"):
        rescale(d, bucket_num=2)
    a = make(cat, "a", "id BIGINT, v STRING")
    with pytest.raises(InvalidInput, match="bucket-unaware append table"):
        rescale(a)
    pp = make(cat, "pp", "id BIGINT NOT NULL, v STRING", ("id",), bucket="-2")
    with pytest.raises(InvalidInput, match="postpone bucket.*--bucket-num"):
        rescale(pp)
    res = rescale(pp, bucket_num=2)  # no snapshot: nothing to rewrite, and the option stays -2
    assert res.snapshot_id is None and cat.get_table("db.pp").schema.bucket == -2
    u = make(cat, "u", "id BIGINT NOT NULL, v STRING", ("id",), bucket="2")
    with pytest.raises(InvalidInput, match="--bucket-num 0"):
        rescale(u, bucket_num=0)
    with pytest.raises(InvalidInput, match="not partitioned"):
        rescale(u, ["dt=x"])
    # a table that has no snapshot: --bucket-num only sets the option
    res = rescale(u, bucket_num=4)
    assert res.snapshot_id is None and cat.get_table("db.u").schema.bucket == 4


def test_partition_of_two_layouts_is_refused(cat: FileSystemCatalog, csv: Inputs) -> None:
    """What the old write left behind (two rows per key) cannot be merged by key: refused."""
    t = make(cat, "m", "id BIGINT NOT NULL, v STRING", ("id",), bucket="2")
    write_table(t, csv("id,v\n1,a\n2,b\n3,c\n"))
    cat.alter_table("db.m", [SetOption("bucket", "5")])
    t5 = cat.get_table("db.m")
    tw = TableWrite(t5, overwrite=True)  # overwrite skips the layout check: commit as a plain append
    tw.write_arrow(pa.Table.from_pylist([{"id": 3, "v": "C"}], schema=arrow_schema(list(t5.schema.fields))))
    FileStoreCommit(t5).commit(tw.prepare_commit(), "APPEND")
    before = tree(t5.path)
    with pytest.raises(InvalidInput, match="files of 2 and 5 buckets"):
        rescale(t5)
    assert tree(t5.path) == before
