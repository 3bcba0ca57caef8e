"""Lookup-mode compaction (deletion vectors, changelog-producer lookup / full-compaction,
first-row) against Java Paimon 0.9.

Why: in these tables compaction is what makes data visible (DV and first-row readers skip
level 0) and what produces the changelog streaming consumers read. So for the same input
our compaction must leave a table Java reads identically, and must write the changelog
Java's own compaction writes. Each scenario builds one table (written by Java with
``write-only``, or by us), copies the warehouse, compacts one copy with Java
(``java_paimon.compact``) and the other with ours (plan with compact_strategy.pick_unit,
run with compact_task.run_merge_tree_unit, one COMPACT commit), and compares:

* Java's batch read of both copies, and a Python model of the expected rows;
* the changelog of the compaction snapshot as a Java streaming consumer reads it
  (tests/interop/java/ChangelogReadHelper.java: ``scan.mode=from-snapshot``), as multisets;
* afterwards Java keeps writing and compacting our copy and still reads the model's rows.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.manifest.index_manifest import DELETION_VECTORS_INDEX
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.scan import FileStoreScan

from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
COLS = [("id", "INT"), ("dt", "STRING"), ("v", "BIGINT"), ("s", "STRING")]
PK = ["id", "dt"]
Rows = list[dict[str, Any]]
KIND_BYTES = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}


# ---------------------------------------------------------------------------- our compaction


def our_compact(wh: str, name: str, full: bool) -> int | None:
    """Compact every bucket the way the compaction job does; one COMPACT commit. -> snapshot id."""
    from paimon_cli.core.mergetree.compact_strategy import pick_unit
    from paimon_cli.core.mergetree.compact_task import run_merge_tree_unit
    from paimon_cli.core.mergetree.levels import Levels, key_function

    t = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    snap = t.snapshot_manager.latest_snapshot()
    groups: dict[tuple[bytes, int], list[Any]] = {}
    for e in FileStoreScan(t).plan(snap):
        groups.setdefault((e.partition, e.bucket), []).append(e)
    dv_files: dict[tuple[bytes, int], list[Any]] = {}
    for ie in FileStoreScan(t).index_entries(snap):
        if ie.index_file.index_type == DELETION_VECTORS_INDEX:
            dv_files.setdefault((ie.partition, ie.bucket), []).append(ie.index_file)
    key = key_function([t.schema.field(k).type.copy(nullable=False) for k in t.schema.trimmed_primary_keys])
    messages = []
    for (part, bucket), entries in sorted(groups.items()):
        levels = Levels([e.file for e in entries], t.options.num_levels, key)
        idx = dv_files.get((part, bucket), [])
        unit = pick_unit(t.options, levels, full, partition=part, bucket=bucket,
                         total_buckets=entries[0].total_buckets, index_files=idx,
                         dv_files=[m.data_file_name for f in idx for m in (f.dv_ranges or ())])
        if unit is not None:
            messages.append(run_merge_tree_unit(t, unit).commit_message())
    s = FileStoreCommit(t).commit(messages, "COMPACT") if messages else None
    return None if s is None else s.id


def our_write(wh: str, name: str, rows: Rows, kinds: list[str] | None) -> None:
    """Level-0 files written by OUR writer (``write-only``: compaction is left to the test)."""
    from paimon_cli.core.operation import write as w

    t = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    tw = w.TableWrite(t, {"write-only": "true"})
    data = pa.table({"id": pa.array([r["id"] for r in rows], pa.int32()),
                     "dt": pa.array([r["dt"] for r in rows], pa.string()),
                     "v": pa.array([r["v"] for r in rows], pa.int64()),
                     "s": pa.array([r["s"] for r in rows], pa.string())})
    tw.write_arrow(data, None if kinds is None else np.array([KIND_BYTES[k] for k in kinds], np.int8))
    FileStoreCommit(t).commit(tw.prepare_commit(), "APPEND")


# ---------------------------------------------------------------------------- Java side


def java_changelog(jp: JavaPaimon, wh: str, name: str, snapshot_id: int, tmp: Path) -> list[tuple[Any, ...]]:
    helper = jp._gateway.jvm.ChangelogReadHelper
    rows = json.loads(helper.readChangelog(wh, DB, name, snapshot_id, str(tmp)))
    return sorted(tuple(r) for r in rows)


def java_compact(jp: JavaPaimon, wh: str, name: str, full: bool, tmp: Path) -> int:
    """Java compacts every bucket with files (the harness's compact plans from a batch scan,
    which does not see level-0-only buckets of DV / first-row tables)."""
    return int(jp._gateway.jvm.ChangelogReadHelper.compactAll(wh, DB, name, full, str(tmp)))


def java_rows(jp: JavaPaimon, wh: str, name: str) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["dt"], r["v"], r["s"]) for r in jp.read(wh, DB, name, row_kind=False))


def latest(wh: str, name: str) -> int:
    return FileSystemCatalog(wh).get_table(f"{DB}.{name}").snapshot_manager.latest_snapshot_id()


def changelog_records(wh: str, name: str, snapshot_id: int | None) -> list[tuple[Any, ...]]:
    """(kind, seq, id, dt, v, s) of every record in the snapshot's changelog files."""
    from paimon_cli.core.data import binary_row
    from paimon_cli.core.format.arrow_schema import key_value_file_fields
    from paimon_cli.core.format.data_file import read_data_file
    from paimon_cli.core.io import paths

    if snapshot_id is None:
        return []
    t = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    out = []
    for e in FileStoreScan(t).changelog(t.snapshot_manager.snapshot(snapshot_id)):
        prefix = t.options.changelog_file_prefix
        assert e.file.file_name.startswith(prefix) and e.file.file_source == 0
        part = paths.partition_path_for(t.schema, binary_row.deserialize(e.partition, t.schema.partition_types))
        path = paths.data_file_path(t.path, part, e.bucket, e.file.file_name)
        for r in read_data_file(t.file_io, path, key_value_file_fields(t.schema)).to_pylist():
            out.append((r["_VALUE_KIND"], r["_SEQUENCE_NUMBER"], r["id"], r["dt"], r["v"], r["s"]))
    return sorted(out, key=repr)


