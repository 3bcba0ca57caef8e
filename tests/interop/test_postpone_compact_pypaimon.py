"""Postpone-bucket tables (``bucket = -2``): we write, compact and rescale them as Java 2.x does,
with pypaimon 2.1 as the peer.

pypaimon writes both layouts (staged rows in ``bucket-postpone/`` and rows hashed straight into
real buckets) but has no compaction; Java's postpone compaction replays the staged files in
creation order through a fixed-bucket writer of the partition's bucket number, so a staged row
is newer than every row already in a real bucket -- whatever the merge engine. The expected
rows below model exactly that: the real-bucket commits merged in commit order, then the staged
commits in commit order.
"""

from __future__ import annotations

import json
import re
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact import postpone as postpone_compact
from paimon_cli.core.compact.local import UnitsFailed
from paimon_cli.core.data import binary_row
from paimon_cli.core.errors import CommitConflict
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from tests.interop.pypaimon_peer import PyPaimon, encode_value

pytestmark = pytest.mark.pypaimon

DB = "pp"
COLUMNS = [("id", "int64"), ("dt", "string"), ("name", "string"), ("amount", "decimal(10,2)")]
KEYS = ["dt", "id"]
STAGED_NAME = re.compile(r"^data--u-[0-9a-f-]+-s-\d+-w-[0-9a-f-]+-\d+\.avro$")


def _row(i: int, dt_: str, name: str | None, amount: str | None = None) -> dict[str, Any]:
    return {"id": i, "dt": dt_, "name": name, "amount": None if amount is None else Decimal(amount)}


# table -> (options, [(staged?, rows)]): pypaimon's commits, in order
TABLES: dict[str, tuple[dict[str, str], list[tuple[bool, list[dict[str, Any]]]]]] = {
    "dedup": ({"bucket": "-2", "postpone.default-bucket-num": "2"}, [
        (False, [_row(i, "a" if i % 2 else "b", f"r{i}", f"{i}.50") for i in range(8)]),
        (True, [_row(3, "a", "p3", "30.00"), _row(2, "b", "p2", "20.00"), _row(20, "a", "p20", "1.00"),
                _row(30, "c", "p30", "3.00"), _row(3, "a", "p3-again", "31.00")]),
        (True, [_row(2, "b", "p2-later", "21.00"), _row(31, "c", "p31", "3.10")]),
        (False, [_row(5, "a", "r5-upd", "5.55"), _row(2, "b", "r2-upd", "2.22")]),
    ]),
    "partial": ({"bucket": "-2", "postpone.default-bucket-num": "3", "merge-engine": "partial-update"}, [
        (False, [_row(i, "a", f"r{i}", f"{i}.00") for i in range(4)]),
        (True, [_row(1, "a", None, "10.00"), _row(2, "a", "p2", None), _row(9, "a", "p9", None)]),
        (True, [_row(9, "a", None, "9.99")]),
    ]),
    "agg": ({"bucket": "-2", "merge-engine": "aggregation", "fields.amount.aggregate-function": "sum",
             "postpone.default-bucket-num": "2"}, [
        (False, [_row(i, "a", f"r{i}", "1.00") for i in range(4)]),
        (True, [_row(1, "a", "p1", "2.00"), _row(1, "a", "p1b", "3.00"), _row(7, "a", "p7", "7.00")]),
    ]),
    # only staged rows, no default bucket number: the size estimate gives one bucket
    "fresh": ({"bucket": "-2"}, [
        (True, [_row(i, "x", f"p{i}", "1.00") for i in range(6)]),
        (True, [_row(0, "x", "p0-upd", "2.00")]),
    ]),
}


def _merge(name: str, acc: dict[tuple[Any, ...], dict[str, Any]], row: dict[str, Any]) -> None:
    key = tuple(row[k] for k in KEYS)
    old = acc.get(key)
    engine = TABLES[name][0].get("merge-engine", "deduplicate")
    if old is None or engine == "deduplicate":
        acc[key] = dict(row)
    elif engine == "partial-update":
        acc[key] = {k: (v if v is not None else old[k]) for k, v in row.items()}
    else:  # aggregation: sum(amount), last non-null value for the others
        merged = {k: (v if v is not None else old[k]) for k, v in row.items()}
        merged["amount"] = (old["amount"] or 0) + (row["amount"] or 0)
        acc[key] = merged


