"""The feature gate (core/table/features.py) and the file kinds 2.x tables hold: refusals by
name before any change; expire, orphan removal and rollback keep every index kind and never
touch Iceberg metadata."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data import binary_row as br
from paimon_cli.core.data.types import DataField, IntType, parse_columns
from paimon_cli.core.errors import NotYetSupported
from paimon_cli.core.manifest.avro import write_avro
from paimon_cli.core.manifest.index_manifest import (
    INDEX_MANIFEST_SCHEMA,
    GlobalIndexMeta,
    IndexFileMeta,
    IndexManifestEntry,
    IndexManifestFile,
    index_entry_to_record,
)
from paimon_cli.core.manifest.manifest import FileKind
from paimon_cli.core.mergetree.commit_message import CommitMessage
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.schema.schema_change import DropColumn, SetOption
from paimon_cli.core.schema.table_schema import Schema, TableSchema
from paimon_cli.core.table.features import (
    ALL_FEATURES,
    COMMITS,
    FEATURES,
    Action,
    check_features,
    check_schema_features,
)
from paimon_cli.core.table.identifiers import Identifier
from tests.core.test_orphans_support import age_all, files_under, make_table, read_rows, reload, write_rows

# (schema tweak, feature name in the message, an action refused, an action allowed)
CASES: list[tuple[dict[str, str], str, Action, Action | None]] = [
    ({"metadata.iceberg.storage": "hive-catalog",
      "metadata.iceberg.hive-client-class": "com.amazonaws.glue.catalog.metastore.AWSCatalogMetastoreClient"},
     "metadata.iceberg.hive-client-class=com.amazonaws.glue.catalog.metastore.AWSCatalogMetastoreClient",
     Action.ROLLBACK, Action.READ),
    ({"metadata.iceberg.storage": "hive-catalog", "metadata.iceberg.hadoop-conf-dir": "/etc/hadoop"},
     "metadata.iceberg.hadoop-conf-dir=/etc/hadoop", Action.WRITE, Action.READ),
    ({"metadata.iceberg.storage": "rest-catalog"}, "metadata.iceberg.storage=rest-catalog", Action.WRITE,
     Action.EXPIRE),
    ({"metadata.iceberg.storage": "table-location", "metadata.iceberg.format-version": "3"},
     "metadata.iceberg.format-version=3", Action.TAG, Action.REMOVE_ORPHAN_FILES),
    ({"metadata.iceberg-compatible": "true", "metadata.iceberg.manifest-compression": "lz4"},
     "metadata.iceberg.manifest-compression=lz4", Action.COMPACT_MANIFEST, Action.READ),
    ({"metadata.iceberg.storage": "hadoop-catalog", "metadata.iceberg.future-knob": "x"},
     "metadata.iceberg.future-knob=x", Action.COMPACT, Action.READ),
    ({"metadata.iceberg-compatible": "true", "row-tracking.enabled": "true", "data-evolution.enabled": "true"},
     "data-evolution.enabled=true with Iceberg metadata", Action.WRITE, Action.EXPIRE),
    ({"type": "format-table"}, "type=format-table", Action.REMOVE_ORPHAN_FILES, None),
    ({"type": "object-table"}, "type=object-table", Action.READ, None),
    ({"chain-table.enabled": "true"}, "chain-table.enabled=true", Action.EXPIRE, None),
    ({"scan.fallback-delta-branch": "delta"}, "scan.fallback-delta-branch=delta", Action.READ, None),
    ({"scan.fallback-branch": "b"}, "scan.fallback-branch=b", Action.READ, Action.WRITE),
    ({"pk-btree.index.columns": "v"}, "pk-btree.index.columns=v", Action.COMPACT, Action.READ),
    ({"blob-field": "v"}, "blob-field=v", Action.WRITE, Action.EXPIRE),
    # .blob files of data-evolution tables are written, compacted, indexed and dropped; rescale refused
    ({"row-tracking.enabled": "true", "data-evolution.enabled": "true", "blob-field": "v"}, "blob-field=v",
     Action.RESCALE, Action.REWRITE_FILE_INDEX),
    ({"row-tracking.enabled": "true", "data-evolution.enabled": "true", "blob-field": "v"}, "blob-field=v",
     Action.REMOVE_UNEXISTING_FILES, Action.EXPIRE_PARTITIONS),
    ({"row-tracking.enabled": "true", "data-evolution.enabled": "true", "blob-view-field": "v"},
     "blob-view-field=v", Action.WRITE, Action.READ),
    ({"file.format": "lance"}, "file.format=lance", Action.READ, Action.EXPIRE),
    ({"vector.file.format": "vortex"}, "vector.file.format=vortex", Action.WRITE, Action.EXPIRE),
    ({"bucket-function.type": "mod"}, "bucket-function.type=mod", Action.RESCALE, Action.READ),
    ({"clustering.incremental": "true"}, "clustering.incremental=true", Action.COMPACT, Action.READ),
    ({"sequence.snapshot-ordering": "true"}, "sequence.snapshot-ordering=true", Action.WRITE, Action.READ),
    ({"deletion-vectors.modifiable": "true"}, "deletion-vectors.modifiable=true", Action.WRITE, Action.READ),
    ({"deletion-vectors.enabled": "true", "deletion-vectors.merge-on-read": "true"},
     "deletion-vectors.merge-on-read=true", Action.READ, Action.COMPACT),
    ({"write.sequence-number-init-mode": "snapshot"}, "write.sequence-number-init-mode=snapshot", Action.WRITE,
     Action.READ),
    ({"fields.m.map.storage-layout": "shared-shredding"}, "fields.m.map.storage-layout=shared-shredding",
     Action.READ, Action.EXPIRE),
]


@pytest.fixture
def append_table(tmp_path: Path) -> Any:
    t = make_table(tmp_path / "wh", pk=False)
    write_rows(t, [(1, "x", "a"), (2, "y", "b")], tmp_path)
    return t


@pytest.mark.parametrize(("options", "found", "refused", "allowed"), CASES)
def test_schema_feature_refused_by_name(append_table: Any, options: dict[str, str], found: str,
                                        refused: Action, allowed: Action | None) -> None:
    base = {**append_table.schema.options, "bucket": "2"} if "bucket-function.type" in options \
        else append_table.schema.options  # the bucket function matters for fixed buckets only
    schema = dataclasses.replace(append_table.schema, options={**base, **options})
    with pytest.raises(NotYetSupported) as e:
        check_schema_features(schema, refused, "db.t")
    msg = str(e.value)
    assert msg.startswith(f"{refused.value} on db.t: {found} (Paimon ") and "\n" not in msg
    if allowed is not None:
        check_schema_features(schema, allowed, "db.t")


def test_every_feature_has_a_case() -> None:
    named = {f.name for f in FEATURES}
    covered = {f.name for f in FEATURES for opts, *_ in CASES
               if f.detect(_schema_with(opts)) is not None}
    # BLOB columns: test_blob_column_refused; Iceberg column types: test_iceberg_column_type_refused
    assert named - {"BLOB", "Iceberg column type"} <= covered


def _schema_with(options: dict[str, str]) -> TableSchema:
    return TableSchema(3, 0, [DataField(0, "id", IntType())], 0, [], [], {"bucket": "2", **options}, None, 0)


def test_blob_column_refused(tmp_path: Path) -> None:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_table("db.b", Schema.of(parse_columns("id INT, doc ARRAY<BLOB>"), options={"bucket": "-1"}))
    t = cat.get_table("db.b")
    for action in (Action.WRITE, Action.COMPACT):
        with pytest.raises(NotYetSupported, match="BLOB column 'doc'"):
            check_features(t, action)
    check_features(t, Action.EXPIRE)
    check_features(t, Action.READ)  # the read refuses the layouts it cannot read itself:
    with pytest.raises(NotYetSupported, match="BLOB"):
        Warehouse(str(tmp_path / "wh")).table("db.b").read()


def test_plain_tables_pass_every_action(append_table: Any) -> None:
    for action in Action:
        check_features(append_table, action)
    # the bucket function does not place rows of bucket-unaware tables
    schema = dataclasses.replace(append_table.schema, options={**append_table.schema.options,
                                                               "bucket-function.type": "mod"})
    check_schema_features(schema, Action.WRITE)


def test_written_iceberg_storages_pass_every_action(append_table: Any) -> None:
    for opts in ({"metadata.iceberg.storage": "table-location"}, {"metadata.iceberg.storage": "hadoop-catalog"},
                 {"metadata.iceberg-compatible": "true", "metadata.iceberg.manifest-compression": "zstd",
                  "metadata.iceberg.uri": "thrift://ignored-unless-hive:9083"}):
        schema = dataclasses.replace(append_table.schema, options={**append_table.schema.options, **opts})
        for action in Action:
            check_schema_features(schema, action)


def test_unwritten_iceberg_storage_refuses_every_commit_only(append_table: Any) -> None:
    schema = dataclasses.replace(append_table.schema, options={**append_table.schema.options,
                                                               "metadata.iceberg.storage": "rest-catalog"})
    for action in Action:
        if action in COMMITS:
            with pytest.raises(NotYetSupported, match="only table-location, hadoop-catalog and hive-catalog"):
                check_schema_features(schema, action)
        else:
            check_schema_features(schema, action)


@pytest.mark.parametrize(("column", "found"), [
    ("ts TIMESTAMP(9)", "column 'ts' of type TIMESTAMP(9)"),
    ("t TIME(6)", "column 't' of type TIME(6)"),
    ("nested ARRAY<ROW<x TIMESTAMP(0)>>", "column 'nested' of type TIMESTAMP(0)"),
])
def test_iceberg_column_type_refused(tmp_path: Path, column: str, found: str) -> None:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_table("db.i", Schema.of(parse_columns(f"id INT, {column}"),
                                       options={"bucket": "-1", "metadata.iceberg.storage": "table-location"}))
    t = cat.get_table("db.i")
    with pytest.raises(NotYetSupported, match=rf"write on db.i: {re.escape(found)} with Iceberg metadata"):
        check_features(t, Action.WRITE)
    check_features(t, Action.READ)
    check_features(t, Action.EXPIRE)


def test_iceberg_column_type_of_an_older_schema_refused(tmp_path: Path) -> None:
    """Java publishes every schema 0..latest, so a dropped column's type still matters."""
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_table("db.i", Schema.of(parse_columns("id INT, ts TIMESTAMP(9)"), options={"bucket": "-1"}))
    cat.alter_table(Identifier.parse("db.i"), [DropColumn("ts")])
    cat.alter_table(Identifier.parse("db.i"), [SetOption("metadata.iceberg.storage", "table-location")])
    with pytest.raises(NotYetSupported, match=r"column 'ts' of type TIMESTAMP\(9\) in schema 0"):
        check_features(cat.get_table("db.i"), Action.COMPACT)