def deletion_vectors(wh: str, name: str) -> dict[str, list[int]]:
    """Data file name -> deleted positions, from the latest snapshot's DV index files."""
    from paimon_cli.core.index.deletion_vectors import read_deletion_vectors
    from paimon_cli.core.io.paths import index_dir, join

    t = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    out: dict[str, list[int]] = {}
    for f in dv_index_files(wh, name):
        if f.dv_ranges:
            dvs = read_deletion_vectors(t.file_io, join(index_dir(t.path), f.file_name), f.dv_ranges)
            out.update({n: sorted(dv.positions()) for n, dv in dvs.items()})
    return out


def dv_index_files(wh: str, name: str) -> list[Any]:
    t = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    return [e.index_file for e in FileStoreScan(t).index_entries(t.snapshot_manager.latest_snapshot())
            if e.index_file.index_type == DELETION_VECTORS_INDEX]


# ---------------------------------------------------------------------------- models


class Model:
    """Expected rows per key after each commit, for the merge engines used here."""

    def __init__(self, engine: str) -> None:
        self.engine = engine
        self.state: dict[tuple[Any, ...], dict[str, Any]] = {}

    def apply(self, rows: Rows, kinds: list[str] | None) -> None:
        for i, r in enumerate(rows):
            k = (r["id"], r["dt"])
            kind = kinds[i] if kinds else "+I"
            if self.engine == "first-row":
                self.state.setdefault(k, dict(r))
            elif self.engine == "aggregation":  # v: sum, s: last_non_null_value
                old = self.state.get(k)
                sign = -1 if kind in ("-U", "-D") else 1
                if old is None:
                    self.state[k] = {**r, "v": sign * r["v"]}
                else:
                    old["v"] += sign * r["v"]
                    if r["s"] is not None and sign > 0:
                        old["s"] = r["s"]
            elif self.engine == "partial-update":
                old = self.state.setdefault(k, {"id": r["id"], "dt": r["dt"], "v": None, "s": None})
                for c in ("v", "s"):
                    if r[c] is not None:
                        old[c] = r[c]
            elif kind in ("-U", "-D"):
                self.state.pop(k, None)
            else:
                self.state[k] = dict(r)

    def rows(self) -> list[tuple[Any, ...]]:
        return sorted((r["id"], r["dt"], r["v"], r["s"]) for r in self.state.values())


