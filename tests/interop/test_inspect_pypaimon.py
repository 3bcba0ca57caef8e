"""`inspect` of tables written by pypaimon 2.1 agrees with pypaimon's own system tables.

pypaimon 2.1 writes the newer manifest layout (``_TOTAL_BUCKETS``, ``_WRITE_COLS``,
``_WRITE_COLS_SEQUENCES``, ``writerVersion`` in snapshots), so reading its tables back checks
that we cope with a writer other than Java. For every table of ``pypaimon_tables`` (and the
branch ``b1``) and every system table both sides have, our rows must equal pypaimon's on the
columns both have.

We render values as Java does; pypaimon 2.1 sometimes renders them its own way. Each such
difference is mapped *precisely* below, one function per difference, saying why; nothing is
dropped. Where pypaimon's value is lossy (sub-second creation times) we compare against the
truncated value and, in a separate test, check our exact value against the manifest files
themselves (read with fastavro, independent of our reader).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.system.registry import SYSTEM_TABLES
from paimon_cli.core.utils.rows import Rows
from tests.files_oracle import assert_same_files
from tests.interop.pypaimon_fixtures import PyPaimonTables
from tests.interop.pypaimon_peer import PyPaimon, SystemRows

pytestmark = pytest.mark.pypaimon

# our kind -> pypaimon 2.1's system table name (it has no statistics / aggregation_fields)
KINDS = {
    "snapshots": "snapshots",
    "schemas": "schemas",
    "options": "options",
    "files": "files",
    "manifests": "manifests",
    "partitions": "partitions",
    "buckets": "buckets",
    "tags": "tags",
    "branches": "branches",
    "consumers": "consumers",
    "table-indexes": "table_indexes",
}

# Columns pypaimon 2.1 has and we do not. Pinned, so a new gap (or a rename on either side)
# fails here instead of silently shrinking the comparison.
PEER_ONLY: dict[str, set[str]] = {
    "snapshots": set(),
    "partitions": {"created_at", "created_by", "updated_by", "options", "total_buckets", "done",
                   "deleted_record_count"},
    "table-indexes": {"row_range_start", "row_range_end", "index_field_id", "index_field_name"},
}

# Both sides list these in a defined order (ascending id); the rest compare as multisets.
ORDERED = {"snapshots", "schemas"}


@dataclass(frozen=True)
class Target:
    """One table (or branch) of the pypaimon warehouse."""

    table: str
    branch: str | None
    path: str           # table root: data and manifests live here even for a branch
    partitioned: bool
    non_empty: frozenset[str]  # kinds that must have rows, so no comparison is vacuous

    @property
    def id(self) -> str:
        return self.table + (f"$branch_{self.branch}" if self.branch else "")

    @property
    def snapshot_dir(self) -> Path:
        root = Path(self.path)
        return (root / "branch" / f"branch-{self.branch}" if self.branch else root) / "snapshot"


def _targets(t: PyPaimonTables) -> list[Target]:
    data = {"snapshots", "schemas", "files", "manifests", "partitions", "buckets"}
    return [
        Target(t.pk_table, None, t.pk_table_path, True,
               frozenset(data | {"options", "tags", "branches", "consumers"})),
        Target(t.append_table, None, t.append_table_path, False, frozenset(data)),
        Target(t.pk_table, t.branch, t.pk_table_path, True,
               frozenset(data | {"options", "tags", "branches"})),
    ]


TARGET_IDS = ["pk_orders", "events", "pk_orders$branch_b1"]


# ---------------------------------------------------------------------------- mappings
# pypaimon value -> the value we (like Java) render. Each raises on input it has no exact
# mapping for, so a new kind of value fails loudly instead of comparing by accident.


def _java_scalar(v: Any) -> str:
    """A JSON scalar as Java's String.valueOf prints the same internal value."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, str)):
        return str(v)
    raise AssertionError(f"no exact mapping for pypaimon value {v!r}; extend the test")


def peer_partition(value: str | None, target: Target) -> str:
    """pypaimon prints a partition Hive-style, ``dt=2024-01-01`` (``k=v`` joined by ``/``);
    Java prints ``Arrays.toString`` of the values, ``[2024-01-01]``. Unpartitioned: pypaimon
    None, Java ``[]``."""
    if value is None:
        assert not target.partitioned, "pypaimon gave no partition for a partitioned table"
        return "[]"
    values = []
    for part in value.split("/"):
        name, sep, v = part.partition("=")
        assert sep and name, f"not a Hive partition spec: {value!r}"
        values.append(v)
    return "[" + ", ".join(values) + "]"