def test_iceberg_commits_to_a_branch_refused(append_table: Any, tmp_path: Path) -> None:
    api = _api(append_table)
    api.create_branch("b1")
    FileSystemCatalog(str(tmp_path / "wh")).alter_table(
        append_table.identifier, [SetOption("metadata.iceberg.storage", "table-location")], "b1")
    branch = Warehouse(str(tmp_path / "wh")).table("db.t", branch="b1").open()
    with pytest.raises(NotYetSupported, match="branch b1 of a table with Iceberg metadata"):
        check_features(branch, Action.WRITE)
    check_features(branch, Action.READ)


def test_iceberg_catalog_location_needs_a_warehouse_database(tmp_path: Path) -> None:
    from paimon_cli.core.table.file_store_table import FileStoreTable
    from paimon_cli.core.table.identifiers import Identifier as Ident

    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_table("db.i", Schema.of(parse_columns("id INT"),
                                       options={"bucket": "-1", "metadata.iceberg.storage": "hadoop-catalog"}))
    t = cat.get_table("db.i")
    moved = tmp_path / "elsewhere" / "i"
    moved.parent.mkdir()
    Path(t.path).rename(moved)
    other = FileStoreTable.load(t.file_io, str(moved), Ident.parse("db.i"))
    with pytest.raises(NotYetSupported, match="needs a Paimon warehouse database"):
        check_features(other, Action.WRITE)