def row(i: int, dt: str, ver: int, engine: str) -> dict[str, Any]:
    s = None if (i + ver) % 5 == 0 else f"s{i}-{ver}"
    v: Any = i * 100 + ver
    if engine == "partial-update" and (i + ver) % 3 == 0:
        v = None
    return {"id": i, "dt": dt, "v": v, "s": s}


def commits(engine: str, deletes: bool) -> list[tuple[Rows, list[str] | None]]:
    """Five commits of overlapping keys over two partitions; deletes / -U where the engine takes them."""
    out: list[tuple[Rows, list[str] | None]] = []
    out.append(([row(i, d, 1, engine) for i in range(600) for d in ("a", "b")], None))
    c2 = [row(i, "a", 2, engine) for i in range(10, 30)] + [row(i, "b", 2, engine) for i in range(35, 45)]
    c2 += [row(i, "a", 2, engine) for i in range(600, 604)]  # new keys
    c2 += [row(100, "a", 1, engine)]  # the stored value again (row-deduplicate: no -U/+U)
    k2 = ["+U"] * len(c2)
    if deletes:
        c2 += [row(i, "a", 1, engine) for i in range(0, 4)]
        k2 += ["-D"] * 4
    out.append((c2, k2 if deletes else None))
    c3 = [row(i, "a", 3, engine) for i in range(20, 26)] + [row(i, "b", 3, engine) for i in range(50, 55)]
    k3 = ["+U"] * len(c3)
    if deletes:
        c3 += [row(i, "b", 1, engine) for i in (5, 6, 36)]
        k3 += ["-D", "-U", "-D"]
    out.append((c3, k3 if deletes else None))
    out.append(([row(i, "a", 4, engine) for i in (1, 2, 22, 660)], None))
    out.append(([row(i, "b", 5, engine) for i in (7, 37, 51, 661)], None))
    return out


# ---------------------------------------------------------------------------- scenario


SCENARIOS: dict[str, tuple[dict[str, str], str, bool]] = {
    # name: (table options, merge engine for the model, deletes)
    "dv": ({"deletion-vectors.enabled": "true"}, "deduplicate", True),
    "dv-lookup": ({"deletion-vectors.enabled": "true", "changelog-producer": "lookup"}, "deduplicate", True),
    "lookup-rowdedup": ({"changelog-producer": "lookup", "changelog-producer.row-deduplicate": "true"},
                        "deduplicate", True),
    "lookup-agg": ({"changelog-producer": "lookup", "merge-engine": "aggregation",
                    "fields.v.aggregate-function": "sum"}, "aggregation", False),
    "dv-lookup-partial": ({"deletion-vectors.enabled": "true", "changelog-producer": "lookup",
                           "merge-engine": "partial-update"}, "partial-update", False),
    "first-row": ({"merge-engine": "first-row", "changelog-producer": "lookup"}, "first-row", False),
    "first-row-nolog": ({"merge-engine": "first-row"}, "first-row", False),
    "dv-agg": ({"deletion-vectors.enabled": "true", "merge-engine": "aggregation",
                "fields.v.aggregate-function": "sum"}, "aggregation", False),
    "full-compaction": ({"changelog-producer": "full-compaction"}, "deduplicate", True),
    # lookup without changelog or DVs: high-level records must not be merged twice
    "force-lookup-agg": ({"force-lookup": "true", "merge-engine": "aggregation",
                          "fields.v.aggregate-function": "sum"}, "aggregation", False),
    # sequence.field: looked-up records take part in the merge order (no model: Java decides)
    "dv-seqfield": ({"deletion-vectors.enabled": "true", "changelog-producer": "lookup",
                     "sequence.field": "v"}, "", True),
}