def peer_key(value: str | None) -> str | None:
    """pypaimon prints min/max key as a JSON list (``[1,2]``); Java ``Arrays.toString``
    (``[1, 2]``)."""
    if value is None:
        return None
    return "[" + ", ".join(_java_scalar(v) for v in json.loads(value)) + "]"


def peer_stats(value: str | None) -> str | None:
    """pypaimon prints stats as a JSON object in stats-row order (``{"id":null,...}``); Java
    prints a TreeMap, sorted by column name (``{amount=null, day=null, ...}``)."""
    if value is None:
        return None
    obj = json.loads(value)
    return "{" + ", ".join(f"{k}={_java_scalar(obj[k])}" for k in sorted(obj)) + "}"


def peer_file_path(name: str, row: dict[str, Any], target: Target) -> str:
    """pypaimon 2.1 shows the bare data file name; Java 1.x (and we) the full path
    ``<table>/<partition dirs>/bucket-<n>/<name>``. pypaimon's Hive partition text is that
    directory verbatim (no partition value here needs Hive escaping)."""
    assert "/" not in name, name
    parts = [target.path, *([row["partition"]] if row["partition"] else []),
             f"bucket-{row['bucket']}", name]
    return "/".join(parts)


FILE_SOURCES = {"0": "APPEND", "1": "COMPACT"}


def peer_file_source(value: str | None) -> str | None:
    """pypaimon prints ``str()`` of the FileSource byte (``"0"``); Java the enum name."""
    return None if value is None else FILE_SOURCES[value]


def peer_empty_partition_stats(value: str | None, target: Target) -> str | None:
    """Unpartitioned table: pypaimon casts the empty partition row to ``"{}"`` (as Java 1.x
    does); Java 0.9, which we follow (see test_inspect_java, table dv_t), shows null."""
    if target.partitioned:
        return value
    assert value == "{}", value
    return None


def peer_options_json(value: str) -> dict[str, str]:
    """pypaimon keeps the options' file order; Java (and we) print a HashMap's order. Key
    order of a JSON object carries no meaning, so both sides compare parsed."""
    return json.loads(value)


PEER_MAPS: dict[tuple[str, str], Callable[[Any, dict[str, Any], Target], Any]] = {
    ("files", "partition"): lambda v, row, t: peer_partition(v, t),
    ("files", "file_path"): peer_file_path,
    ("files", "min_key"): lambda v, row, t: peer_key(v),
    ("files", "max_key"): lambda v, row, t: peer_key(v),
    ("files", "null_value_counts"): lambda v, row, t: peer_stats(v),
    ("files", "min_value_stats"): lambda v, row, t: peer_stats(v),
    ("files", "max_value_stats"): lambda v, row, t: peer_stats(v),
    ("files", "file_source"): lambda v, row, t: peer_file_source(v),
    ("manifests", "min_partition_stats"): lambda v, row, t: peer_empty_partition_stats(v, t),
    ("manifests", "max_partition_stats"): lambda v, row, t: peer_empty_partition_stats(v, t),
    ("partitions", "partition"): lambda v, row, t: peer_partition(v, t),
    ("buckets", "partition"): lambda v, row, t: peer_partition(v, t),
    ("table-indexes", "partition"): lambda v, row, t: peer_partition(v, t),
    ("schemas", "options"): lambda v, row, t: peer_options_json(v),
    ("files", "creation_time"): lambda v, row, t: peer_shifted_wall_clock(v),
    ("buckets", "last_update_time"): lambda v, row, t: peer_shifted_wall_clock(v),
}


# ours -> the same rendering as pypaimon's (timestamps become isoformat strings, which is
# how the peer hands its timestamps over).


def ours_instant_as_utc(v: dt.datetime | None) -> str | None:
    """Epoch-millis instants (commit/update/create times): Java and we show the machine's
    local wall clock; pypaimon shows the instant in UTC. Converting ours local -> UTC is
    exact (the test machine is UTC anyway, where this is the identity)."""
    if v is None:
        return None
    return v.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat()