def expected(name: str, compacted: bool) -> list[dict[str, Any]]:
    """Rows after the commits (real buckets first, staged ones replayed after when compacted)."""
    acc: dict[tuple[Any, ...], dict[str, Any]] = {}
    commits = TABLES[name][1]
    for _staged, rows in [c for c in commits if not c[0]] + ([c for c in commits if c[0]] if compacted else []):
        for r in rows:
            _merge(name, acc, r)
    return list(acc.values())


def canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def table_of(wh: str, name: str) -> Any:
    return FileSystemCatalog(wh).get_table(f"{DB}.{name}")


def ours(wh: str, name: str) -> list[dict[str, Any]]:
    return TableRead(table_of(wh, name)).to_arrow().to_pylist()


def live(wh: str, name: str) -> list[Any]:
    t = table_of(wh, name)
    return FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())


def cli(wh: str, *args: str, code: int = 0) -> Any:
    res = CliRunner().invoke(app, [*args, "-w", wh])
    assert res.exit_code == code, f"{args}: exit {res.exit_code}\n{res.stdout}\n{res.stderr}"
    return res


def tree(wh: str, name: str) -> dict[str, int]:
    root = Path(wh, f"{DB}.db", name)
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def dt(t: Any, partition: bytes) -> str:
    return binary_row.deserialize(partition, t.schema.partition_types)[0]


def write_op(wh: str, name: str, rows: list[dict[str, Any]], staged: bool) -> dict[str, Any]:
    return {"op": "write", "warehouse": wh, "db": DB, "table": name, "postpone_fixed_bucket": not staged,
            "rows": [{k: encode_value(v) for k, v in r.items()} for r in rows]}


@pytest.fixture(scope="module")
def peer_wh(pypaimon: PyPaimon, tmp_path_factory: pytest.TempPathFactory) -> str:
    wh = str(tmp_path_factory.mktemp("peer-postpone-compact-wh"))
    pypaimon.build_tables(wh, DB, COLUMNS, KEYS, ["dt"], TABLES)
    return wh


@pytest.fixture
def wh(peer_wh: str, tmp_path: Path) -> str:
    dst = tmp_path / "wh"
    shutil.copytree(peer_wh, dst)
    return str(dst)


# --------------------------------------------------------------------------------------
# (a) pypaimon stages, we compact, pypaimon reads


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TABLES))
def test_compact_moves_staged_rows_into_real_buckets(pypaimon: PyPaimon, wh: str, name: str) -> None:
    assert canon(pypaimon.read(wh, DB, name)) == canon(expected(name, compacted=False))
    staged = [e for e in live(wh, name) if e.bucket == -2]
    assert staged and all(STAGED_NAME.match(e.file.file_name) for e in staged)
    known = {e.partition: e.total_buckets for e in live(wh, name) if e.bucket >= 0}
    plan = json.loads(cli(wh, "compact", f"{DB}.{name}", "--plan", "-o", "json").stdout)
    assert {r["bucket"] for r in plan} == {-2}

    cli(wh, "compact", f"{DB}.{name}")
    t = table_of(wh, name)
    snap = t.snapshot_manager.latest_snapshot()
    assert snap.id == len(TABLES[name][1]) + 1 and snap.commit_kind == "COMPACT"
    after = live(wh, name)
    assert all(e.bucket >= 0 for e in after)
    default = int(TABLES[name][0].get("postpone.default-bucket-num", "1"))
    for e in after:  # known partitions keep their layout; new ones take the default (or 1)
        assert e.total_buckets == known.get(e.partition, default), e
    # the ONE COMPACT snapshot deleted every staged file and added the real-bucket files
    delta = FileStoreScan(t).delta(snap)
    assert {e.file.file_name for e in delta if e.kind.name == "DELETE" and e.bucket == -2} == {
        e.file.file_name for e in staged}
    want = canon(expected(name, compacted=True))
    assert canon(ours(wh, name)) == want
    assert canon(pypaimon.read(wh, DB, name)) == want
    # nothing is staged any more: a second compaction moves nothing
    res = json.loads(cli(wh, "compact", f"{DB}.{name}", "-o", "json").stdout)
    assert res[0]["snapshot_id"] is None or "moved" not in res[0]["message"]
    # pypaimon keeps writing into the new layout, and reads it with ours
    extra = [_row(1000, "a", "late", "1.00")]
    pypaimon.batch([write_op(wh, name, extra, staged=False)])
    assert canon(pypaimon.read(wh, DB, name)) == canon(ours(wh, name))