def _compare_compaction(jp: JavaPaimon, ours_wh: str, java_wh: str, name: str, full: bool, tmp: Path,
                        produces_changelog: bool) -> tuple[list[Any], list[Any]]:
    before = latest(ours_wh, name)
    sid = our_compact(ours_wh, name, full)
    jid = java_compact(jp, java_wh, name, full, tmp)
    assert java_rows(jp, ours_wh, name) == java_rows(jp, java_wh, name)
    ours_log: list[Any] = []
    java_log: list[Any] = []
    if produces_changelog:
        ours_log = java_changelog(jp, ours_wh, name, sid, tmp) if sid is not None else []
        java_log = java_changelog(jp, java_wh, name, jid, tmp) if jid > before else []
        assert ours_log == java_log
        # the files themselves, sequence numbers included (Java's read does not show them)
        assert changelog_records(ours_wh, name, sid) == changelog_records(java_wh, name, jid if jid > before else None)
    # deletion vectors: marks land on files neither compaction rewrote (same names in both
    # copies), at the same positions
    assert deletion_vectors(ours_wh, name) == deletion_vectors(java_wh, name)
    return ours_log, java_log


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_compaction_matches_java(java_paimon: JavaPaimon, tmp_path: Path, scenario: str) -> None:
    options, engine, deletes = SCENARIOS[scenario]
    jp, name = java_paimon, "t"
    wh = str(tmp_path / "ours")
    jp.create_table(wh, DB, name, COLS, PK, ["dt"], {"bucket": "2", "write-only": "true", **options})
    model = Model(engine)
    lookup_changelog = options.get("changelog-producer") == "lookup"
    full_changelog = options.get("changelog-producer") == "full-compaction"
    cs = commits(engine, deletes)
    logs: list[Any] = []

    # commit 1 -> full compaction by Java: everything on the max level in both copies
    jp.write(wh, DB, name, *cs[0])
    model.apply(*cs[0])
    java_compact(jp, wh, name, True, tmp_path)
    # commits 2, 3 stay on level 0; copy the warehouse
    for rows, kinds in cs[1:3]:
        jp.write(wh, DB, name, rows, kinds)
        model.apply(rows, kinds)
    java_wh = str(tmp_path / "java")
    shutil.copytree(wh, java_wh)

    # minor compaction (lookup mode: level 0 forced up, DVs / lookup changelog against level 5)
    logs.append(_compare_compaction(jp, wh, java_wh, name, False, tmp_path, lookup_changelog))
    check_model = bool(engine)
    if check_model:
        assert java_rows(jp, wh, name) == model.rows()
    if engine in ("aggregation", "partial-update"):
        # a full compaction without level-0 files: levels 4 and 5 hold the same keys
        _compare_compaction(jp, wh, java_wh, name, True, tmp_path, lookup_changelog)
        assert java_rows(jp, wh, name) == model.rows()
    if options.get("deletion-vectors.enabled"):
        assert dv_index_files(wh, name), "our minor compaction wrote no deletion vectors"

    # commits 4, 5 (on both copies) then full compaction
    for rows, kinds in cs[3:]:
        jp.write(wh, DB, name, rows, kinds)
        jp.write(java_wh, DB, name, rows, kinds)
        model.apply(rows, kinds)
    logs.append(_compare_compaction(jp, wh, java_wh, name, True, tmp_path, lookup_changelog or full_changelog))
    if check_model:
        assert java_rows(jp, wh, name) == model.rows()
    t = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    assert {e.file.level for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())} == {5}
    if lookup_changelog or full_changelog:
        assert any(ours for ours, _ in logs), "no changelog at all: the scenario lost its point"

    # Java keeps writing and compacting our copy
    extra = [row(i, "a", 9, engine) for i in (3, 23, 700)]
    jp.write(wh, DB, name, extra, None)
    model.apply(extra, None)
    jp.write(java_wh, DB, name, extra, None)
    java_compact(jp, wh, name, False, tmp_path)
    java_compact(jp, wh, name, True, tmp_path)
    java_compact(jp, java_wh, name, False, tmp_path)
    java_compact(jp, java_wh, name, True, tmp_path)
    assert java_rows(jp, wh, name) == java_rows(jp, java_wh, name)
    if check_model:
        assert java_rows(jp, wh, name) == model.rows()


