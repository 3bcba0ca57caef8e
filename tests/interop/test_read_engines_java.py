"""`read` returns exactly what Java Paimon 0.9 returns for tables Java wrote, for every merge engine.

Why: test_read_java.py covers the shared ``java_tables`` warehouse (deduplicate, append, DV,
dynamic bucket, nested); test_merge_java.py checks core.mergetree.merge_function against Java on raw
records. This module closes the gap between the two: Java writes tables with every merge
engine (deduplicate + ignore-delete, partial-update in all its variants, a wide aggregation
table with retractions, first-row, user sequence fields, DV tables compacted by Java,
write-only tables with many level-0 runs) in several commits of overlapping keys with
+I/-U/+U/-D row kinds, and OUR whole read path (``TableRead``: scan, level-0 skip, deletion
vectors, merge, drop deletes) must return the rows Java's ``ReadBuilder`` returns -- at every
snapshot, so both the latest and earlier ones (including those before and after Java's own
compactions, where the files of a bucket span several LSM levels).

Java 0.9 vs 1.x: our merge follows Java 1.x where it extends 0.9 (see core/mergetree/merge_function.py).
The data below avoids the cases where 0.9 itself differs or breaks, each noted in place:
* keys whose FIRST record is a retraction (partial-update / aggregation);
* blank (empty) listagg strings;
* partial-update.remove-record-on-delete with an insert AFTER the -D of a key (0.9 sets its
  row to null on -D and then fails with a NullPointerException on the next insert);
* ``sequence.field.sort-order`` does not exist in 0.9 (only ascending can be compared).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.table.file_store_table import TimeTravel

from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
Rows = list[dict[str, Any]]
Commit = tuple[Rows, "list[str] | None"]


# ---------------------------------------------------------------------------------- helpers


def _plain(v: Any) -> Any:
    """One JSON-able form for Java's converted values and pyarrow's ``to_pylist`` values."""
    if isinstance(v, tuple):
        v = list(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, decimal.Decimal):
        return f"D:{v}"
    if isinstance(v, (dt.datetime, dt.date)):
        return f"T:{v.isoformat()}"
    if isinstance(v, bytes):
        return f"B:{v.hex()}"
    if isinstance(v, float) and v == int(v) and abs(v) < 2**53:
        return f"F:{v!r}"  # keep 1.0 apart from 1 after JSON
    return v


def _canon(rows: Rows, fix: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> list[str]:
    out = []
    for r in rows:
        r = {k: v for k, v in r.items() if k != "_row_kind"}
        if fix is not None:
            r = fix(dict(r))
        out.append(json.dumps(_plain(r), sort_keys=True))
    return sorted(out)


def _ours(wh: str, name: str, sid: int | None = None) -> Rows:
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    at = None if sid is None else TimeTravel(snapshot_id=sid)
    return TableRead(table, at).to_arrow().to_pylist()


def _snapshot_ids(wh: str, name: str) -> list[int]:
    return FileSystemCatalog(wh).get_table(f"{DB}.{name}").snapshot_manager.snapshot_ids()


def _assert_same(jp: JavaPaimon, wh: str, name: str, sid: int | None = None,
                 fix: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> Rows:
    """Our read == Java's read at ``sid`` (latest when None); returns our rows."""
    java = jp.read(wh, DB, name, sid)
    ours = _ours(wh, name, sid)
    assert len(ours) == len(java), f"{name}@{sid}: {len(ours)} rows, Java {len(java)}"
    assert _canon(ours, fix) == _canon(java, fix), f"{name} at snapshot {sid}"
    return ours