@pytest.mark.parametrize("args", [["--partition", "dt=c"], ["--where", "dt = 'c'"], ["--plan", "--partition", "dt=a"],
                                  ["--max-bytes", "1mb"], ["--max-buckets", "1"]])
def test_compact_selection_and_budgets_refused_unchanged(wh: str, args: list[str]) -> None:
    """Java's Flink and Spark postpone compactions take no partitions or predicate (and have no
    budgets): the table is compacted as a whole, so a selection is refused, exit 1."""
    before = tree(wh, "dedup")
    res = cli(wh, "compact", f"{DB}.dedup", *args, code=1)
    assert "postpone-bucket" in res.stderr and "as Java" in res.stderr, res.stderr
    assert tree(wh, "dedup") == before


def _layout(wh: str, name: str) -> list[tuple[Any, ...]]:
    t = table_of(wh, name)
    return sorted((dt(t, e.partition), e.bucket, e.total_buckets, e.file.level, e.file.row_count,
                   e.file.min_sequence_number, e.file.max_sequence_number) for e in live(wh, name))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dedup", "agg"])
def test_spark_engine_compacts_as_the_local_engine(pypaimon: PyPaimon, wh: str, tmp_path: Path, name: str) -> None:
    """Java's Spark postpone compaction: one task per partition with staged files, one commit
    on the driver -- the same files, sequence numbers and rows as in-process."""
    pytest.importorskip("pyspark")
    local = str(tmp_path / "local")
    shutil.copytree(wh, local)
    cli(local, "compact", f"{DB}.{name}", "--engine", "local")
    res = json.loads(cli(wh, "compact", f"{DB}.{name}", "--engine", "spark", "--spark-master", "local[2]",
                         "-o", "json").stdout)[0]
    assert res["engine"] == "spark" and res["commit_kind"] == "COMPACT", res
    assert not [e for e in live(wh, name) if e.bucket == -2]
    assert _layout(wh, name) == _layout(local, name)
    want = canon(expected(name, compacted=True))
    assert canon(ours(wh, name)) == want
    assert canon(pypaimon.read(wh, DB, name)) == want
    assert len(tree(wh, name)) == len(tree(local, name))  # no file left behind by the tasks


# --------------------------------------------------------------------------------------
# (b) we write into postpone tables (both modes), pypaimon reads


@pytest.mark.slow
def test_staged_write_matches_javas_layout_and_compacts(pypaimon: PyPaimon, wh: str, tmp_path: Path) -> None:
    ident = f"{DB}.dedup"
    before = {e.file.file_name for e in live(wh, "dedup")}
    src = tmp_path / "rows.csv"
    src.write_text("id,dt,name,amount\n3,a,ours3,3.33\n40,a,ours40,4.00\n3,a,ours3-again,3.34\n50,d,ours50,5.00\n")
    cli(wh, "write", ident, str(src), "--option", "postpone.batch-write-fixed-bucket=false")
    new = [e for e in live(wh, "dedup") if e.file.file_name not in before]
    assert new and all(e.bucket == -2 and e.total_buckets == -2 and e.file.level == 0 for e in new)
    user = table_of(wh, "dedup").snapshot_manager.latest_snapshot().commit_user
    for e in new:  # Java's postpone writer: Avro, no value stats, the writer-prefixed name
        assert STAGED_NAME.match(e.file.file_name) and f"-u-{user}-s-" in e.file.file_name
        assert e.file.value_stats_cols == () or list(e.file.value_stats_cols) == []
        assert e.file.min_sequence_number == e.file.max_sequence_number == -1
    assert sum(e.file.row_count for e in new) == 4  # neither merged nor sorted
    # invisible until compacted, for pypaimon and for us
    assert canon(pypaimon.read(wh, DB, "dedup")) == canon(ours(wh, "dedup")) == canon(
        expected("dedup", compacted=False))
    cli(wh, "compact", ident)
    # our staged rows were written last: replayed after pypaimon's, in our input order
    acc = {tuple(x[k] for k in KEYS): x for x in expected("dedup", compacted=True)}
    for r in [_row(3, "a", "ours3", "3.33"), _row(40, "a", "ours40", "4.00"), _row(3, "a", "ours3-again", "3.34"),
              _row(50, "d", "ours50", "5.00")]:
        _merge("dedup", acc, r)
    want = canon(list(acc.values()))
    assert canon(ours(wh, "dedup")) == want
    assert canon(pypaimon.read(wh, DB, "dedup")) == want