@pytest.mark.parametrize("options", [
    {"deletion-vectors.enabled": "true", "changelog-producer": "lookup"},
    {"merge-engine": "first-row", "changelog-producer": "lookup"},
])
def test_our_level0_files_compacted_like_java(java_paimon: JavaPaimon, tmp_path: Path,
                                              options: dict[str, str]) -> None:
    """Level-0 files written by OUR writer: our compaction and Java's agree (rows and changelog)."""
    jp, name = java_paimon, "t"
    engine = options.get("merge-engine", "deduplicate")
    deletes = engine != "first-row"
    wh = str(tmp_path / "ours")
    jp.create_table(wh, DB, name, COLS, PK, ["dt"], {"bucket": "2", "write-only": "true", **options})
    model = Model(engine)
    cs = commits(engine, deletes)
    our_write(wh, name, *cs[0])
    model.apply(*cs[0])
    our_compact(wh, name, True)
    assert java_rows(jp, wh, name) == model.rows()
    for rows, kinds in cs[1:3]:
        our_write(wh, name, rows, kinds)
        model.apply(rows, kinds)
    java_wh = str(tmp_path / "java")
    shutil.copytree(wh, java_wh)
    ours_log, _ = _compare_compaction(jp, wh, java_wh, name, False, tmp_path, True)
    assert ours_log
    assert java_rows(jp, wh, name) == model.rows()
    _compare_compaction(jp, wh, java_wh, name, True, tmp_path, True)
    assert java_rows(jp, wh, name) == model.rows()


def test_changelog_file_prefix_and_format(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """``changelog-file.prefix`` / ``changelog-file.format`` (1.x options; 0.9 ignores them and
    finds a file's format from its extension): our Avro ``cl-`` changelog reads in Java as the
    Parquet ``changelog-`` files of Java's own compaction."""
    jp, name = java_paimon, "t"
    wh = str(tmp_path / "ours")
    jp.create_table(wh, DB, name, COLS, PK, ["dt"], {
        "bucket": "1", "write-only": "true", "changelog-producer": "lookup", "deletion-vectors.enabled": "true",
        "changelog-file.prefix": "cl-", "changelog-file.format": "avro"})
    cs = commits("deduplicate", True)
    jp.write(wh, DB, name, *cs[0])
    java_compact(jp, wh, name, True, tmp_path)
    for rows, kinds in cs[1:3]:
        jp.write(wh, DB, name, rows, kinds)
    java_wh = str(tmp_path / "java")
    shutil.copytree(wh, java_wh)
    before = latest(wh, name)
    sid = our_compact(wh, name, False)
    jid = java_compact(jp, java_wh, name, False, tmp_path)
    assert sid == jid == before + 1
    t = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    names = [e.file.file_name for e in FileStoreScan(t).changelog(t.snapshot_manager.snapshot(sid))]
    assert names and all(n.startswith("cl-") and n.endswith(".avro") for n in names)
    ours = java_changelog(jp, wh, name, sid, tmp_path)
    assert ours and ours == java_changelog(jp, java_wh, name, jid, tmp_path)
    assert java_rows(jp, wh, name) == java_rows(jp, java_wh, name)