# pypaimon 2.1's DataFileMeta.creation_time_epoch_millis (behind $files.creation_time and
# $buckets.last_update_time) is provably wrong twice over: it goes through
# time.mktime(timetuple()), which drops the milliseconds, and off UTC it shifts the wall
# clock by twice the machine's UTC offset. On a UTC machine (ours) the truncation is its
# only error, so we compare with ours floored to the second; elsewhere the pair is not
# comparable. In both cases test_creation_times_match_manifest_files checks our exact value
# against the manifest files.
UTC_MACHINE = time.localtime().tm_gmtoff == 0
NOT_COMPARABLE_OFF_UTC = "<off UTC: checked against the manifest files only>"


def ours_wall_clock_to_seconds(v: dt.datetime | None) -> str | None:
    if not UTC_MACHINE:
        return NOT_COMPARABLE_OFF_UTC
    return None if v is None else v.replace(microsecond=0).isoformat()


def peer_shifted_wall_clock(v: str | None) -> str | None:
    return v if UTC_MACHINE else NOT_COMPARABLE_OFF_UTC


OURS_MAPS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("snapshots", "commit_time"): ours_instant_as_utc,
    ("schemas", "update_time"): ours_instant_as_utc,
    ("tags", "commit_time"): ours_instant_as_utc,
    # a tag's create time is a local wall clock that pypaimon turns into an instant
    ("tags", "create_time"): ours_instant_as_utc,
    ("branches", "create_time"): ours_instant_as_utc,
    ("files", "creation_time"): ours_wall_clock_to_seconds,
    ("buckets", "last_update_time"): ours_wall_clock_to_seconds,
    # $partitions.last_update_time: pypaimon keeps the wall clock's milliseconds -> identity
    ("schemas", "options"): json.loads,  # see peer_options_json
}


def _plain(v: Any) -> Any:
    return v.isoformat() if isinstance(v, (dt.datetime, dt.date)) else v