def test_fixed_bucket_write_uses_each_partitions_bucket_number(pypaimon: PyPaimon, wh: str, tmp_path: Path) -> None:
    ident = f"{DB}.partial"
    known = {e.partition: e.total_buckets for e in live(wh, "partial") if e.bucket >= 0}
    before = {e.file.file_name for e in live(wh, "partial")}
    src = tmp_path / "rows.csv"
    src.write_text("id,dt,name,amount\n0,a,,7.00\n5,a,ours5,5.00\n6,z,ours6,6.00\n")
    cli(wh, "write", ident, str(src))  # postpone.batch-write-fixed-bucket defaults to true
    snap = table_of(wh, "partial").snapshot_manager.latest_snapshot()
    assert snap.commit_kind == "APPEND"
    new = [e for e in live(wh, "partial") if e.file.file_name not in before]
    assert new and all(e.bucket >= 0 for e in new)
    for e in new:
        assert e.total_buckets == known.get(e.partition, 3), e  # new partition: postpone.default-bucket-num
    # visible at once, merged through partial-update, for pypaimon as for us
    rows = ours(wh, "partial")
    by_key = {(r["dt"], r["id"]): r for r in rows}
    assert by_key[("a", 0)]["name"] == "r0" and by_key[("a", 0)]["amount"] == Decimal("7.00")
    assert by_key[("z", 6)]["name"] == "ours6"
    assert canon(pypaimon.read(wh, DB, "partial")) == canon(rows)
    # pypaimon's own fixed-bucket write agrees on the layout of the partition we created
    pypaimon.batch([write_op(wh, "partial", [_row(7, "z", "peer7", "7.00")], staged=False)])
    totals = {e.total_buckets for e in live(wh, "partial") if e.bucket >= 0 and e.file.file_name not in before
              and e.partition == new[-1].partition}
    assert len(totals) == 1
    assert canon(pypaimon.read(wh, DB, "partial")) == canon(ours(wh, "partial"))


