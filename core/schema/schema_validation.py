"""Schema validation (Java's ``SchemaValidation`` and the ``Schema`` / ``TableSchema`` constructor
checks): a schema Java would refuse is never written, so every refusal happens before publish."""

from __future__ import annotations

from dataclasses import replace

from ..errors import InvalidInput
from ..io.external_paths import ExternalPaths
from ..io.paths import path_directory
from .file_index_options import validate_file_index_options
from .options import CHANGELOG_PRODUCERS, MERGE_ENGINES, CoreOptions
from .table_schema import (
    COMPLEX_TYPES,
    KEY_FIELD_PREFIX,
    PAIMON_07_VERSION,
    SYSTEM_FIELD_NAMES,
    Schema,
    TableSchema,
    current_highest_field_id,
)

_KNOWN_FORMATS = frozenset({"parquet", "orc", "avro", "csv", "json", "text", "lance", "blob", "vortex"})


def duplicates(names: list[str]) -> list[str]:
    seen: set[str] = set()
    dup: list[str] = []
    for n in names:
        if n in seen and n not in dup:
            dup.append(n)
        seen.add(n)
    return dup


def _split_keys(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


def normalize_schema(schema: Schema) -> Schema:
    """Apply Java's Schema constructor rules.

    ``primary-key``/``partition`` given as options become the key lists (and leave the
    options); names must be unique and exist; primary-key columns become NOT NULL.
    """
    options = dict(schema.options)
    pks = list(schema.primary_keys)
    parts = list(schema.partition_keys)
    if "primary-key" in options:
        if pks:
            raise InvalidInput("cannot define the primary key both as a column constraint and as option 'primary-key'")
        pks = _split_keys(options.pop("primary-key"))
    if "partition" in options:
        if parts:
            raise InvalidInput("cannot define the partition both as partition keys and as option 'partition'")
        parts = _split_keys(options.pop("partition"))
    names = [f.name for f in schema.fields]
    check_key_columns(names, parts, pks)
    pk_set = set(pks)
    fields = [
        replace(f, type=f.type.copy(nullable=False)) if f.name in pk_set and f.type.nullable else f
        for f in schema.fields
    ]
    return Schema(fields, parts, pks, options, schema.comment)


def check_key_columns(names: list[str], parts: list[str], pks: list[str]) -> None:
    if not names:
        raise InvalidInput("a table needs at least one column")
    dup = duplicates(names)
    if dup:
        raise InvalidInput(f"duplicate column name(s) {dup} in {names}")
    dup = duplicates(parts)
    if dup:
        raise InvalidInput(f"partition keys {parts} contain duplicate column(s) {dup}")
    missing = [p for p in parts if p not in names]
    if missing:
        raise InvalidInput(f"partition key(s) {missing} are not columns of the table {names}")
    dup = duplicates(pks)
    if dup:
        raise InvalidInput(f"primary key {pks} contains duplicate column(s) {dup}")
    missing = [p for p in pks if p not in names]
    if missing:
        raise InvalidInput(f"primary key column(s) {missing} are not columns of the table {names}")


def validate_table_schema(schema: TableSchema) -> None:
    """Refuse any schema Java would refuse to commit; raises InvalidInput (one line)."""
    _validate_columns(schema)
    opts = CoreOptions(schema.options)
    _validate_bucket(schema, opts)
    _validate_merge_engine(schema, opts)
    fmt = opts.file_format
    if fmt not in _KNOWN_FORMATS:
        raise InvalidInput(f"file.format {fmt!r} is unknown; use parquet, orc or avro")
    _validate_sequence_field(schema, opts)
    rk = opts.rowkind_field
    if rk is not None and rk not in schema.field_names:
        raise InvalidInput(f"rowkind.field {rk!r} is not a column of the table {schema.field_names}")
    _validate_fields_prefix(schema)
    _validate_default_values(schema, opts)
    _validate_retention(schema, opts)
    if opts.deletion_vectors_enabled:
        producer = opts.changelog_producer
        if producer not in ("none", "input", "lookup"):
            raise InvalidInput(
                f"deletion-vectors.enabled works only with changelog-producer none, input or lookup, not {producer}"
            )
        if opts.merge_engine == "first-row":
            raise InvalidInput("merge-engine first-row does not support deletion vectors (it never deletes old rows)")
    validate_file_index_options(schema.fields, schema.options)
    ExternalPaths.of(schema.options)  # Java cannot open a table whose external paths it rejects
    path_directory(opts.data_file_path_directory)  # a data directory outside the table: refused


def _validate_columns(schema: TableSchema) -> None:
    names = schema.field_names
    check_key_columns(names, schema.partition_keys, schema.primary_keys)
    highest = current_highest_field_id(schema.fields)
    if highest > schema.highest_field_id:
        raise InvalidInput(f"highestFieldId {schema.highest_field_id} is below the largest field id {highest}")
    if schema.partition_keys and set(schema.partition_keys) >= set(names):
        raise InvalidInput(
            f"every column is a partition key {schema.partition_keys}; a table needs at least one non-partition column"
        )
    for n in names:
        if n in SYSTEM_FIELD_NAMES:
            raise InvalidInput(f"column name {n!r} is reserved for a system field {sorted(SYSTEM_FIELD_NAMES)}")
        if n.startswith(KEY_FIELD_PREFIX):
            raise InvalidInput(f"column name {n!r} must not start with {KEY_FIELD_PREFIX!r}")
    for kind, keys in (("primary key", schema.primary_keys), ("partition", schema.partition_keys)):
        for k in keys:
            t = schema.field(k).type
            if isinstance(t, COMPLEX_TYPES):
                raise InvalidInput(f"{kind} column {k!r} has type {t.as_sql()}; ARRAY, MAP, MULTISET and ROW are not allowed")
    _ = schema.trimmed_primary_keys  # refuses a primary key equal to the partition keys


def _validate_merge_engine(schema: TableSchema, opts: CoreOptions) -> None:
    """merge-engine, changelog-producer and streaming-read-overwrite, and how they combine."""
    engine = opts.merge_engine
    if engine not in MERGE_ENGINES:
        raise InvalidInput(f"merge-engine {engine!r} is unknown; use one of {', '.join(MERGE_ENGINES)}")
    producer = opts.changelog_producer
    if producer not in CHANGELOG_PRODUCERS:
        raise InvalidInput(f"changelog-producer {producer!r} is unknown; use one of {', '.join(CHANGELOG_PRODUCERS)}")
    if not schema.primary_keys and producer != "none":
        raise InvalidInput(
            f"cannot set changelog-producer={producer} on a table without primary keys; define primary keys"
        )
    if engine == "first-row" and producer not in ("none", "lookup"):
        raise InvalidInput("merge-engine first-row supports only changelog-producer none or lookup")
    if opts.streaming_read_overwrite:
        if producer in ("full-compaction", "lookup"):
            raise InvalidInput(
                f"streaming-read-overwrite cannot be true with changelog-producer {producer}: it would read changes twice"
            )
        if not schema.primary_keys:
            raise InvalidInput("streaming-read-overwrite needs a table with primary keys")


def _validate_default_values(schema: TableSchema, opts: CoreOptions) -> None:
    defaults = opts.field_default_values()
    for k in schema.partition_keys:
        if k in defaults:
            raise InvalidInput(f"partition column {k!r} must not have a default value")
    for k in schema.primary_keys:
        if k in defaults:
            raise InvalidInput(f"primary key column {k!r} must not have a default value")


def _validate_retention(schema: TableSchema, opts: CoreOptions) -> None:
    if opts.snapshot_num_retained_min <= 0:
        raise InvalidInput("snapshot.num-retained.min should be at least 1")
    if opts.snapshot_num_retained_min > opts.snapshot_num_retained_max:
        raise InvalidInput("snapshot.num-retained.min should not be larger than snapshot.num-retained.max")
    if opts.changelog_num_retained_min <= 0:
        raise InvalidInput("changelog.num-retained.min should be at least 1")
    if opts.changelog_num_retained_min > opts.changelog_num_retained_max:
        raise InvalidInput("changelog.num-retained.min should not be larger than changelog.num-retained.max")
    if "partition.expiration-time" in schema.options and not schema.partition_keys:
        raise InvalidInput("cannot set 'partition.expiration-time' on a table without partitions")


def _validate_bucket(schema: TableSchema, opts: CoreOptions) -> None:
    bucket = opts.bucket
    raw_bucket_key = schema.options.get("bucket-key")
    names = schema.field_names
    if raw_bucket_key is not None and raw_bucket_key.strip():
        bks = schema.original_bucket_keys
        missing = [k for k in bks if k not in names]
        if missing:
            raise InvalidInput(f"bucket-key column(s) {missing} are not columns of the table {names}")
        in_part = [k for k in bks if k in schema.partition_keys]
        if in_part:
            raise InvalidInput(f"bucket-key column(s) {in_part} must not be partition keys {schema.partition_keys}")
        if schema.primary_keys and not set(bks) <= set(schema.primary_keys):
            raise InvalidInput(f"bucket-key {bks} must be a subset of the primary key {schema.primary_keys}")
    if bucket == -1:
        if raw_bucket_key is not None:
            raise InvalidInput(
                "cannot define 'bucket-key' with bucket = -1; remove 'bucket-key' or set a bucket number"
            )
        if not schema.primary_keys and opts.full_compaction_delta_commits is not None:
            raise InvalidInput(
                "an append table with bucket = -1 does not support 'full-compaction.delta-commits'"
            )
        return
    if bucket == -2:
        if not schema.primary_keys:
            raise InvalidInput("bucket = -2 (postpone) needs a table with primary keys")
        return
    if bucket < 1:
        raise InvalidInput(f"bucket {bucket} is invalid: use -1 (dynamic), -2 (postpone) or a number > 0")
    if schema.cross_partition_update:
        raise InvalidInput(
            "You should use dynamic bucket (bucket = -1) mode in cross partition update case "
            f"(Primary key constraint {schema.primary_keys} not include all partition fields {schema.partition_keys})"
        )
    if not schema.primary_keys and not schema.original_bucket_keys:
        if not (bucket == 1 and schema.version == PAIMON_07_VERSION):
            raise InvalidInput(f"an append table with bucket = {bucket} needs a 'bucket-key'")
    for k in schema.bucket_keys:
        t = schema.field(k).type
        if isinstance(t, COMPLEX_TYPES):
            raise InvalidInput(f"bucket-key column {k!r} has nested type {t.as_sql()}, which cannot be hashed")


def _validate_sequence_field(schema: TableSchema, opts: CoreOptions) -> None:
    seq = opts.sequence_field
    if not seq:
        return
    names = schema.field_names
    for s in seq:
        if s not in names:
            raise InvalidInput(f"sequence.field {s!r} is not a column of the table {names}")
        if schema.options.get(f"fields.{s}.aggregate-function") is not None:
            raise InvalidInput(f"sequence.field {s!r} must not have an aggregate function")
    dup = duplicates(seq)
    if dup:
        raise InvalidInput(f"sequence.field lists {dup} more than once")
    if opts.merge_engine == "first-row":
        raise InvalidInput("sequence.field cannot be used with merge-engine first-row")
    if schema.cross_partition_update:
        raise InvalidInput(
            "You can not use sequence.field in cross partition update case "
            f"(Primary key constraint {schema.primary_keys} not include all partition fields {schema.partition_keys})"
        )


def _validate_fields_prefix(schema: TableSchema) -> None:
    """``fields.<a,b>.<setting>`` must name existing columns (Java's validateFieldsPrefix)."""
    names = set(schema.field_names)
    for k, v in schema.options.items():
        if not k.startswith("fields."):
            continue
        parts = k.split(".")
        if len(parts) < 2:
            continue
        for col in parts[1].split(","):
            if col != "default-aggregate-function" and col not in names:
                raise InvalidInput(f"option {k!r} names column {col!r}, which is not in the table")
        if k.endswith(".sequence-group"):
            for col in v.split(","):
                if col not in names:
                    raise InvalidInput(f"option {k!r} names column {col!r}, which is not in the table")