# -- global / unknown index kinds --------------------------------------------------------------


def _global_index_file(t: Any, name: str, rows: int = 3) -> IndexFileMeta:
    path = Path(t.path) / "index" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"BTREE" * 10)  # content is opaque to us: only the name matters
    return IndexFileMeta("btree", name, path.stat().st_size, rows,
                         global_index=GlobalIndexMeta(0, rows - 1, 0, None, b"\x01", None))


def _commit_index(t: Any, add: list[IndexFileMeta], delete: list[IndexFileMeta] | None = None) -> int:
    part = br.serialize(["x"], [t.schema.logical_partition_type.fields[0].type])
    msg = CommitMessage(part, 0, 2, new_index_files=add, deleted_index_files=delete or [])
    snap = FileStoreCommit(t).commit([msg])
    assert snap is not None
    return snap.id


@pytest.fixture
def pk_table(tmp_path: Path) -> Any:
    t = make_table(tmp_path / "wh")
    write_rows(t, [(1, "x", "a"), (2, "y", "b")], tmp_path)
    write_rows(t, [(1, "x", "a2"), (3, "x", "c")], tmp_path)
    return t


def _api(t: Any) -> Any:
    return Warehouse(str(Path(t.path).parent.parent)).table(t.identifier.full_name)


def test_global_index_refuses_data_changes_by_name(pk_table: Any, tmp_path: Path) -> None:
    g1 = _global_index_file(pk_table, "btree-global-index-0001.index")
    sid = _commit_index(pk_table, [g1])
    before = files_under(pk_table.path)
    api = _api(pk_table)
    csv = tmp_path / "more.csv"
    csv.write_text("id,dt,v\n9,x,z\n")
    for call in (lambda: api.write(str(csv)), lambda: api.compact(full=True), api.rewrite_file_index,
                 api.remove_unexisting_files):
        with pytest.raises(NotYetSupported, match=r"index kinds btree in the index manifest \(Paimon 1.4\+\)"):
            call()
    assert files_under(pk_table.path) == before and reload(pk_table).snapshot_manager.latest_snapshot_id() == sid
    assert {r["id"] for r in api.read().to_pylist()} == {1, 2, 3}  # reads ignore global indexes, as Java
    api.compact_manifest(dry_run=True)  # metadata-only rewrites keep the index manifest as it is