def test_fixed_bucket_write_into_a_table_we_created(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    cli(wh, "create", f"{DB}.mine", "--schema", "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING",
        "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=-2")
    src = tmp_path / "rows.csv"
    src.write_text("id,dt,v\n1,a,x\n2,a,y\n3,b,z\n1,a,x2\n")
    cli(wh, "write", f"{DB}.mine", str(src))
    assert {e.total_buckets for e in live(wh, "mine")} == {1}  # nothing staged, no default: one bucket
    rows = [{"id": 1, "dt": "a", "v": "x2"}, {"id": 2, "dt": "a", "v": "y"}, {"id": 3, "dt": "b", "v": "z"}]
    assert canon(ours(wh, "mine")) == canon(rows) == canon(pypaimon.read(wh, DB, "mine"))


# --------------------------------------------------------------------------------------
# (c) rescale


def test_rescale_rewrites_real_buckets_and_keeps_staged_files(pypaimon: PyPaimon, wh: str) -> None:
    ident = f"{DB}.dedup"
    staged = {e.file.file_name for e in live(wh, "dedup") if e.bucket == -2}
    res = cli(wh, "rescale", ident, "--partition", "dt=a", code=4)
    assert "--bucket-num" in res.stderr
    cli(wh, "rescale", ident, "--partition", "dt=a", "--bucket-num", "4")
    t = table_of(wh, "dedup")
    assert t.schema.bucket == -2 and t.snapshot_manager.latest_snapshot().commit_kind == "OVERWRITE"
    after = live(wh, "dedup")
    assert {e.file.file_name for e in after if e.bucket == -2} == staged  # Java keeps the staged files
    a = next(e.partition for e in after if dt(t, e.partition) == "a")
    assert {e.total_buckets for e in after if e.bucket >= 0 and e.partition == a} == {4}
    assert canon(ours(wh, "dedup")) == canon(expected("dedup", compacted=False))
    assert canon(pypaimon.read(wh, DB, "dedup")) == canon(ours(wh, "dedup"))
    # the staged rows of dt=a now go into the partition's 4 buckets
    cli(wh, "compact", ident)
    assert {e.total_buckets for e in live(wh, "dedup") if e.partition == a} == {4}
    want = canon(expected("dedup", compacted=True))
    assert canon(ours(wh, "dedup")) == want == canon(pypaimon.read(wh, DB, "dedup"))


# --------------------------------------------------------------------------------------
# crash safety


def test_failed_compaction_leaves_the_table_as_it_was(wh: str, monkeypatch: pytest.MonkeyPatch) -> None:
    before = tree(wh, "dedup")
    sid = table_of(wh, "dedup").snapshot_manager.latest_snapshot().id

    def broken_commit(*args: Any, **kw: Any) -> Any:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(postpone_compact.FileStoreCommit, "commit", broken_commit)
    cli(wh, "compact", f"{DB}.dedup", code=1)
    assert tree(wh, "dedup") == before
    monkeypatch.undo()

    orig = postpone_compact.run_local
    calls: list[int] = []

    def run_then_fail(*args: Any, **kw: Any) -> Any:
        done = orig(*args, **kw)  # the replayed buckets are compacted, then an executor dies
        calls.append(1)
        raise UnitsFailed(OSError("executor lost"), done)

    monkeypatch.setattr(postpone_compact, "run_local", run_then_fail)
    cli(wh, "compact", f"{DB}.dedup", "--full", code=1)  # --full: every written bucket is compacted
    assert calls and tree(wh, "dedup") == before
    monkeypatch.undo()
    assert table_of(wh, "dedup").snapshot_manager.latest_snapshot().id == sid


def test_a_commit_landing_during_compaction_fails_it(wh: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "late.csv"
    src.write_text("id,dt,name,amount\n3,a,late3,9.00\n")
    orig = postpone_compact.commit_postponed

    def write_first(*args: Any, **kw: Any) -> Any:
        cli(str(wh), "write", f"{DB}.dedup", str(src))  # a fixed-bucket append into dt=a
        return orig(*args, **kw)

    monkeypatch.setattr(postpone_compact, "commit_postponed", write_first)
    before_write = tree(wh, "dedup")
    with pytest.raises(CommitConflict, match="the compaction did not see it"):
        from paimon_cli.core.compact.job import compact_table

        compact_table(table_of(wh, "dedup"))
    added = set(tree(wh, "dedup")) - set(before_write)
    # only the concurrent write's data files remain (the replay's are deleted); nothing staged moved
    new_data = {p for p in added if "/bucket-" in p}
    entries = live(wh, "dedup")
    assert {Path(p).name for p in new_data} == {e.file.file_name for e in entries
                                                  if e.file.file_name not in str(before_write)}
    assert len(new_data) == 1 and any(e.bucket == -2 for e in entries)
    assert table_of(wh, "dedup").snapshot_manager.latest_snapshot().commit_kind == "APPEND"


def test_a_conflict_after_spark_tasks_deletes_every_file_they_wrote(wh: str, tmp_path: Path) -> None:
    """The Spark path commits without the tasks' writers: the outcome's own file lists must
    let the driver delete everything the tasks wrote (replay and bucket compaction)."""
    t = table_of(wh, "dedup")
    plan = postpone_compact.plan_postponed(t, live(wh, "dedup"), live(wh, "dedup"))
    base = t.snapshot_manager.latest_snapshot()
    outs = [postpone_compact.replay(table_of(wh, "dedup"), [p], "u1", True)[1] for p in plan]
    out = postpone_compact.PostponeOutcome.merged(outs)
    written = [*out.written, *(p for r in out.results for p in r.written)]
    assert written and all(Path(p.removeprefix("file:")).exists() for p in written)
    src = tmp_path / "late.csv"
    src.write_text("id,dt,name,amount\n3,a,late3,9.00\n")
    cli(wh, "write", f"{DB}.dedup", str(src))  # lands in dt=a after the plan
    with pytest.raises(CommitConflict):
        postpone_compact.commit_postponed(t, None, out, base, "u1")
    assert not [p for p in written if Path(p.removeprefix("file:")).exists()]
    assert any(e.bucket == -2 for e in live(wh, "dedup"))