def _assert_every_snapshot(jp: JavaPaimon, wh: str, name: str,
                           fix: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
    ids = _snapshot_ids(wh, name)
    assert len(ids) >= 2
    for sid in ids:
        _assert_same(jp, wh, name, sid, fix)
    _assert_same(jp, wh, name, None, fix)


def _by(rows: Rows, *keys: str) -> dict[Any, dict[str, Any]]:
    return {tuple(r[k] for k in keys) if len(keys) > 1 else r[keys[0]]: r for r in rows}


def _create(jp: JavaPaimon, wh: str, name: str, cols: Sequence[tuple[str, str]], pk: Sequence[str],
            options: dict[str, str], partition: Sequence[str] = ()) -> None:
    jp.create_table(wh, DB, name, cols, list(pk), list(partition), {"file.format": "parquet", **options})


def _write_all(jp: JavaPaimon, wh: str, name: str, cols: Sequence[tuple[str, str]], commits: list[Commit]) -> list[int]:
    ids = []
    for rows, kinds in commits:
        full = [{c: r.get(c) for c, _ in cols} for r in rows]
        ids.append(jp.write(wh, DB, name, full, kinds))
    return ids


@pytest.fixture
def wh(tmp_path: Path) -> str:
    return str(tmp_path / "wh")


# ---------------------------------------------------------------------------------- deduplicate

DEDUP_COLS = [("k", "INT"), ("p", "STRING"), ("a", "STRING"), ("b", "BIGINT"), ("d", "DECIMAL(12, 3)")]


def _dedup_commits() -> list[Commit]:
    def row(k: int, p: str, v: int) -> dict[str, Any]:
        return {"k": k, "p": p, "a": None if v % 5 == 0 else f"a{k}-{v}", "b": k * 100 + v,
                "d": decimal.Decimal(f"{k}.{v:03d}")}

    c1 = [row(k, p, 1) for k in range(1, 11) for p in ("x", "y")]
    c2 = [row(2, "x", 2), row(3, "x", 2), row(4, "y", 2), row(11, "x", 2)]
    c3 = [row(2, "x", 3), row(5, "x", 3), row(6, "y", 3), row(3, "x", 3), row(12, "y", 3)]
    c4 = [row(7, "x", 4), row(2, "x", 4), row(8, "y", 4), row(13, "x", 4)]
    return [(c1, None), (c2, ["-U", "+U", "-D", "+I"]), (c3, ["+U", "-D", "-D", "+U", "+I"]),
            (c4, ["-D", "+U", "-U", "+I"])]


def test_deduplicate_ignore_delete_equals_java(java_paimon: JavaPaimon, wh: str) -> None:
    """-U/-D rows are dropped: every key of commit 1 survives, updated by the +U/+I rows."""
    _create(java_paimon, wh, "t", DEDUP_COLS, ["k", "p"], {"bucket": "2", "ignore-delete": "true"}, ["p"])
    _write_all(java_paimon, wh, "t", DEDUP_COLS, _dedup_commits())
    _assert_every_snapshot(java_paimon, wh, "t")
    java_paimon.compact(wh, DB, "t", full=True)
    ours = _assert_same(java_paimon, wh, "t")
    by = _by(ours, "k", "p")
    assert len(ours) == 23  # 20 + keys 11, 12, 13; no deletes applied
    assert by[(2, "x")]["b"] == 204 and by[(4, "y")]["b"] == 401 and by[(5, "x")]["b"] == 501


@pytest.mark.parametrize("key", ["first-row.ignore-delete", "deduplicate.ignore-delete", "partial-update.ignore-delete"])
def test_ignore_delete_fallback_key_read_and_compact_equal_java(java_paimon: JavaPaimon, wh: str, key: str) -> None:
    """0.9's fallback keys of ``ignore-delete`` are ``ignore-delete`` (Java's ``Options``): a
    table whose -U/-D rows were written before the key was set reads with them ignored, our
    full compaction drops them, and the main key, when present, wins over a fallback key."""
    from paimon_cli.core.api import Warehouse

    for name, options in (("t", {}), ("m", {"ignore-delete": "false"})):
        _create(java_paimon, wh, name, DEDUP_COLS, ["k", "p"], {"bucket": "2", **options}, ["p"])
        _write_all(java_paimon, wh, name, DEDUP_COLS, _dedup_commits())
        java_paimon.alter_table(wh, DB, name, [{"set": {key: "true"}}])  # Java refuses to alter ignore-delete itself
    deleted = len(_assert_same(java_paimon, wh, "m"))  # the main key wins: -D rows applied
    assert len(_assert_same(java_paimon, wh, "t")) == 23 > deleted  # 20 + keys 11, 12, 13; -D rows ignored
    Warehouse(wh).table(f"{DB}.t").compact(full=True)
    assert len(_assert_same(java_paimon, wh, "t")) == 23


# ---------------------------------------------------------------------------------- partial-update

PU_COLS = [("k", "INT"), ("a", "STRING"), ("b", "BIGINT"), ("c", "DOUBLE"), ("d", "DATE")]


def _pu_commits(with_retract: bool) -> list[Commit]:
    day = dt.date(2024, 2, 1)
    c1 = [{"k": k, "a": f"a{k}", "b": None if k % 3 == 0 else k, "c": None, "d": day} for k in range(1, 9)]
    c2 = [{"k": 1, "a": None, "b": 10, "c": 1.5}, {"k": 2, "a": "a2-u"}, {"k": 3, "b": 30, "d": day.replace(day=9)},
          {"k": 9, "a": "a9"}]
    c3 = [{"k": 1, "a": "a1-u", "c": None}, {"k": 4, "b": 40, "c": 4.25}, {"k": 5, "a": "a5-x"},
          {"k": 6, "c": 6.5}]
    c4 = [{"k": 2, "b": 22}, {"k": 7, "a": "a7-u"}, {"k": 10, "a": "a10", "b": 100}]
    kinds3 = ["+U", "-U", "-D", "+I"] if with_retract else None
    kinds4 = ["+U", "-D", "+I"] if with_retract else None
    return [(c1, None), (c2, None), (c3, kinds3), (c4, kinds4)]


def test_partial_update_equals_java(java_paimon: JavaPaimon, wh: str) -> None:
    _create(java_paimon, wh, "t", PU_COLS, ["k"], {"bucket": "2", "merge-engine": "partial-update"})
    _write_all(java_paimon, wh, "t", PU_COLS, _pu_commits(False))
    _assert_every_snapshot(java_paimon, wh, "t")
    java_paimon.compact(wh, DB, "t", full=True)
    extra = [{"k": 1, "b": 11}, {"k": 11, "a": "a11"}]
    _write_all(java_paimon, wh, "t", PU_COLS, [(extra, None)])  # level 0 over the compacted level 5
    ours = _assert_same(java_paimon, wh, "t")
    _assert_same(java_paimon, wh, "t", _snapshot_ids(wh, "t")[-2])
    by = _by(ours, "k")
    assert (by[1]["a"], by[1]["b"], by[1]["c"]) == ("a1-u", 11, 1.5)
    assert (by[3]["b"], by[3]["d"]) == (30, dt.date(2024, 2, 9))


def test_partial_update_ignore_delete_equals_java(java_paimon: JavaPaimon, wh: str) -> None:
    _create(java_paimon, wh, "t", PU_COLS, ["k"],
            {"bucket": "1", "merge-engine": "partial-update", "ignore-delete": "true"})
    _write_all(java_paimon, wh, "t", PU_COLS, _pu_commits(True))
    _assert_every_snapshot(java_paimon, wh, "t")
    java_paimon.compact(wh, DB, "t", full=True)
    by = _by(_assert_same(java_paimon, wh, "t"), "k")
    assert by[4]["b"] == 4 and by[5]["a"] == "a5" and by[7]["a"] == "a7"  # retractions ignored


def test_partial_update_remove_record_on_delete_equals_java(java_paimon: JavaPaimon, wh: str) -> None:
    """-D removes the whole row, -U is ignored. Every -D is the LAST record of its key: Java 0.9
    nulls its row on -D and then throws on a later insert of the same key (fixed in 1.x)."""
    _create(java_paimon, wh, "t", PU_COLS, ["k"],
            {"bucket": "2", "merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"})
    c1 = [{"k": k, "a": f"a{k}", "b": k} for k in range(1, 9)]
    c2 = [{"k": 1, "c": 1.5}, {"k": 2, "a": None, "b": 20}, {"k": 3, "a": "a3-u"}]
    c3 = [{"k": 2, "a": "ignored"}, {"k": 3}, {"k": 4, "d": dt.date(2024, 1, 4)}, {"k": 5}]
    c4 = [{"k": 6, "b": 66}, {"k": 7}]
    _write_all(java_paimon, wh, "t", PU_COLS,
               [(c1, None), (c2, None), (c3, ["-U", "-D", "+U", "-D"]), (c4, ["-U", "-D"])])
    _assert_every_snapshot(java_paimon, wh, "t")
    java_paimon.compact(wh, DB, "t", full=True)
    by = _by(_assert_same(java_paimon, wh, "t"), "k")
    assert sorted(by) == [1, 2, 4, 6, 8]
    assert (by[2]["a"], by[2]["b"]) == ("a2", 20) and by[6]["b"] == 6


SG_COLS = [("k", "INT"), ("a", "STRING"), ("b", "STRING"), ("g1", "INT"), ("c", "STRING"), ("s", "BIGINT"),
           ("mx", "INT"), ("lst", "STRING"), ("g2a", "INT"), ("g2b", "INT"), ("e", "STRING")]


def test_partial_update_sequence_groups_equals_java(java_paimon: JavaPaimon, wh: str) -> None:
    """Group g1 guards a,b; the two-field group (g2a, g2b) guards c, lst and the aggregated s/mx
    (sum, max with ignore-retract); e has no group (last non-null).
    Order-dependent aggregates such as listagg inside a group are refused by paimon-cli
    (NotYetSupported), so none is used here."""
    opts = {"bucket": "2", "merge-engine": "partial-update",
            "fields.g1.sequence-group": "a,b", "fields.g2a,g2b.sequence-group": "c,s,mx,lst",
            "fields.s.aggregate-function": "sum", "fields.mx.aggregate-function": "max",
            "fields.mx.ignore-retract": "true"}
    _create(java_paimon, wh, "t", SG_COLS, ["k"], opts)

    def g2(a: int, b: int) -> dict[str, Any]:
        return {"g2a": a, "g2b": b}

    c1 = [{"k": k, "a": f"a{k}", "b": f"b{k}", "g1": 1, "c": f"c{k}", "s": k, "mx": k, "lst": f"l{k}",
           **g2(1, 1), "e": "e1"} for k in range(1, 8)]
    c2 = [{"k": 1, "a": "a1-old", "g1": 0, "c": "c1-new", "s": 10, "mx": 0, "lst": "n", **g2(1, 2)},
          {"k": 2, "a": "a2-new", "b": None, "g1": 3, "e": "e2"},
          {"k": 3, "c": "c3-stale", "s": 5, "mx": 50, "lst": "o", **g2(0, 9)},  # older group: only aggregates
          {"k": 4, "c": "c4-x", "s": 7, "mx": 9, "lst": "x", **g2(2, 0)}]
    c3 = [{"k": 5, "a": "a5", "b": "b5", "g1": 1},  # retract group 1 at the same sequence
          {"k": 6, "c": "c6", "s": 6, "mx": 6, "lst": "z", **g2(0, 5)},  # older retract: aggregates retract
          {"k": 4, "a": "a4-late", "g1": 2, "c": "c4-y", "s": 1, "mx": 1, "lst": "y", **g2(1, 9)},
          {"k": 7, "c": "c7", "s": 3, **g2(3, 0)}]  # retract group 2 at a newer sequence
    c4 = [{"k": 2, "a": "a2-newest", "g1": 4, "s": 100, **g2(1, 1)}, {"k": 8, "a": "a8", "g1": 1, "e": "e8"},
          # a key's ONLY record is returned as written (Java's ReducerMergeFunctionWrapper never calls
          # the merge function for it), so a/b survive although their sequence field g1 is NULL
          {"k": 9, "a": "a9", "b": "b9", "c": "c9", "e": "e9"}]
    _write_all(java_paimon, wh, "t", SG_COLS,
               [(c1, None), (c2, None), (c3, ["-U", "-D", "+U", "-D"]), (c4, None)])
    _assert_every_snapshot(java_paimon, wh, "t")
    java_paimon.compact(wh, DB, "t", full=True)
    by = _by(_assert_same(java_paimon, wh, "t"), "k")
    assert (by[1]["a"], by[1]["c"], by[1]["s"], by[1]["lst"]) == ("a1", "c1-new", 11, "n")
    assert (by[3]["c"], by[3]["s"], by[3]["mx"]) == ("c3", 8, 50)
    assert (by[5]["a"], by[5]["b"]) == (None, None)
    assert by[6]["s"] == 0 and by[7]["c"] is None
    assert (by[9]["a"], by[9]["b"], by[9]["c"]) == ("a9", "b9", "c9")


# ---------------------------------------------------------------------------------- aggregation

AGG_COLS = [("k", "INT"), ("p", "STRING"), ("s", "BIGINT"), ("sd", "DECIMAL(12, 2)"), ("sf", "DOUBLE"),
            ("pr", "BIGINT"), ("mx", "STRING"), ("mxd", "DATE"), ("mn", "INT"), ("mnd", "DECIMAL(8, 3)"),
            ("lv", "STRING"), ("lnn", "INT"), ("la", "STRING"), ("ba", "BOOLEAN"), ("bo", "BOOLEAN"),
            ("fv", "STRING"), ("fnn", "STRING"), ("col", "ARRAY<STRING>"), ("cold", "ARRAY<INT>"),
            ("mm", "MAP<STRING, INT>"), ("dflt", "STRING")]
AGG_FUNCS = {"s": "sum", "sd": "sum", "sf": "sum", "pr": "product", "mx": "max", "mxd": "max", "mn": "min",
             "mnd": "min", "lv": "last_value", "lnn": "last_non_null_value", "la": "listagg",
             "ba": "bool_and", "bo": "bool_or", "fv": "first_value", "fnn": "first_non_null_value",
             "col": "collect", "cold": "collect", "mm": "merge_map"}
# Java 0.9 can retract these; the rest need ignore-retract when retractions are written.
RETRACTABLE = {"s", "sd", "sf", "lv", "lnn", "dflt"}


def _agg_row(k: int, p: str, v: int) -> dict[str, Any]:
    return {"k": k, "p": p, "s": v * 1000 + k, "sd": decimal.Decimal(f"{v}.{k:02d}"), "sf": v * 0.5,
            "pr": 2 if v % 2 else 3, "mx": f"m{v % 7}", "mxd": dt.date(2024, 1, 1) + dt.timedelta(days=v * 3 % 11),
            "mn": (v * 7) % 13 - 6, "mnd": None if v % 4 == 0 else decimal.Decimal(f"-{v}.5"),
            "lv": None if v % 4 == 0 else f"l{v}", "lnn": None if v % 3 == 0 else v,
            "la": f"x{v}",  # never blank: Java 0.9 and 1.x join blank strings differently
            "ba": v % 3 != 0, "bo": v % 5 == 0, "fv": None if v == 1 else f"f{v}", "fnn": None if v < 3 else f"n{v}",
            "col": [f"e{v}", "e0"], "cold": [v % 3, 1], "mm": {f"k{v % 2}": v, "z": -v},
            "dflt": None if v % 2 else f"d{v}"}


def _agg_fix(r: dict[str, Any]) -> dict[str, Any]:
    """Java's distinct collect goes through a hash set and map order is not data."""
    if r.get("cold") is not None:
        r["cold"] = sorted(r["cold"])
    if r.get("mm") is not None:
        r["mm"] = sorted([list(x) for x in r["mm"]], key=repr)
    return r


@pytest.mark.parametrize("with_retract", [False, True], ids=["inserts", "retractions"])
def test_aggregation_equals_java(java_paimon: JavaPaimon, wh: str, with_retract: bool) -> None:
    """A wide aggregation table, partitioned, 2 buckets, commits before AND after a Java
    compaction (reads merge level-5 and level-0 files); retractions are never the first
    record of a key (0.9 and 1.x treat that case differently)."""
    opts = {"bucket": "2", "merge-engine": "aggregation", "fields.cold.distinct": "true",
            "fields.la.list-agg-delimiter": "|", **{f"fields.{c}.aggregate-function": f for c, f in AGG_FUNCS.items()}}
    if with_retract:
        opts.update({f"fields.{c}.ignore-retract": "true" for c in AGG_FUNCS if c not in RETRACTABLE})
    _create(java_paimon, wh, "t", AGG_COLS, ["k", "p"], opts, ["p"])
    c1 = [_agg_row(k, p, k) for k in range(1, 9) for p in ("x", "y")]
    c2 = [_agg_row(k, "x", k + 3) for k in (1, 2, 3, 4)] + [_agg_row(9, "y", 2)]
    c3 = [_agg_row(1, "x", 7), _agg_row(2, "x", 5), _agg_row(4, "y", 1), _agg_row(5, "x", 6), _agg_row(9, "y", 4)]
    c4 = [_agg_row(1, "x", 9), _agg_row(3, "x", 3), _agg_row(6, "y", 8), _agg_row(20, "y", 5)]
    kinds3 = ["-U", "+U", "-D", "+I", "-U"] if with_retract else None
    # (20, y) has a -D as its ONLY record: Java returns it unmerged and the read drops it
    kinds4 = ["+I", "-D", "-U", "-D"] if with_retract else None
    _write_all(java_paimon, wh, "t", AGG_COLS, [(c1, None), (c2, None)])
    java_paimon.compact(wh, DB, "t", full=True)
    _write_all(java_paimon, wh, "t", AGG_COLS, [(c3, kinds3), (c4, kinds4)])
    _assert_every_snapshot(java_paimon, wh, "t", _agg_fix)
    java_paimon.compact(wh, DB, "t", full=True)
    by = _by(_assert_same(java_paimon, wh, "t", fix=_agg_fix), "k", "p")
    # a lone record is never aggregated: the distinct collect of (7, y) keeps its duplicate 1
    assert by[(7, "y")]["cold"] == [1, 1]
    if with_retract:
        assert (20, "y") not in by
        assert by[(1, "x")]["s"] == 1001 + 4001 - 7001 + 9001 and by[(1, "x")]["lv"] == "l9"
        assert by[(1, "x")]["la"] == "x1|x4|x9"  # the retraction is ignored
    else:
        assert by[(1, "x")]["s"] == 1001 + 4001 + 7001 + 9001
        assert by[(1, "x")]["la"] == "x1|x4|x7|x9" and by[(1, "x")]["fv"] is None


# ---------------------------------------------------------------------------------- first-row


def test_first_row_equals_java(java_paimon: JavaPaimon, wh: str) -> None:
    """Java makes first-row rows visible only through compaction (level 0 is skipped): it
    compacts on every commit; deletes are dropped with ignore-delete."""
    _create(java_paimon, wh, "t", DEDUP_COLS, ["k", "p"],
            {"bucket": "2", "merge-engine": "first-row", "ignore-delete": "true"}, ["p"])
    _write_all(java_paimon, wh, "t", DEDUP_COLS, _dedup_commits())
    _assert_every_snapshot(java_paimon, wh, "t")
    java_paimon.compact(wh, DB, "t", full=True)
    by = _by(_assert_same(java_paimon, wh, "t"), "k", "p")
    assert len(by) == 23 and by[(2, "x")]["b"] == 201 and by[(11, "x")]["b"] == 1102


def test_first_row_write_only_then_compacted(java_paimon: JavaPaimon, wh: str) -> None:
    """write-only: level-0 files pile up invisible to both readers until Java compacts."""
    _create(java_paimon, wh, "t", DEDUP_COLS, ["k", "p"],
            {"bucket": "1", "merge-engine": "first-row", "write-only": "true", "ignore-delete": "true"}, ["p"])
    commits = _dedup_commits()

    def compact() -> None:
        # the harness finds buckets to compact through a read plan, which skips level 0 here
        for p in ("x", "y"):
            java_paimon.compact(wh, DB, "t", partition={"p": p}, bucket=0, full=True)

    _write_all(java_paimon, wh, "t", DEDUP_COLS, commits[:2])
    assert _assert_same(java_paimon, wh, "t") == []
    compact()
    assert len(_assert_same(java_paimon, wh, "t")) == 21
    _write_all(java_paimon, wh, "t", DEDUP_COLS, commits[2:])
    _assert_every_snapshot(java_paimon, wh, "t")
    compact()
    by = _by(_assert_same(java_paimon, wh, "t"), "k", "p")
    assert len(by) == 23 and by[(2, "x")]["b"] == 201


# ---------------------------------------------------------------------------------- sequence.field

SEQ_COLS = [("k", "INT"), ("v", "STRING"), ("ts", "BIGINT"), ("ts2", "INT"), ("n", "INT")]


def _seq_commits() -> list[Commit]:
    c1 = [{"k": k, "v": f"v{k}-1", "ts": 10, "ts2": 5, "n": k} for k in range(1, 9)]
    c2 = [{"k": 1, "v": "v1-older", "ts": 9, "ts2": 9},  # older ts: loses
          {"k": 2, "v": "v2-newer", "ts": 11, "ts2": 0},  # newer ts: wins
          {"k": 3, "v": "v3-tie-newer2", "ts": 10, "ts2": 6},  # tie on ts, newer ts2
          {"k": 4, "v": "v4-tie-older2", "ts": 10, "ts2": 4},  # tie on ts, older ts2
          {"k": 5, "v": "v5-same", "ts": 10, "ts2": 5},  # full tie: the later write wins
          {"k": 9, "v": "v9", "ts": 1, "ts2": 1}]
    c3 = [{"k": 6, "v": "v6-del-old", "ts": 3, "ts2": 0},  # delete with an older ts: ignored
          {"k": 7, "v": "v7-del", "ts": 20, "ts2": 0},  # delete with a newer ts: removes
          {"k": 2, "v": "v2-stale", "ts": 10, "ts2": 99},
          {"k": 8, "v": "v8-u", "ts": 12, "ts2": 1}]
    c4 = [{"k": 1, "v": "v1-newest", "ts": 30, "ts2": 0}, {"k": 9, "v": "v9-null-ts", "ts": None, "ts2": 7}]
    return [(c1, None), (c2, None), (c3, ["-D", "-D", "+U", "+U"]), (c4, None)]


@pytest.mark.parametrize("fields", ["ts", "ts,ts2"])
def test_sequence_field_equals_java(java_paimon: JavaPaimon, wh: str, fields: str) -> None:
    """User sequence fields decide the winner, across commits and against deletes; a NULL
    sequence value sorts first. (0.9 has no ``sequence.field.sort-order``: ascending only.)"""
    _create(java_paimon, wh, "t", SEQ_COLS, ["k"], {"bucket": "2", "sequence.field": fields})
    _write_all(java_paimon, wh, "t", SEQ_COLS, _seq_commits())
    _assert_every_snapshot(java_paimon, wh, "t")
    java_paimon.compact(wh, DB, "t", full=True)
    by = _by(_assert_same(java_paimon, wh, "t"), "k")
    assert by[1]["v"] == "v1-newest" and by[2]["v"] == "v2-newer" and 7 not in by and by[6]["v"] == "v6-1"
    assert by[9]["v"] == "v9"  # NULL ts is older than ts=1
    if fields == "ts,ts2":
        assert (by[3]["v"], by[4]["v"]) == ("v3-tie-newer2", "v4-1")


def test_sequence_field_with_partial_update_equals_java(java_paimon: JavaPaimon, wh: str) -> None:
    _create(java_paimon, wh, "t", SEQ_COLS, ["k"],
            {"bucket": "1", "sequence.field": "ts", "merge-engine": "partial-update"})
    commits = [([{"k": k, "v": f"v{k}", "ts": 10, "n": k} for k in range(1, 6)], None),
               ([{"k": 1, "v": "old", "ts": 5, "n": None}, {"k": 2, "v": None, "ts": 11, "n": 22},
                 {"k": 3, "ts": 10, "n": 33}], None),
               ([{"k": 1, "n": 111, "ts": 1}, {"k": 4, "v": "v4-new", "ts": 12}], None)]
    _write_all(java_paimon, wh, "t", SEQ_COLS, commits)
    _assert_every_snapshot(java_paimon, wh, "t")


# ---------------------------------------------------------------------------------- deletion vectors


def test_dv_table_commits_and_java_compactions(java_paimon: JavaPaimon, wh: str) -> None:
    """A partitioned DV table: Java compacts after every write (DV tables compact on commit);
    then write-only commits add invisible level-0 files; then a non-full compaction produces
    deletion vectors against the upper levels; then a full one. Deletes throughout."""
    cols = [("id", "INT"), ("dt", "STRING"), ("name", "STRING"), ("v", "BIGINT"), ("amt", "DECIMAL(20, 4)")]
    _create(java_paimon, wh, "t", cols, ["id", "dt"],
            {"bucket": "2", "deletion-vectors.enabled": "true"}, ["dt"])

    def row(i: int, d: str, ver: int) -> dict[str, Any]:
        return {"id": i, "dt": d, "name": None if i % 6 == 0 else f"n{i}-{ver}", "v": i * 10 + ver,
                "amt": decimal.Decimal(f"{i}.{ver:04d}")}

    d1, d2 = "2024-01-01", "2024-01-02"
    commits: list[Commit] = [
        ([row(i, d, 1) for i in range(1, 31) for d in (d1, d2)], None),
        ([row(i, d1, 2) for i in range(1, 6)] + [row(7, d2, 2), row(8, d2, 2)], None),
        ([row(3, d1, 3), row(4, d1, 3), row(9, d2, 3), row(31, d1, 3)], ["-D", "-U", "+U", "+I"]),
    ]
    _write_all(java_paimon, wh, "t", cols, commits)
    java_paimon.alter_table(wh, DB, "t", [{"set": {"write-only": "true"}}])
    _write_all(java_paimon, wh, "t", cols, [
        ([row(i, d2, 4) for i in range(10, 16)], None),
        ([row(1, d1, 5), row(10, d2, 5), row(12, d2, 5)], ["-D", "-D", "+U"]),
    ])
    _assert_every_snapshot(java_paimon, wh, "t")
    java_paimon.compact(wh, DB, "t", full=False)
    _assert_same(java_paimon, wh, "t")
    _write_all(java_paimon, wh, "t", cols, [([row(2, d1, 6), row(11, d2, 6)], ["-D", "+U"])])
    java_paimon.compact(wh, DB, "t", full=False)
    _assert_every_snapshot(java_paimon, wh, "t")
    table = FileSystemCatalog(wh).get_table(f"{DB}.t")
    assert any(e.index_file.index_type == "DELETION_VECTORS"
               for e in _index_entries(table)), "Java wrote no deletion vectors: the test lost its point"
    java_paimon.compact(wh, DB, "t", full=True)
    ours = _by(_assert_same(java_paimon, wh, "t"), "id", "dt")
    # -D and -U both retract a deduplicate row
    assert not {(1, d1), (2, d1), (3, d1), (4, d1), (10, d2)} & set(ours)
    assert ours[(12, d2)]["v"] == 125 and ours[(11, d2)]["v"] == 116 and ours[(9, d2)]["v"] == 93


def _index_entries(table: Any) -> list[Any]:
    from paimon_cli.core.io.paths import manifest_dir
    from paimon_cli.core.manifest.index_manifest import IndexManifestFile

    snap = table.snapshot_manager.latest_snapshot()
    if snap.index_manifest is None:
        return []
    return IndexManifestFile(table.file_io, manifest_dir(table.path)).read(snap.index_manifest)


# ---------------------------------------------------------------------------------- write-only, many runs


class _Dedup:
    """The deduplicate engine in plain Python: the expected table after each commit."""

    def __init__(self) -> None:
        self.state: dict[tuple[Any, ...], dict[str, Any]] = {}

    def apply(self, rows: Rows, kinds: list[str] | None) -> None:
        for i, r in enumerate(rows):
            key = (r["id"], r["dt"])
            if kinds is not None and kinds[i] in ("-U", "-D"):
                self.state.pop(key, None)
            else:
                self.state[key] = dict(r)


WO_COLS = [("id", "INT"), ("dt", "STRING"), ("name", "STRING"), ("qty", "BIGINT"), ("price", "DECIMAL(10, 2)"),
           ("score", "DOUBLE"), ("ok", "BOOLEAN")]


def _wo_commits() -> list[Commit]:
    def row(i: int, d: str, ver: int) -> dict[str, Any]:
        return {"id": i, "dt": d, "name": f"n{i}-v{ver}", "qty": i * 1000 + ver,
                "price": decimal.Decimal(f"{i * 3 + ver}.{ver:02d}"), "score": i * 0.25 + ver,
                "ok": (i + ver) % 2 == 0}

    d1, d2 = "a", "b"
    out: list[Commit] = [([row(i, d, 1) for i in range(1, 21) for d in (d1, d2)], None)]
    for ver in range(2, 8):
        ids = [(ver * 3 + j * 5) % 24 + 1 for j in range(5)]
        rows = [row(i, d1 if (i + ver) % 2 else d2, ver) for i in ids]
        kinds = [("+I", "-U", "+U", "-D", "+U")[(i + ver) % 5] for i in ids]
        out.append((rows, kinds))
    return out


def test_write_only_many_level0_runs_then_full_compaction(java_paimon: JavaPaimon, wh: str) -> None:
    """7 write-only commits stack 7+ level-0 sorted runs per bucket (nothing compacts them);
    reads merge them all. Then a full compaction and two more commits on top of level 5."""
    _create(java_paimon, wh, "t", WO_COLS, ["id", "dt"], {"bucket": "2", "write-only": "true"}, ["dt"])
    model = _Dedup()
    for rows, kinds in _wo_commits():
        sid = java_paimon.write(wh, DB, "t", rows, kinds)
        model.apply(rows, kinds)
        ours = _assert_same(java_paimon, wh, "t", sid)
        assert _canon(ours) == _canon(list(model.state.values()))
    table = FileSystemCatalog(wh).get_table(f"{DB}.t")
    plan = TableRead(table).plan()
    assert max(len(s.files) for s in plan.splits) >= 5 and all(f.level == 0 for s in plan.splits for f in s.files)
    _assert_every_snapshot(java_paimon, wh, "t")

    java_paimon.compact(wh, DB, "t", full=True)
    _assert_same(java_paimon, wh, "t")
    more = [([{"id": 1, "dt": "a", "name": "late", "qty": 1, "price": decimal.Decimal("1.00"), "score": 1.0,
               "ok": True}, {"id": 2, "dt": "b", "qty": None}], ["+U", "-D"]),
            ([{"id": 3, "dt": "a", "name": None, "qty": 3, "price": None, "score": None, "ok": None}], None)]
    for rows, kinds in more:
        full = [{c: r.get(c) for c, _ in WO_COLS} for r in rows]
        java_paimon.write(wh, DB, "t", full, kinds)
        model.apply(full, kinds)
    ours = _assert_same(java_paimon, wh, "t")
    assert _canon(ours) == _canon(list(model.state.values()))
    levels = {f.level for s in TableRead(FileSystemCatalog(wh).get_table(f"{DB}.t")).plan().splits for f in s.files}
    assert levels == {0, 5}
    _assert_every_snapshot(java_paimon, wh, "t")
    _assert_cli_json_equals_java(java_paimon, wh, "t", None)
    _assert_cli_json_equals_java(java_paimon, wh, "t", 4)


def _assert_cli_json_equals_java(jp: JavaPaimon, wh: str, name: str, sid: int | None) -> None:
    """``paimon-cli read -o json`` in a subprocess == Java's rows through the same JSON renderer."""
    from paimon_cli.output import to_json_value

    args = [sys.executable, "-m", "paimon_cli", "read", f"{DB}.{name}", "-w", wh, "-o", "json"]
    if sid is not None:
        args += ["--snapshot", str(sid)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)
    java = [{k: to_json_value(v) for k, v in r.items() if k != "_row_kind"} for r in jp.read(wh, DB, name, sid)]
    assert cli and [list(r) for r in cli][0] == [c for c, _ in WO_COLS]

    def key(r: dict[str, Any]) -> str:
        return json.dumps(r, sort_keys=True)

    assert sorted(map(key, cli)) == sorted(map(key, java))
