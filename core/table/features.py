"""The feature gate: Paimon features this toolkit does not implement, refused by name.

Each command asks once, before it changes anything, whether the table uses a feature that
command would misread or leave inconsistent (``check_features``). A refusal is
``NotYetSupported`` (exit 1) with one line naming the option, type or index kind in Paimon's
vocabulary; it is never reported as corrupt metadata. Expiration and orphan removal need no
rule for index kinds: every file an index manifest lists is a used file, whatever its kind.
The README's "Paimon versions and features" section lists every ``FEATURES`` entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..data.type_visitor import holds_blob
from ..data.types import BlobType
from ..errors import NotYetSupported
from ..io import paths
from ..schema import iceberg_options
from .actions import Action

if TYPE_CHECKING:
    from ..schema.table_schema import TableSchema
    from .file_store_table import FileStoreTable


# actions that rewrite or add data files (and so must keep every index and layout rule)
DATA_CHANGES = frozenset({Action.WRITE, Action.COMPACT, Action.RESCALE, Action.REWRITE_FILE_INDEX,
                          Action.EXPIRE_PARTITIONS, Action.REMOVE_UNEXISTING_FILES, Action.MERGE_BRANCH,
                          Action.DROP_PARTITION, Action.CLONE, Action.MATERIALIZE_DELETION_VECTORS})
# actions that read data files
DATA_ACCESS = DATA_CHANGES | {Action.READ}
# actions after which Java would run its commit or tag callbacks
COMMITS = DATA_CHANGES | {Action.COMPACT_MANIFEST, Action.ROLLBACK, Action.TAG, Action.FAST_FORWARD,
                          Action.PURGE_FILES, Action.REMOVE_UNEXISTING_MANIFESTS}
EVERYTHING = frozenset(Action)
# actions with no counterpart in a version-managing catalog server's API (a REST catalog): they
# would change metadata the server owns, so they are refused by name
SERVER_REFUSED = {Action.PURGE_FILES: "it drops every branch, tag and consumer and truncates in one go, which the "
                                      "REST API has no call for"}

SUPPORTED_FILE_FORMATS = frozenset({"parquet", "orc", "avro"})
TABLE_TYPE = "table"


def _truthy(schema: TableSchema, key: str) -> bool:
    return schema.options.get(key, "false").strip().lower() == "true"


def _iceberg_option(schema: TableSchema) -> str | None:
    return iceberg_options.unsupported_option(schema.options)


def _iceberg_column(schema: TableSchema) -> str | None:
    if not iceberg_options.iceberg_enabled(schema.options):
        return None
    for f in schema.fields:
        found = iceberg_options.unmappable_type(f.type)
        if found is not None:
            return f"column {f.name!r} of type {found} with Iceberg metadata"
    return None


def _iceberg_data_evolution(schema: TableSchema) -> str | None:
    if iceberg_options.iceberg_enabled(schema.options) and _truthy(schema, "data-evolution.enabled"):
        return "data-evolution.enabled=true with Iceberg metadata"
    return None


def _table_type(schema: TableSchema) -> str | None:
    kind = schema.options.get("type", TABLE_TYPE).strip().lower()
    return None if kind == TABLE_TYPE else f"type={kind}"


def _option_set(*keys: str) -> Callable[[TableSchema], str | None]:
    def detect(schema: TableSchema) -> str | None:
        for k in keys:
            v = schema.options.get(k, "").strip()
            if v and v.lower() != "false":
                return f"{k}={v}"
        return None
    return detect


def _pk_index(schema: TableSchema) -> str | None:
    for k in sorted(schema.options):
        if k.startswith("pk-") and k.endswith(".index.columns") and schema.options[k].strip():
            return f"{k}={schema.options[k].strip()}"
    return None




def _blob(schema: TableSchema) -> str | None:
    for f in schema.fields:
        if holds_blob(f.type):
            return f"BLOB column {f.name!r}"
    return _option_set("blob-field", "blob-descriptor-field", "blob-view-field")(schema)


def _blob_layout(schema: TableSchema) -> str | None:
    """The BLOB layouts write and compact leave alone: anything but top-level BLOB (or
    ``blob-field``) columns in the ``.blob`` files of a data-evolution append table."""
    found = _blob(schema)
    if found is None:
        return None
    inline = _option_set("blob-descriptor-field", "blob.stored-descriptor-fields", "blob-view-field")(schema)
    if inline is not None:
        return inline
    nested = [f for f in schema.fields if holds_blob(f.type) and not isinstance(f.type, BlobType)]
    if nested or schema.primary_keys or not _truthy(schema, "data-evolution.enabled"):
        return found
    return None


def _file_format(schema: TableSchema) -> str | None:
    for key in ("file.format", "vector.file.format"):
        fmt = schema.options.get(key, "").strip().lower()
        if fmt and fmt not in SUPPORTED_FILE_FORMATS:
            return f"{key}={fmt}"
    return None


def _bucket_function(schema: TableSchema) -> str | None:
    """Only fixed buckets (and postpone files compacted into them) hash with the function."""
    kind = schema.options.get("bucket-function.type", "default").strip().lower()
    if kind == "default" or not (schema.bucket > 0 or schema.bucket == paths.POSTPONE_BUCKET):
        return None
    return f"bucket-function.type={kind}"


def _clustering(schema: TableSchema) -> str | None:
    if schema.primary_keys or not _truthy(schema, "clustering.incremental"):
        return None
    return "clustering.incremental=true"


def _deletion_vectors_modifiable(schema: TableSchema) -> str | None:
    return "deletion-vectors.modifiable=true" if _truthy(schema, "deletion-vectors.modifiable") else None


def _dv_merge_on_read(schema: TableSchema) -> str | None:
    if _truthy(schema, "deletion-vectors.enabled") and _truthy(schema, "deletion-vectors.merge-on-read"):
        return "deletion-vectors.merge-on-read=true"
    return None


def _sequence_init_snapshot(schema: TableSchema) -> str | None:
    mode = schema.options.get("write.sequence-number-init-mode", "scan").strip().lower()
    return None if mode == "scan" else f"write.sequence-number-init-mode={mode}"


def _map_storage_layout(schema: TableSchema) -> str | None:
    for k in sorted(schema.options):
        if k.startswith("fields.") and k.endswith(".map.storage-layout"):
            layout = schema.options[k].strip().lower()
            if layout != "default":
                return f"{k}={layout}"
    return None


@dataclass(frozen=True)
class Feature:
    """One feature we refuse: how to see it in a schema, since which Paimon, for which actions."""

    name: str  # the option, type or index kind as Paimon names it (the README row names it too)
    since: str
    refused: frozenset[Action]
    why: str
    detect: Callable[[TableSchema], str | None]


ICEBERG_COLUMN_TYPE = Feature(
    "Iceberg column type", "1.0", COMMITS, "Java's Iceberg compatibility cannot publish this column type (TIME up to "
    "precision 3, timestamps of precision 3 to 6; no VARIANT or BLOB), so the commit would leave the Iceberg "
    "metadata stale", _iceberg_column)

FEATURES: tuple[Feature, ...] = (
    Feature("type", "0.9", EVERYTHING, "only Paimon's LSM `table` type is supported "
            "(format-table, object-table, materialized-table, lance-table, iceberg-table are not)", _table_type),
    Feature("chain-table.enabled", "1.4", EVERYTHING, "chain tables read and address files across branches",
            _option_set("chain-table.enabled", "scan.fallback-snapshot-branch", "scan.fallback-delta-branch")),
    Feature("metadata.iceberg.storage", "1.0", COMMITS, "only table-location, hadoop-catalog and hive-catalog "
            "(through the Hive Metastore's Thrift API) Iceberg metadata of Iceberg format version 2 is written by "
            "this toolkit, so the commit would leave the Iceberg metadata stale", _iceberg_option),
    ICEBERG_COLUMN_TYPE,
    Feature("data-evolution.enabled", "1.4", COMMITS, "Iceberg metadata cannot describe data files that hold only "
            "some of the columns, so Iceberg readers would read wrong rows", _iceberg_data_evolution),
    Feature("scan.fallback-branch", "0.9", frozenset({Action.READ}), "reads that fall back to another branch "
            "are not implemented", _option_set("scan.fallback-branch")),
    Feature("pk-*.index.columns", "2.0", DATA_CHANGES, "primary-key global indexes (btree, bitmap, vector, "
            "full-text) are not maintained by this toolkit", _pk_index),
    # reading BLOB columns of data-evolution tables works; the read refuses the other layouts itself
    Feature("BLOB", "1.4", frozenset({Action.RESCALE, Action.REMOVE_UNEXISTING_FILES}), "rescaling tables with "
            "BLOB columns and dropping entries of their missing files are not supported yet", _blob),
    Feature("BLOB layout", "1.4", frozenset({Action.WRITE, Action.COMPACT, Action.REWRITE_FILE_INDEX,
                                             Action.EXPIRE_PARTITIONS, Action.DROP_PARTITION}),
            "BLOB columns are written, compacted, indexed and dropped only in the .blob files of data-evolution "
            "append tables (blob descriptors or views stored inline, BLOBs nested in ARRAY / MAP and primary-key "
            "blob packs are not supported)", _blob_layout),
    Feature("file.format", "1.4", DATA_ACCESS, "only parquet, orc and avro data files are supported",
            _file_format),
    Feature("bucket-function.type", "1.3", DATA_CHANGES, "only the default bucket function is implemented",
            _bucket_function),
    Feature("clustering.incremental", "1.3", DATA_CHANGES, "incremental clustering keeps append files on "
            "levels above 0, which this toolkit does not maintain", _clustering),
    Feature("sequence.snapshot-ordering", "2.0", DATA_CHANGES, "commits that stamp sequence numbers with the "
            "snapshot id are not implemented", _option_set("sequence.snapshot-ordering")),
    Feature("deletion-vectors.modifiable", "1.4", DATA_CHANGES, "the modifiable deletion-vector mode is not "
            "implemented", _deletion_vectors_modifiable),
    Feature("deletion-vectors.merge-on-read", "2.0", frozenset({Action.READ}), "reads that merge uncompacted "
            "level-0 files of a deletion-vector table are not implemented", _dv_merge_on_read),
    Feature("write.sequence-number-init-mode", "2.0", DATA_CHANGES, "commits do not maintain the snapshot "
            "property sequence.generation.max-sequence-number", _sequence_init_snapshot),
    Feature("map.storage-layout", "2.1", DATA_ACCESS, "the shared-shredding MAP layout is not supported",
            _map_storage_layout),
)
# index kinds other than HASH / DELETION_VECTORS (global indexes: btree, bitmap, ivf-*, full-text, ...)
GLOBAL_INDEX = Feature("global index", "1.4", DATA_CHANGES, "global indexes (btree, bitmap, vector, full-text) "
                       "are not maintained by this toolkit, so the change would leave them stale", lambda s: None)
ALL_FEATURES: tuple[Feature, ...] = (*FEATURES, GLOBAL_INDEX)


def check_schema_features(schema: TableSchema, action: Action, table_name: str = "") -> None:
    """Refuse ``action`` when the schema uses a feature ``FEATURES`` refuses for it (no I/O)."""
    for feature in FEATURES:
        if action not in feature.refused:
            continue
        found = feature.detect(schema)
        if found is not None:
            raise NotYetSupported(_message(action, table_name, found, feature))


def check_features(table: FileStoreTable, action: Action) -> None:
    """The gate of one command: schema features, then (for data changes) the index kinds the
    latest snapshot holds. Reads metadata only; raises NotYetSupported naming the feature."""
    name = table.identifier.full_name
    if action in SERVER_REFUSED:
        refuse_on_catalog_server(table, action.value, SERVER_REFUSED[action])
    check_schema_features(table.schema, action, name)
    if action in COMMITS and iceberg_options.iceberg_enabled(table.schema.options):
        _check_iceberg_table(table, action)
    if action not in GLOBAL_INDEX.refused:
        return
    # materializing deletion vectors drops the global indexes over the row ranges it renumbers
    kinds = unsupported_index_types(table, global_ok=action is Action.MATERIALIZE_DELETION_VECTORS)
    if kinds:
        found = f"index kinds {', '.join(kinds)} in the index manifest"
        raise NotYetSupported(_message(action, name, found, GLOBAL_INDEX))


def refuse_on_catalog_server(table: FileStoreTable, what: str, why: str) -> None:
    """NotYetSupported naming ``what`` when the table's versions are kept by a catalog server
    (a REST catalog) and the change has no call in its API: never done behind its back."""
    env = table.catalog_environment
    if env.version_management:
        raise NotYetSupported(f"{what} on {table.identifier.full_name}: not supported through REST catalog "
                              f"{env.catalog}, whose server keeps the table's versions: {why} (nothing was changed)")


def _check_iceberg_table(table: FileStoreTable, action: Action) -> None:
    """What a commit with Iceberg metadata needs beyond the schema: the main branch (Java's
    callback would write a branch's snapshots over the main branch's metadata), a metadata
    directory it can place, and every schema it publishes mappable to Iceberg."""
    name = table.identifier.full_name
    if action is Action.REMOVE_UNEXISTING_MANIFESTS:
        raise NotYetSupported(
            f"{action.value} on {name}: a table with Iceberg metadata is not supported yet: the manifests it drops "
            "would have to leave the Iceberg metadata too (nothing was changed)")
    if table.branch is not None:
        raise NotYetSupported(
            f"{action.value} on {name}: branch {table.branch} of a table with Iceberg metadata (Paimon 1.0+) is not "
            "supported: Java's Iceberg callback writes every branch's snapshots into the one Iceberg metadata of "
            "the table; commit to the main branch")
    opts = iceberg_options.iceberg_options(table.schema.options)
    paths.iceberg_metadata_dir(table.path, opts.storage_location == iceberg_options.CATALOG_LOCATION)
    if opts.storage == iceberg_options.HIVE_CATALOG:
        committer = table.catalog_environment.iceberg_committer
        if committer is None:  # opened without a catalog
            raise NotYetSupported(
                f"{action.value} on {name}: metadata.iceberg.storage=hive-catalog needs a Hive Metastore to register "
                "the Iceberg metadata in: set metadata.iceberg.uri (a table of a Hive catalog uses the catalog's "
                "uri) (nothing was changed)")
        committer.check(action.value)  # e.g. a metastore table the registration would overwrite
    for schema in table.schema_manager.list_all():
        for f in schema.fields:
            found = iceberg_options.unmappable_type(f.type)
            if found is not None:
                raise NotYetSupported(_message(action, name, f"column {f.name!r} of type {found} in schema "
                                                             f"{schema.id} with Iceberg metadata", ICEBERG_COLUMN_TYPE))


def unsupported_index_types(table: FileStoreTable, global_ok: bool = False) -> list[str]:
    """Index kinds of the latest snapshot other than HASH and DELETION_VECTORS (sorted);
    ``global_ok``: global index files (those with global-index metadata) are fine."""
    snap = table.snapshot_manager.latest_snapshot()
    if snap is None or not snap.index_manifest:
        return []
    # The index manifest's reader is imported only for a snapshot that has one (issue 28).
    from ..manifest.index_manifest import DELETION_VECTORS_INDEX, HASH_INDEX, IndexFileMeta, IndexManifestFile

    known = frozenset({HASH_INDEX, DELETION_VECTORS_INDEX})
    entries = IndexManifestFile(table.file_io, paths.manifest_dir(table.path)).live_entries(snap.index_manifest)
    def unsupported(f: IndexFileMeta) -> bool:
        if f.global_index is not None:
            return not global_ok
        return f.index_type not in known

    return sorted({e.index_file.index_type for e in entries if unsupported(e.index_file)})


def _message(action: Action, table_name: str, found: str, feature: Feature) -> str:
    where = f" on {table_name}" if table_name else ""
    return f"{action.value}{where}: {found} (Paimon {feature.since}+) is not supported: {feature.why}"
