"""Bucket-number changes and ``rescale`` against the real Java Paimon 0.9.

Why: after ``alter --set bucket=N`` a partition keeps the layout its files were written
with. Java refuses to write into it ("... with a new bucket num N, but the previous bucket
num is M"); so must we, and our ``rescale`` must leave a table Java reads row for row and
keeps writing into with the new bucket number -- one row per key, whichever side writes.
Tables written by Java and by us: partitioned and unpartitioned primary-key tables (with
updates and deletes), a deletion-vector table, and a fixed-bucket append table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.rescale import rescale
from paimon_cli.core.compact.write_job import write_table_result
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.schema.schema_change import SetOption
from paimon_cli.core.schema.table_schema import Schema

from .java_harness import JavaPaimon, JavaPaimonError

pytestmark = pytest.mark.java

DB = "db"
COLS = [("id", "INT"), ("dt", "STRING"), ("v", "STRING"), ("n", "BIGINT")]
_KIND = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}

# name -> (primary key, partition keys, options, new bucket number)
TABLES: dict[str, tuple[list[str], list[str], dict[str, str], int]] = {
    "pk_part": (["id", "dt"], ["dt"], {"bucket": "2"}, 5),
    "pk_plain": (["id"], [], {"bucket": "3"}, 2),
    "pk_dv": (["id"], [], {"bucket": "2", "deletion-vectors.enabled": "true"}, 4),
    "append": ([], ["dt"], {"bucket": "2", "bucket-key": "id"}, 3),
}


def batch(seed: int, pk: bool, n: int = 40) -> tuple[list[dict[str, Any]], list[str]]:
    rng = np.random.default_rng(seed)
    ids = rng.choice(np.arange(60), size=n, replace=False)
    rows = [{"id": int(i), "dt": "x" if i % 3 else "y", "v": f"v{seed}-{i}", "n": int(rng.integers(-99, 99))}
            for i in ids]
    kinds = ["-D" if pk and seed > 1 and rng.random() < 0.2 else "+I" for _ in rows]
    return rows, kinds


def table(wh: str, name: str) -> Any:
    return FileSystemCatalog(wh).get_table(f"{DB}.{name}")


def create(jp: JavaPaimon, wh: str, name: str, creator: str) -> None:
    pk, part, options, _ = TABLES[name]
    if creator == "java":
        jp.create_table(wh, DB, name, COLS, pk, part, options)
        return
    cat = FileSystemCatalog(wh)
    cat.create_database(DB, True)
    cols = ", ".join(f"{c} {t}{' NOT NULL' if c in pk else ''}" for c, t in COLS)
    cat.create_table(f"{DB}.{name}", Schema.of(parse_columns(cols), partition_keys=part, primary_keys=pk,
                                               options=options))


def write(jp: JavaPaimon, wh: str, name: str, writer: str, rows: list[dict[str, Any]], kinds: list[str]) -> None:
    """One commit by Java or by ``write`` (row kinds through ``--row-kind-column``)."""
    if writer == "java":
        jp.write(wh, DB, name, rows, kinds)
        return
    t = table(wh, name)
    data = pa.Table.from_pylist(rows, schema=arrow_schema(list(t.schema.fields)))
    path = Path(wh) / f"in-{name}-{len(list(Path(wh).glob(f'in-{name}-*')))}.parquet"
    pk = bool(TABLES[name][0])
    pq.write_table(data.append_column("op", pa.array(kinds, pa.string())) if pk else data, path)
    write_table_result(t, [str(path)], row_kind_column="op" if pk else None)


def fresh(wh: str) -> str:
    """The warehouse under another spelling: the Java helper keeps one caching catalog per
    warehouse string, whose cached table would still hold the schema from before our alter."""
    return f"file://{wh}"


def key(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple((row[c] is None, row[c]) for c, _ in COLS)


def java_rows(jp: JavaPaimon, wh: str, name: str) -> list[dict[str, Any]]:
    return sorted(({c: r[c] for c, _ in COLS} for r in jp.read(wh, DB, name, row_kind=False)), key=key)


def our_rows(wh: str, name: str) -> list[dict[str, Any]]:
    return sorted(TableRead(table(wh, name)).to_arrow().to_pylist(), key=key)


class Model:
    def __init__(self, rows: list[dict[str, Any]], pk: list[str]) -> None:
        self.pk = pk
        self.appended = [dict(r) for r in rows] if not pk else []
        self.state = {tuple(r[k] for k in pk): dict(r) for r in rows} if pk else {}

    def apply(self, rows: list[dict[str, Any]], kinds: list[str]) -> None:
        for r, kind in zip(rows, kinds, strict=True):
            if not self.pk:
                self.appended.append(dict(r))
            elif kind == "-D":
                self.state.pop(tuple(r[k] for k in self.pk), None)
            else:
                self.state[tuple(r[k] for k in self.pk)] = dict(r)

    def rows(self) -> list[dict[str, Any]]:
        return sorted(self.appended if not self.pk else list(self.state.values()), key=key)


@pytest.mark.parametrize("creator", ["java", "ours"])
@pytest.mark.parametrize("name", list(TABLES))
def test_rescaled_table_read_and_written_by_java(java_paimon: JavaPaimon, tmp_path: Path, name: str,
                                                 creator: str) -> None:
    wh = str(tmp_path / "wh")
    pk, part, _, new_buckets = TABLES[name]
    create(java_paimon, wh, name, creator)
    for seed in (1, 2, 3):
        write(java_paimon, wh, name, creator, *batch(seed, bool(pk)))
    before = java_rows(java_paimon, wh, name)
    assert our_rows(wh, name) == before and before

    res = rescale(table(wh, name), bucket_num=new_buckets)
    assert res.commit_kind == "OVERWRITE" and len(res.plan.partitions) == (2 if part else 1)
    t = table(wh, name)
    assert t.schema.bucket == new_buckets
    assert {e.total_buckets for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())} == {new_buckets}
    assert java_rows(java_paimon, wh, name) == before  # row for row (the cached schema reads it too)
    jwh = fresh(wh)
    assert java_rows(java_paimon, jwh, name) == before
    snaps = java_paimon.system_table(jwh, DB, name, "snapshots")
    kinds = [r[snaps["columns"].index("commit_kind")] for r in snaps["rows"]]
    assert kinds[-1] == "OVERWRITE"

    # Java keeps writing with the new bucket number: existing keys update, no duplicates
    model = Model(before, pk)
    for seed in (4, 5):
        rows, kinds = batch(seed, bool(pk))
        java_paimon.write(jwh, DB, name, rows, kinds)
        model.apply(rows, kinds)
    assert java_rows(java_paimon, jwh, name) == model.rows()
    java_paimon.compact(jwh, DB, name, full=True)
    assert java_rows(java_paimon, jwh, name) == model.rows()
    # and so do we
    rows, kinds = batch(6, bool(pk))
    write(java_paimon, wh, name, "ours", rows, kinds)
    model.apply(rows, kinds)
    assert java_rows(java_paimon, jwh, name) == our_rows(wh, name) == model.rows()


def test_java_and_we_refuse_the_old_layout_until_rescaled(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    create(java_paimon, wh, "pk_part", "java")
    rows, kinds = batch(1, True)
    java_paimon.write(wh, DB, "pk_part", rows, kinds)
    before = java_rows(java_paimon, wh, "pk_part")
    java_paimon.alter_table(wh, DB, "pk_part", [{"set": {"bucket": "4"}}])
    again = [dict(r, v="again") for r in rows]
    with pytest.raises(JavaPaimonError, match="with a new bucket num 4, but the previous bucket num is 2"):
        java_paimon.write(wh, DB, "pk_part", again, ["+I"] * len(again))
    with pytest.raises(InvalidInput, match="holds files written with 2 buckets.*rescale db.pk_part --partition"):
        write(java_paimon, wh, "pk_part", "ours", again, ["+I"] * len(again))
    assert java_rows(java_paimon, wh, "pk_part") == before

    # rescale one partition: Java (and we) write into it, the other one is still refused
    rescale(table(wh, "pk_part"), ["dt=x"])
    xs = [r for r in again if r["dt"] == "x"]
    java_paimon.write(wh, DB, "pk_part", xs, ["+I"] * len(xs))
    ys = [r for r in again if r["dt"] == "y"]
    with pytest.raises(JavaPaimonError, match="previous bucket num is 2"):
        java_paimon.write(wh, DB, "pk_part", ys, ["+I"] * len(ys))
    model = Model(before, ["id", "dt"])
    model.apply(xs, ["+I"] * len(xs))
    assert java_rows(java_paimon, wh, "pk_part") == our_rows(wh, "pk_part") == model.rows()

    # Java's own INSERT OVERWRITE of the other partition is as good as our rescale
    java_paimon.write(wh, DB, "pk_part", ys, overwrite={"dt": "y"})
    model.state = {k: r for k, r in model.state.items() if k[1] != "y"}
    model.apply(ys, ["+I"] * len(ys))
    assert rescale(table(wh, "pk_part")).snapshot_id is None  # nothing left in the old layout
    write(java_paimon, wh, "pk_part", "ours", ys[:3], ["-D"] * 3)
    model.apply(ys[:3], ["-D"] * 3)
    assert java_rows(java_paimon, wh, "pk_part") == our_rows(wh, "pk_part") == model.rows()


def test_alter_then_rescale_a_java_table_with_set_option(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """``alter --set bucket`` on our side, rescale without --bucket-num, Java reads and writes."""
    wh = str(tmp_path / "wh")
    create(java_paimon, wh, "pk_plain", "java")
    for seed in (1, 2):
        java_paimon.write(wh, DB, "pk_plain", *batch(seed, True))
    before = java_rows(java_paimon, wh, "pk_plain")
    FileSystemCatalog(wh).alter_table(f"{DB}.pk_plain", [SetOption("bucket", "6")])
    jwh = fresh(wh)
    with pytest.raises(JavaPaimonError, match="new bucket num 6, but the previous bucket num is 3"):
        java_paimon.write(jwh, DB, "pk_plain", *batch(3, True))
    res = rescale(table(wh, "pk_plain"))
    assert res.schema_id is None and res.plan.new_buckets == 6
    assert java_rows(java_paimon, jwh, "pk_plain") == before
    rows, kinds = batch(3, True)
    java_paimon.write(jwh, DB, "pk_plain", rows, kinds)
    model = Model(before, ["id"])
    model.apply(rows, kinds)
    assert java_rows(java_paimon, jwh, "pk_plain") == our_rows(wh, "pk_plain") == model.rows()