def test_expire_orphans_rollback_keep_global_index_files(pk_table: Any) -> None:
    g1 = _global_index_file(pk_table, "btree-global-index-0001.index")
    s_g1 = _commit_index(pk_table, [g1])
    g2 = _global_index_file(pk_table, "btree-global-index-0002.index")
    _commit_index(pk_table, [g2], delete=[g1])
    index = Path(pk_table.path) / "index"
    age_all(pk_table.path)
    api = _api(pk_table)
    # orphans: both are listed by some snapshot's index manifest
    assert api.remove_orphan_files().plan.files == []
    # rollback to the snapshot that listed g1: g2 was only in the rolled-back snapshot
    api.rollback(snapshot=s_g1)
    assert (index / g1.file_name).exists() and not (index / g2.file_name).exists()
    # expire everything but the latest: g1 is still live in it
    api.expire(retain_max=1, retain_min=1)
    t = reload(pk_table)
    assert t.snapshot_manager.snapshot_ids() == [s_g1] and (index / g1.file_name).exists()
    assert read_rows(t) == read_rows(pk_table, s_g1)


def _patch_index_manifest(t: Any, records: list[dict[str, Any]]) -> str:
    """Replace the latest snapshot's index manifest by one holding ``records`` (as a newer
    Paimon would have written it); returns the new manifest's name."""
    name = "index-manifest-feature-test-0"
    (Path(t.path) / "manifest" / name).write_bytes(write_avro(INDEX_MANIFEST_SCHEMA, records))
    snap_path = Path(t.path) / "snapshot" / f"snapshot-{t.snapshot_manager.latest_snapshot_id()}"
    snap = json.loads(snap_path.read_text())
    snap["indexManifest"] = name
    snap_path.write_text(json.dumps(snap))
    return name


def test_unknown_index_kind_is_a_used_file_and_refused_for_writes(pk_table: Any) -> None:
    f = _global_index_file(pk_table, "index-lumina-0001-0")
    unknown = IndexManifestEntry(FileKind.ADD, br.serialize(["x"], [pk_table.schema.logical_partition_type
                                                                    .fields[0].type]), 0,
                                 dataclasses.replace(f, index_type="lumina", global_index=None))
    _patch_index_manifest(pk_table, [index_entry_to_record(unknown)])
    age_all(pk_table.path)
    api = _api(pk_table)
    with pytest.raises(NotYetSupported, match="index kinds lumina"):
        api.compact()
    assert api.remove_orphan_files().plan.files == []
    api.expire(retain_max=1, retain_min=1)
    assert (Path(pk_table.path) / "index" / f.file_name).exists()


