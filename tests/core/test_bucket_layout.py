"""A partition keeps the bucket number its files were written with until it is rewritten.

Why: after ``alter --set bucket=N`` the writer hashes keys into N buckets, while the rows
already there sit in the old layout; writing existing keys then gives two rows per key.
Java refuses such a write ("Try to write partition ... with a new bucket num N, but the
previous bucket num is M") and so do ``write`` and ``compact`` here -- with nothing changed
on disk -- until the partition is rescaled. The commit refuses the same when a concurrent
rescale re-laid out a partition after the writer restored its buckets.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog import FileSystemCatalog
from paimon_cli.core.compact.job import compact_table, plan_compaction
from paimon_cli.core.errors import CommitConflict, InvalidInput
from paimon_cli.core.read import TableRead
from paimon_cli.core.schema import Schema, SetOption
from paimon_cli.core.types import parse_columns
from paimon_cli.core.write import TableWrite, write_table, write_table_result


@pytest.fixture
def cat(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


def make(cat: FileSystemCatalog, name: str, columns: str, pk: tuple[str, ...] = (), part: tuple[str, ...] = (),
         **options: str) -> Any:
    cat.create_table(f"db.{name}", Schema.of(parse_columns(columns), partition_keys=part, primary_keys=pk,
                                             options=dict(options)))
    return cat.get_table(f"db.{name}")


def csv(tmp_path: Path, text: str, name: str = "in.csv") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def tree(root: str) -> dict[str, str]:
    """Every file under ``root`` with a hash of its bytes (and every directory)."""
    out = {}
    for p in sorted(Path(root).rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "<dir>"
    return out


def rows(table: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in TableRead(table).to_arrow().to_pylist())


def rebucket(cat: FileSystemCatalog, name: str, n: int) -> Any:
    cat.alter_table(f"db.{name}", [SetOption("bucket", str(n))])
    return cat.get_table(f"db.{name}")


def test_write_into_a_partition_of_another_bucket_number_is_refused(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "p", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL", ("id", "dt"), ("dt",), bucket="2")
    write_table(t, [csv(tmp_path, "id,v,dt\n1,a,x\n2,b,x\n3,c,x\n4,d,y\n")])
    t = rebucket(cat, "p", 5)
    before = tree(t.path)
    with pytest.raises(InvalidInput) as ei:
        write_table(t, [csv(tmp_path, "id,v,dt\n1,A,x\n2,B,x\n3,C,x\n", "b.csv")])
    msg = str(ei.value)
    assert "partition dt=x" in msg and "2 buckets" in msg and "bucket option is 5" in msg
    assert "paimon-cli rescale db.p --partition dt=x" in msg
    assert tree(t.path) == before  # nothing written, nothing left behind
    assert rows(t) == [(1, "a", "x"), (2, "b", "x"), (3, "c", "x"), (4, "d", "y")]
    # a partition without files takes the new layout; an overwrite replaces the old one
    write_table(t, [csv(tmp_path, "id,v,dt\n7,n,z\n", "c.csv")])
    snap = write_table(t, [csv(tmp_path, "id,v,dt\n1,A,x\n", "d.csv")], overwrite=True)
    assert snap is not None
    latest = t.store_scan.plan(snap)
    by_part = {}
    for e in latest:
        by_part.setdefault(e.partition, set()).add(e.total_buckets)
    assert sorted(map(sorted, by_part.values())) == [[2], [5], [5]]
    assert rows(t) == [(1, "A", "x"), (4, "d", "y"), (7, "n", "z")]


def test_unpartitioned_and_append_tables_are_refused_too(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "u", "id BIGINT NOT NULL, v STRING", ("id",), bucket="2")
    write_table(t, [csv(tmp_path, "id,v\n1,a\n2,b\n3,c\n")])
    t = rebucket(cat, "u", 5)
    before = tree(t.path)
    with pytest.raises(InvalidInput, match=r"db\.u holds files written with 2 buckets.*paimon-cli rescale db\.u$"):
        write_table(t, [csv(tmp_path, "id,v\n3,C\n", "b.csv")])
    assert tree(t.path) == before

    a = make(cat, "a", "id BIGINT, v STRING", bucket="2", **{"bucket-key": "id"})
    write_table(a, [csv(tmp_path, "id,v\n1,a\n2,b\n", "c.csv")])
    a = rebucket(cat, "a", 3)
    before = tree(a.path)
    with pytest.raises(InvalidInput, match="rescale db.a"):
        write_table(a, [csv(tmp_path, "id,v\n3,c\n", "d.csv")])
    assert tree(a.path) == before


def test_dynamic_and_unaware_tables_are_not_affected(cat: FileSystemCatalog, tmp_path: Path) -> None:
    d = make(cat, "d", "id BIGINT NOT NULL, v STRING", ("id",), bucket="-1")
    write_table(d, [csv(tmp_path, "id,v\n1,a\n2,b\n")])
    write_table(d, [csv(tmp_path, "id,v\n1,A\n", "b.csv")])
    assert rows(d) == [(1, "A"), (2, "b")]
    a = make(cat, "a", "id BIGINT, v STRING")
    write_table(a, [csv(tmp_path, "id,v\n1,a\n", "c.csv")])
    write_table(a, [csv(tmp_path, "id,v\n1,a\n", "d.csv")])
    assert rows(a) == [(1, "a"), (1, "a")]


def test_compact_is_refused(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "p", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL", ("id", "dt"), ("dt",), bucket="2")
    for i in range(3):
        write_table(t, [csv(tmp_path, f"id,v,dt\n1,a{i},x\n2,b{i},y\n", f"{i}.csv")],
                    options={"write-only": "true"})
    t = rebucket(cat, "p", 4)
    before = tree(t.path)
    with pytest.raises(InvalidInput, match=r"compact: partition dt=x .*2 buckets.*rescale db\.p --partition dt=x"):
        compact_table(t, full=True)
    with pytest.raises(InvalidInput, match="compact: partition dt=y"):
        plan_compaction(t, partitions=["dt=y"])
    assert tree(t.path) == before


def test_commit_refuses_an_append_into_a_partition_rescaled_meanwhile(
    cat: FileSystemCatalog, tmp_path: Path
) -> None:
    import pyarrow as pa

    from paimon_cli.core.arrow_schema import arrow_schema
    from paimon_cli.core.commit import FileStoreCommit

    t = make(cat, "p", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL", ("id", "dt"), ("dt",), bucket="2")
    write_table(t, [csv(tmp_path, "id,v,dt\n1,a,x\n2,b,x\n3,c,x\n")])
    # a writer restores its buckets (2) ...
    tw = TableWrite(t)
    tw.write_arrow(pa.Table.from_pylist([{"id": 1, "v": "A", "dt": "x"}], schema=arrow_schema(list(t.schema.fields))))
    messages = tw.prepare_commit()
    assert tw.restored_snapshot_id == 1
    # ... while the partition is rewritten with 5 buckets
    t5 = rebucket(cat, "p", 5)
    write_table(t5, [csv(tmp_path, "id,v,dt\n1,a,x\n2,b,x\n3,c,x\n", "o.csv")], overwrite=True)
    before = tree(t.path)
    commit = FileStoreCommit(t)
    with pytest.raises(CommitConflict, match="partition dt=x changed from 5 to 2"):
        commit.commit(messages, "APPEND", restored_snapshot_id=tw.restored_snapshot_id)
    ours = {str(Path(p).relative_to(t.path)) for p in tw.written}
    assert ours and ours <= set(before)
    tw.abort()
    assert tree(t.path) == {k: v for k, v in before.items() if k not in ours}  # no snapshot, no manifest
    assert rows(t5) == [(1, "a", "x"), (2, "b", "x"), (3, "c", "x")]
    # the same writer's files commit fine when nothing re-laid the partition out
    r = write_table_result(t5, [csv(tmp_path, "id,v,dt\n1,Z,x\n", "z.csv")])
    assert r.snapshot is not None
    assert rows(t5) == [(1, "Z", "x"), (2, "b", "x"), (3, "c", "x")]