def _canon(rows: list[list[Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def targets(pypaimon_tables: PyPaimonTables) -> dict[str, Target]:
    out = {t.id: t for t in _targets(pypaimon_tables)}
    assert list(out) == TARGET_IDS
    return out


@pytest.fixture(scope="module")
def peer_rows(pypaimon: PyPaimon, pypaimon_tables: PyPaimonTables,
              targets: dict[str, Target]) -> dict[tuple[str, str], SystemRows]:
    """Every (target, kind) as pypaimon reads it, in one driver run (its import costs ~1 s)."""
    t = pypaimon_tables
    keys = [(tid, kind) for tid in targets for kind in KINDS]
    ops = [{"op": "system_table", "warehouse": t.warehouse, "db": t.db,
            "table": targets[tid].table, "branch": targets[tid].branch, "name": KINDS[kind]}
           for tid, kind in keys]
    results = pypaimon.batch(ops, stop_on_error=False)
    assert len(results) == len(ops)
    out = {}
    for key, res in zip(keys, results, strict=True):
        assert res["ok"], f"pypaimon {key}: {res.get('traceback')}"
        r = res["result"]
        out[key] = SystemRows(r["columns"], r["types"], r["rows"])
    return out


@pytest.fixture(scope="module")
def catalog(pypaimon_tables: PyPaimonTables) -> FileSystemCatalog:
    return FileSystemCatalog(pypaimon_tables.warehouse)


def _ours(catalog: FileSystemCatalog, pypaimon_tables: PyPaimonTables, target: Target, kind: str) -> Rows:
    table = catalog.get_table(f"{pypaimon_tables.db}.{target.table}", target.branch)
    return SYSTEM_TABLES[kind](table, None)


# ---------------------------------------------------------------------------- tests


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("tid", TARGET_IDS)
def test_system_table_equals_pypaimon(peer_rows, catalog, pypaimon_tables, targets,
                                      tid: str, kind: str) -> None:
    target = targets[tid]
    peer = peer_rows[(tid, kind)]
    ours = _ours(catalog, pypaimon_tables, target, kind)

    assert set(peer.columns) - set(ours.columns) == PEER_ONLY.get(kind, set())
    common = [c for c in peer.columns if c in ours.columns]

    peer_norm = [[PEER_MAPS.get((kind, c), lambda v, row, t: v)(r[c], r, target) for c in common]
                 for r in peer.rows]
    ours_norm = [[OURS_MAPS.get((kind, c), _plain)(r[c]) for c in common] for r in ours.rows]

    if kind in target.non_empty:
        assert ours_norm, f"{tid} {kind}: expected rows"
    if kind in ORDERED:
        assert ours_norm == peer_norm
    else:
        assert _canon(ours_norm) == _canon(peer_norm)


def _avro(path: Path) -> list[dict[str, Any]]:
    import fastavro

    with path.open("rb") as f:
        return list(fastavro.reader(f))


def _live_raw_files(target: Target) -> dict[str, dict[str, Any]]:
    """``_FILE`` records of the latest snapshot's live files, read straight from the Avro
    manifests (fastavro, not our reader): file name -> record (with ``_BUCKET`` added)."""
    ids = [int(p.name.split("-", 1)[1]) for p in target.snapshot_dir.glob("snapshot-*")]
    snap = json.loads((target.snapshot_dir / f"snapshot-{max(ids)}").read_text())
    manifest_dir = Path(target.path) / "manifest"
    added: dict[str, dict[str, Any]] = {}
    deleted: set[str] = set()
    for lst in (snap["baseManifestList"], snap["deltaManifestList"]):
        for meta in _avro(manifest_dir / lst):
            for e in _avro(manifest_dir / meta["_FILE_NAME"]):
                name = e["_FILE"]["_FILE_NAME"]
                if e["_KIND"] == 0:
                    added[name] = {**e["_FILE"], "_BUCKET": e["_BUCKET"]}
                else:
                    deleted.add(name)
    return {n: f for n, f in added.items() if n not in deleted}


@pytest.mark.parametrize("tid", TARGET_IDS)
def test_columnar_files_equal_the_object_path(catalog, pypaimon_tables, targets, tid: str) -> None:
    """``files`` / ``partitions`` / ``buckets`` on the columnar path: the rows (and order)
    the object path gave for pypaimon 2.1's tables."""
    target = targets[tid]
    assert_same_files(catalog.get_table(f"{pypaimon_tables.db}.{target.table}", target.branch))


@pytest.mark.parametrize("tid", TARGET_IDS)
def test_creation_times_match_manifest_files(catalog, pypaimon_tables, targets, tid: str) -> None:
    """Where pypaimon drops the milliseconds, ours must equal ``_CREATION_TIME`` exactly."""
    target = targets[tid]
    raw = _live_raw_files(target)
    # fastavro decodes timestamp-millis as an aware UTC datetime; the field holds a wall clock
    wall = {n: f["_CREATION_TIME"].replace(tzinfo=None) for n, f in raw.items()}
    # a file written exactly on a whole second has no milliseconds (1 in 1000): the fixture
    # only needs some sub-second times for the equality below to prove they are kept
    assert any(w.microsecond for w in wall.values()), "fixture should have sub-second times"

    files = _ours(catalog, pypaimon_tables, target, "files").rows
    assert {r["file_path"].rsplit("/", 1)[-1]: r["creation_time"] for r in files} == wall

    newest: dict[tuple[str, int], dt.datetime] = {}
    for r in files:
        key = (r["partition"], r["bucket"])
        newest[key] = max(newest.get(key, dt.datetime.min), wall[r["file_path"].rsplit("/", 1)[-1]])
    buckets = _ours(catalog, pypaimon_tables, target, "buckets").rows
    assert {(r["partition"], r["bucket"]): r["last_update_time"] for r in buckets} == newest


@pytest.mark.parametrize("tid", TARGET_IDS)
def test_all_null_stats_are_what_the_manifest_says(catalog, pypaimon_tables, targets, tid: str) -> None:
    """pypaimon 2.1 writes no value stats (``_VALUE_STATS_COLS = []``), so both sides show
    every column's stats as null; check that against the files rather than trust agreement."""
    target = targets[tid]
    raw = _live_raw_files(target)
    assert raw and all(f["_VALUE_STATS_COLS"] == [] for f in raw.values())
    table = catalog.get_table(f"{pypaimon_tables.db}.{target.table}", target.branch)
    all_null = "{" + ", ".join(f"{n}=null" for n in sorted(table.schema.field_names)) + "}"
    for r in _ours(catalog, pypaimon_tables, target, "files").rows:
        assert r["null_value_counts"] == r["min_value_stats"] == r["max_value_stats"] == all_null