def test_index_manifest_of_a_newer_layout_refused_not_corrupt(pk_table: Any) -> None:
    rec = index_entry_to_record(IndexManifestEntry(FileKind.ADD, br.EMPTY_ROW, 0,
                                                   _global_index_file(pk_table, "index-x-0")))
    rec["_VERSION"] = 2
    _patch_index_manifest(pk_table, [rec])
    api = _api(pk_table)
    for call in (api.compact, lambda: api.expire(retain_max=1, retain_min=1), api.remove_orphan_files):
        with pytest.raises(NotYetSupported, match=r"_VERSION 2 \(written by a newer Paimon\)"):
            call()
    assert reload(pk_table).snapshot_manager.snapshot_ids() == [1, 2]


def test_index_manifest_field_of_a_newer_paimon_is_refused_by_name(pk_table: Any) -> None:
    """Java's readers project the writer's schema onto their own and drop such a field; every
    index-manifest rewrite of ours would drop it too (a commit rewrites the index manifest), so
    a field we do not know that holds values is refused by name; a null one is read."""
    g = _global_index_file(pk_table, "btree-global-index-0003.index")
    schema = {**INDEX_MANIFEST_SCHEMA, "fields": [*INDEX_MANIFEST_SCHEMA["fields"],
                                                  {"name": "_FUTURE", "type": ["null", "long"], "default": None}]}
    rec = {**index_entry_to_record(IndexManifestEntry(FileKind.ADD, br.EMPTY_ROW, 0, g)), "_FUTURE": 7}
    name = "index-manifest-future-0"
    (Path(pk_table.path) / "manifest" / name).write_bytes(write_avro(schema, [rec]))
    with pytest.raises(NotYetSupported, match="manifest field _FUTURE"):
        IndexManifestFile(pk_table.file_io, str(Path(pk_table.path) / "manifest")).read(name)
    (Path(pk_table.path) / "manifest" / name).write_bytes(write_avro(schema, [{**rec, "_FUTURE": None}]))
    assert IndexManifestFile(pk_table.file_io, str(Path(pk_table.path) / "manifest")).read(name)[0].index_file == g


# -- Iceberg metadata --------------------------------------------------------------------------


def test_orphan_removal_never_deletes_iceberg_metadata(append_table: Any, tmp_path: Path) -> None:
    """Iceberg readers may hold any metadata version; orphan removal never lists metadata/."""
    FileSystemCatalog(str(tmp_path / "wh")).alter_table(
        append_table.identifier, [SetOption("metadata.iceberg.storage", "table-location")])
    api = _api(append_table)
    csv = tmp_path / "more.csv"
    csv.write_text("id,dt,v\n9,x,z\n")
    api.write(str(csv))
    meta = Path(append_table.path) / "metadata"
    (meta / "stray-m0.avro").write_text("{}")  # not named by any version: still not ours to delete
    age_all(append_table.path)
    before = {p for p in files_under(append_table.path) if p.startswith("metadata/")}
    assert "metadata/v2.metadata.json" in before and "metadata/version-hint.text" in before
    assert not [f for f in api.remove_orphan_files().plan.files if "/metadata/" in f.path]
    assert {p for p in files_under(append_table.path) if p.startswith("metadata/")} == before
    assert len(api.read().to_pylist()) == 3


def test_newer_data_type_refused_by_name(append_table: Any) -> None:
    schema_file = Path(append_table.path) / "schema" / "schema-0"
    doc = json.loads(schema_file.read_text())
    doc["fields"].append({"id": 9, "name": "emb", "type": {"type": "VECTOR", "element": "FLOAT", "length": 3}})
    schema_file.write_text(json.dumps(doc))
    with pytest.raises(NotYetSupported, match=r"data type VECTOR \(Paimon 1.4\+\)"):
        _api(append_table).read()


def test_every_gate_feature_is_named_once() -> None:
    names = [f.name for f in ALL_FEATURES]
    assert len(names) == len(set(names))
