"""core/compact/job.py: planning (partitions, budgets, plan rows), the local engine, the commit,
conflicts and cleanup, and the write's auto-compaction."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact import job as job_mod
from paimon_cli.core.compact import local as local_mod
from paimon_cli.core.compact.job import choose_engine, compact_table
from paimon_cli.core.compact.plan import CompactPlan, plan_compaction
from paimon_cli.core.compact.write_job import write_table, write_table_result
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.errors import CommitConflict, InvalidInput, PaimonError
from paimon_cli.core.mergetree.compact_unit import MERGE_TREE, CompactUnit
from paimon_cli.core.operation.partition_spec import parse_partition_specs, partition_filter
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.schema.table_schema import Schema

_names = itertools.count()


@pytest.fixture
def cat(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


def make(cat: FileSystemCatalog, columns: str, pk: tuple[str, ...] = (), part: tuple[str, ...] = (),
         **options: str) -> Any:
    name = f"db.t{next(_names)}"
    cat.create_table(name, Schema.of(parse_columns(columns), partition_keys=list(part), primary_keys=list(pk),
                                     options=dict(options)))
    return cat.get_table(name)


def put(table: Any, tmp_path: Path, rows: list[dict[str, Any]], write_only: bool = True, **kw: Any) -> Any:
    p = tmp_path / f"in{next(_names)}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), p)
    opts = {"write-only": "true"} if write_only else None
    return write_table_result(table, [str(p)], options=opts, **kw)


def rows_of(table: Any) -> list[dict[str, Any]]:
    fresh = FileSystemCatalog(table.file_io.root).get_table(str(table.identifier))
    return sorted(TableRead(fresh).to_arrow().to_pylist(), key=lambda r: tuple(str(v) for v in r.values()))


def live(table: Any) -> list[Any]:
    return FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())


def data_files_on_disk(table: Any) -> set[str]:
    return {p.name for p in Path(table.path).rglob("*") if p.is_file() and p.name.startswith("data-")}


def pk_table_with_runs(cat: FileSystemCatalog, tmp_path: Path, runs: int = 6, buckets: int = 2,
                       **options: str) -> Any:
    """A partitioned PK table whose buckets hold ``runs`` level-0 sorted runs (write-only writes)."""
    t = make(cat, "id INT NOT NULL, dt STRING NOT NULL, v STRING", ("id", "dt"), ("dt",), bucket=str(buckets),
             **options)
    for r in range(runs):
        put(t, tmp_path, [{"id": i, "dt": dt, "v": f"{dt}-{i}-{r}"} for dt in ("a", "b") for i in range(r, 40)])
    return t


def expected_rows(runs: int = 6) -> list[dict[str, Any]]:
    state: dict[tuple[int, str], dict[str, Any]] = {}
    for r in range(runs):
        for dt in ("a", "b"):
            for i in range(r, 40):
                state[(i, dt)] = {"id": i, "dt": dt, "v": f"{dt}-{i}-{r}"}
    return sorted(state.values(), key=lambda r: tuple(str(v) for v in r.values()))


# ------------------------------------------------------------------------------ partition selection


def test_partition_specs_and_or(cat: FileSystemCatalog) -> None:
    t = make(cat, "id INT NOT NULL, dt STRING NOT NULL, hh INT NOT NULL", ("id", "dt", "hh"), ("dt", "hh"),
             bucket="1")
    specs = parse_partition_specs(["dt=a,hh=1;dt=b", "hh=3"], t.schema)
    assert specs == [{"dt": "a", "hh": "1"}, {"dt": "b"}, {"hh": "3"}]
    from paimon_cli.core.data import binary_row

    types = t.schema.partition_types
    f = partition_filter(t.schema, specs, None)
    assert f is not None

    def part(dt: str, hh: int) -> bytes:
        return binary_row.serialize([dt, hh], types)

    assert f(part("a", 1)) and not f(part("a", 2)) and f(part("b", 7)) and f(part("c", 3)) and not f(part("c", 4))
    w = partition_filter(t.schema, None, "dt = 'a' AND hh > 1")
    assert w is not None and w(part("a", 2)) and not w(part("a", 1)) and not w(part("b", 5))


@pytest.mark.parametrize("spec, match", [
    (["x=1"], "'x' is not a partition key"),
    (["dt"], "expected k=v"),
    (["dt=a,dt=b"], "given twice"),
    ([";"], "empty partition spec"),
])
def test_partition_spec_errors(cat: FileSystemCatalog, spec: list[str], match: str) -> None:
    t = make(cat, "id INT NOT NULL, dt STRING NOT NULL", ("id", "dt"), ("dt",), bucket="1")
    with pytest.raises(InvalidInput, match=match):
        parse_partition_specs(spec, t.schema)


def test_where_and_partition_errors(cat: FileSystemCatalog) -> None:
    t = make(cat, "id INT NOT NULL, dt STRING NOT NULL", ("id", "dt"), ("dt",), bucket="1")
    with pytest.raises(InvalidInput, match="'id' is not a partition key"):
        partition_filter(t.schema, None, "id = 1")
    with pytest.raises(InvalidInput, match="either --partition or --where"):
        partition_filter(t.schema, [{"dt": "a"}], "dt = 'a'")
    flat = make(cat, "id INT NOT NULL", ("id",), bucket="1")
    with pytest.raises(InvalidInput, match="not partitioned"):
        parse_partition_specs(["id=1"], flat.schema)
    with pytest.raises(InvalidInput, match="not partitioned"):
        partition_filter(flat.schema, None, "id = 1")


# ------------------------------------------------------------------------------ planning


def test_plan_rows_budgets_and_filters(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = pk_table_with_runs(cat, tmp_path)
    plan = plan_compaction(t)
    assert len(plan.units) == 4 and plan.base_snapshot is not None and plan.base_snapshot.id == 6
    row = plan.rows[0]
    assert row.sorted_runs == 6 and row.levels == "L0:6" and row.files == 6 and row.bytes_to_rewrite > 0
    assert row.output_level is not None and row.output_level >= 1 and row.reason
    assert {r.partition for r in plan.rows} == {"dt=a", "dt=b"}
    only_a = plan_compaction(t, partitions=["dt=a"])
    assert {r.partition for r in only_a.rows} == {"dt=a"} and len(only_a.units) == 2
    assert len(plan_compaction(t, where="dt <> 'a'").units) == 2
    two = plan_compaction(t, max_buckets=2)
    assert len(two.units) == 2 and len(two.deferred) == 2
    assert [r.reason for r in two.rows[2:]] == ["deferred by --max-buckets budget"] * 2
    smallest = min(u.bytes_in for u in plan.units)
    one = plan_compaction(t, max_bytes=smallest)
    assert len(one.units) == 1 and one.bytes_in <= smallest
    none = plan_compaction(t, max_bytes=1)
    assert not none.units and len(none.deferred) == 4
    res = compact_table(t, max_bytes=1)
    assert res.snapshot_id is None and "budget" in res.message
    assert t.snapshot_manager.latest_snapshot_id() == 6
    with pytest.raises(InvalidInput, match="must be positive"):
        plan_compaction(t, max_buckets=0)


def test_plan_only_writes_nothing(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = pk_table_with_runs(cat, tmp_path)
    before = data_files_on_disk(t)
    res = compact_table(t, full=True, plan_only=True)
    assert res.snapshot_id is None and res.plan is not None and len(res.plan.rows) == 4
    assert res.engine == "local" and "small plan" in res.engine_reason
    assert data_files_on_disk(t) == before and t.snapshot_manager.latest_snapshot_id() == 6


# ------------------------------------------------------------------------------ running and committing


def test_minor_then_full_compaction(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = pk_table_with_runs(cat, tmp_path)
    want = expected_rows()
    res = compact_table(t, expire=False)
    assert res.snapshot_id == 7 and res.commit_kind == "COMPACT" and res.units == 4
    assert res.files_in == 24 and res.files_out >= 4 and res.rows_out > 0 and res.engine == "local"
    assert rows_of(t) == want
    assert len(t.snapshot_manager.snapshots()) == 7
    res = compact_table(t, full=True, expire=False)
    max_level = t.options.num_levels - 1
    files = live(t)
    if res.snapshot_id is not None:
        assert res.commit_kind == "COMPACT"
    assert all(e.file.level == max_level for e in files)
    assert rows_of(t) == want
    # no key ranges overlap on a level >= 1 (one sorted run per level)
    from paimon_cli.core.mergetree.levels import Levels, key_function

    key = key_function([f.type for f in t.schema.logical_trimmed_primary_keys_type.fields])
    for _, group in itertools.groupby(sorted(files, key=lambda e: (e.partition, e.bucket)),
                                      key=lambda e: (e.partition, e.bucket)):
        Levels([e.file for e in group], t.options.num_levels, key)  # raises on overlap
    again = compact_table(t, full=True)
    assert again.snapshot_id is None and "nothing" in again.message


def test_nothing_to_compact_commits_nothing(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "id INT NOT NULL, v STRING", ("id",), bucket="1")
    assert "no snapshot" in compact_table(t).message
    put(t, tmp_path, [{"id": 1, "v": "a"}])
    res = compact_table(t)
    assert res.snapshot_id is None and res.units == 0 and "nothing to compact" in res.message
    assert t.snapshot_manager.latest_snapshot_id() == 1


def test_failed_unit_leaves_no_files(cat: FileSystemCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = pk_table_with_runs(cat, tmp_path)
    before = data_files_on_disk(t)
    real = local_mod.execute_unit
    calls = itertools.count()

    def flaky(table: Any, unit: CompactUnit) -> Any:
        if next(calls) == 2:
            raise PaimonError("disk on fire")
        return real(table, unit)

    monkeypatch.setattr(local_mod, "execute_unit", flaky)
    with pytest.raises(PaimonError, match="disk on fire"):
        compact_table(t, parallelism=1)
    assert data_files_on_disk(t) == before
    assert t.snapshot_manager.latest_snapshot_id() == 6


def test_concurrent_compaction_conflicts_and_cleans_up(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = pk_table_with_runs(cat, tmp_path)
    want = expected_rows()
    fired = []

    def race(event: str, unit: Any, done: int, total: int) -> None:
        # another job compacts everything while ours is between units
        if event == "done" and not fired:
            fired.append(compact_table(FileSystemCatalog(t.file_io.root).get_table(str(t.identifier)), full=True))

    with pytest.raises(CommitConflict, match="give up committing"):
        compact_table(t, progress=race, parallelism=1)
    assert fired and fired[0].snapshot_id == 7
    assert t.snapshot_manager.latest_snapshot_id() == 7
    live_names = {e.file.file_name for e in live(t)}
    # everything on disk that is not live belongs to snapshots 1..6 (inputs), none of our outputs stayed
    snap_files = {e.file.file_name for s in range(1, 8) for e in FileStoreScan(t).plan(t.snapshot_manager.snapshot(s))}
    assert data_files_on_disk(t) <= snap_files | live_names
    assert rows_of(t) == want


def test_concurrent_append_is_rebased(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = pk_table_with_runs(cat, tmp_path)
    appended = []

    def race(event: str, unit: Any, done: int, total: int) -> None:
        if event == "done" and not appended:
            appended.append(put(t, tmp_path, [{"id": 1000, "dt": "a", "v": "new"}]))

    res = compact_table(t, progress=race, parallelism=1)
    assert res.snapshot_id == 8 and appended[0].snapshot.id == 7
    want = expected_rows() + [{"id": 1000, "dt": "a", "v": "new"}]
    assert rows_of(t) == sorted(want, key=lambda r: tuple(str(v) for v in r.values()))


def test_concurrent_writer_compaction_on_dv_table_conflicts(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "id INT NOT NULL, v STRING", ("id",), bucket="1", **{"deletion-vectors.enabled": "true"})
    put(t, tmp_path, [{"id": i, "v": "a"} for i in range(50)], write_only=False)  # L0 -> max level
    put(t, tmp_path, [{"id": i, "v": "b"} for i in range(0, 50, 2)])  # L0, write-only
    plan = plan_compaction(t)
    assert len(plan.units) == 1
    results = local_mod.run_local(t, plan.units)
    # meanwhile another writer compacts the same bucket (a new DV index replaces the planned one)
    put(t, tmp_path, [{"id": i, "v": "c"} for i in range(1, 50, 2)], write_only=False)
    with pytest.raises(CommitConflict):
        job_mod.commit_results(t, results)
    assert not any(Path(p).exists() for r in results for p in r.written)
    got = {r["id"]: r["v"] for r in rows_of(t)}
    assert got == {i: ("b" if i % 2 == 0 else "c") for i in range(50)}


# ------------------------------------------------------------------------------ engine choice


def test_engine_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    small = CompactPlan(None, [CompactUnit(MERGE_TREE, b"", 0, 1, ())])
    assert choose_engine("auto", small, None, None)[0] == "local"
    assert choose_engine("local", small, None, None) == ("local", "--engine local")
    with pytest.raises(InvalidInput, match="need --engine spark"):
        choose_engine("local", small, "local[2]", None)
    with pytest.raises(InvalidInput, match="--engine 'fast'"):
        choose_engine("fast", small, None, None)

    class Big(CompactUnit):
        @property
        def bytes_in(self) -> int:
            return 1 << 30

    big = CompactPlan(None, [Big(MERGE_TREE, b"", i, 8, ()) for i in range(4)])
    monkeypatch.setattr(job_mod.os, "cpu_count", lambda: 2)
    name, why = choose_engine("auto", big, None, None)
    assert name == "local" and "only 2 CPUs" in why
    monkeypatch.setattr(job_mod.os, "cpu_count", lambda: 16)
    name, why = choose_engine("auto", big, None, None)
    assert name == "spark" and "large plan" in why
    assert choose_engine("auto", CompactPlan(None, big.units[:3]), None, None)[0] == "local"
    assert choose_engine("auto", small, "spark://h:7077", None) == ("spark", "Spark options were given")


# ------------------------------------------------------------------------------ write auto-compaction


def test_write_compacts_when_runs_reach_the_trigger(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "id INT NOT NULL, v STRING", ("id",), bucket="1")
    for r in range(4):
        res = put(t, tmp_path, [{"id": i, "v": f"{r}"} for i in range(10)], write_only=False)
        assert [s.commit_kind for s in res.snapshots] == ["APPEND"]
    res = put(t, tmp_path, [{"id": i, "v": "5"} for i in range(5)], write_only=False)  # 5th run: trigger
    assert [s.commit_kind for s in res.snapshots] == ["APPEND", "COMPACT"] and res.compacted_units == 1
    assert all(e.file.level > 0 for e in live(t))
    assert {r["id"]: r["v"] for r in rows_of(t)} == {i: ("5" if i < 5 else "3") for i in range(10)}


@pytest.mark.parametrize("opts", [{"deletion-vectors.enabled": "true"}, {"merge-engine": "first-row"}])
def test_dv_and_first_row_writes_are_visible(cat: FileSystemCatalog, tmp_path: Path, opts: dict[str, str]) -> None:
    t = make(cat, "id INT NOT NULL, v STRING", ("id",), bucket="2", **opts)
    res = put(t, tmp_path, [{"id": i, "v": "a"} for i in range(20)], write_only=False)
    assert [s.commit_kind for s in res.snapshots] == ["APPEND", "COMPACT"]
    assert rows_of(t) == [{"id": i, "v": "a"} for i in sorted(range(20), key=str)]
    put(t, tmp_path, [{"id": i, "v": "b"} for i in range(10, 30)], write_only=False)
    first_row = opts.get("merge-engine") == "first-row"
    want = {i: ("a" if i < 20 and (first_row or i < 10) else "b") for i in range(30)}
    assert {r["id"]: r["v"] for r in rows_of(t)} == want
    # write-only: level 0 stays hidden until a compaction
    put(t, tmp_path, [{"id": 100, "v": "c"}])
    assert 100 not in {r["id"] for r in rows_of(t)}
    res2 = compact_table(t)
    assert res2.commit_kind == "COMPACT"
    assert {r["id"]: r["v"] for r in rows_of(t)} == {**want, 100: "c"}


def test_write_only_option_skips_compaction(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "id INT NOT NULL, v STRING", ("id",), bucket="1", **{"write-only": "true"})
    for r in range(7):
        snap = write_table(t, [str(_parquet(tmp_path, [{"id": 1, "v": str(r)}]))])
        assert snap is not None and snap.commit_kind == "APPEND"
    assert all(e.file.level == 0 for e in live(t)) and len(live(t)) == 7


def _parquet(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    p = tmp_path / f"p{next(_names)}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), p)
    return p


def test_spark_slices_balance_units_by_bytes() -> None:
    from paimon_cli.core.compact.spark import slice_units

    class Sized(CompactUnit):
        @property
        def bytes_in(self) -> int:
            return self.bucket * 10 + 1

    units = [Sized(MERGE_TREE, b"", b, 8, ()) for b in range(8)]
    slices = slice_units(units, 3)
    assert sorted(i for s in slices for i, _ in s) == list(range(8))  # every unit exactly once
    loads = [sum(u.bytes_in for _, u in s) for s in slices]
    assert max(loads) - min(loads) <= 21  # LPT: within the biggest unit
    assert all([u.bytes_in for _, u in s] == sorted((u.bytes_in for _, u in s), reverse=True) for s in slices)
    assert len(slice_units(units[:2], 5)) == 2


def test_write_whose_compaction_loses_a_dv_race_commits_the_append_and_warns(
    cat: FileSystemCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from paimon_cli.core.compact import write_job as write_mod

    t = make(cat, "id INT NOT NULL, v STRING", ("id",), bucket="1", **{"deletion-vectors.enabled": "true"})
    put(t, tmp_path, [{"id": i, "v": "seed"} for i in range(20)], write_only=False)
    real = write_mod._auto_compact

    def racing(tw: Any, messages: Any) -> Any:
        results = real(tw, messages)
        monkeypatch.setattr(write_mod, "_auto_compact", real)
        # another writer updates other keys and compacts (new DV index for the bucket) first
        other = put(cat.get_table(str(t.identifier)), tmp_path, [{"id": i, "v": "B"} for i in range(5)],
                    write_only=False)
        assert [s.commit_kind for s in other.snapshots] == ["APPEND", "COMPACT"]
        return results

    monkeypatch.setattr(write_mod, "_auto_compact", racing)
    # A also replaces seed rows: its compaction rewrites the bucket's DV index from the old base
    a_ids = [*range(10, 15), *range(100, 105)]
    res = put(t, tmp_path, [{"id": i, "v": "A"} for i in a_ids], write_only=False)
    assert [s.commit_kind for s in res.snapshots] == ["APPEND"]
    assert res.warning is not None and "paimon-cli compact" in res.warning and "do not see" in res.warning
    got = {r["id"]: r["v"] for r in rows_of(t)}
    assert 100 not in got and got[0] == "B" and got[10] == "seed"  # level 0 of a DV table is hidden
    compact_table(cat.get_table(str(t.identifier)))
    want = {**{i: "seed" for i in range(20)}, **{i: "B" for i in range(5)}, **{i: "A" for i in a_ids}}
    got_rows = rows_of(t)
    assert len(got_rows) == len(want)  # no replaced row came back (no DV was lost)
    assert {r["id"]: r["v"] for r in got_rows} == want


def test_overwrite_of_a_dv_table_is_compacted_and_visible(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "id INT NOT NULL, dt STRING NOT NULL, v STRING", ("id", "dt"), ("dt",), bucket="1",
             **{"deletion-vectors.enabled": "true"})
    put(t, tmp_path, [{"id": i, "dt": d, "v": "old"} for d in ("a", "b") for i in range(5)], write_only=False)
    res = put(t, tmp_path, [{"id": i, "dt": "a", "v": "new"} for i in range(3)], write_only=False, overwrite=True)
    assert [s.commit_kind for s in res.snapshots] == ["OVERWRITE", "COMPACT"]
    got = sorted((r["dt"], r["id"], r["v"]) for r in rows_of(t))
    assert got == [("a", i, "new") for i in range(3)] + [("b", i, "old") for i in range(5)]


# what a plain primary-key compaction of a local table must not load (issue 28: start-up is
# part of what a compaction costs): fsspec (~0.1 s with asyncio and ssl; local files go through
# os and pyarrow), and the rooms of features the table does not use
_NOT_FOR_PLAIN_COMPACTION = (
    "fsspec", "dateutil", "paimon_cli.core.iceberg", "paimon_cli.core.fileindex", "paimon_cli.core.compact.sort",
    "paimon_cli.core.compact.spark", "paimon_cli.core.compact.append", "paimon_cli.core.compact.data_evolution",
    "paimon_cli.core.operation.write", "paimon_cli.core.operation.data_evolution", "paimon_cli.core.refs.statistics",
)


def test_local_compaction_of_a_plain_table_loads_only_what_it_runs(cat: FileSystemCatalog, tmp_path: Path) -> None:
    """A fresh interpreter runs the CLI's compaction of a local primary-key table (written,
    committed, expired): none of the modules above load, and the result is the same rows,
    compacted."""
    import json
    import subprocess
    import sys

    t = pk_table_with_runs(cat, tmp_path, runs=3, buckets=2, **{"file.format": "parquet"})
    before = rows_of(t)
    code = (
        "import json, sys\n"
        "from paimon_cli.app import app\n"
        "try:\n"
        f"    app(['compact', {str(t.identifier)!r}, '--full', '-w', {cat.warehouse!r}, '-o', 'json'])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        f"unwanted = {_NOT_FOR_PLAIN_COMPACTION!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if any(m == u or m.startswith(u + '.') for u in unwanted))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []
    fresh = FileSystemCatalog(cat.warehouse).get_table(str(t.identifier))
    assert fresh.snapshot_manager.latest_snapshot().commit_kind == "COMPACT"
    assert rows_of(fresh) == before
