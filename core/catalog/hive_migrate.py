"""Hive table migration (Java's ``migrate_table``, ``migrate_database``, ``migrate_file``): a
Hive Parquet/ORC/Avro table of the metastore becomes a Paimon table in place, its data files moved
(never rewritten) into an unaware-bucket append table, as Java's ``HiveMigrator`` does: renamed on
a local filesystem; on an object store (where Java's ``FileIO.rename`` is a copy and a delete)
copied, and the originals deleted only once the Paimon table is committed and registered.

Java's steps, kept: a staging Paimon table ``<table>_paimon_`` is created from the Hive columns
and partition keys (``options`` are its table options; ``bucket`` must stay -1); every visible
file of the table (or of each partition) moves into the staging table's ``<partition>/bucket-0``
directory, named ``<name>.<format>`` when it lacks the suffix (a name the Paimon table already
has gets a random suffix, where Java's rename would fail); one APPEND snapshot commits their
metas (row count and column stats of each file, sequence numbers 0); the Hive table is dropped
and the staging table renamed to the Hive table's name (or to the target name).

Where we are stricter than Java, because a wrong guess would be a silent wrong answer: formats
other than Parquet, ORC and Avro, column types we do not map, file encodings Java 0.9 misreads
(Parquet INT96 or INT64 micros as TIMESTAMP(3), non-standard nested Parquet layouts, an Avro
type other than Paimon's for the column), files lacking a table column by name
(Hive reads old ORC files by position, Paimon by name) or holding it under another type, and
subdirectories of a table or partition location (Java would skip their files) are refused by
name before anything changes. Everything is decided by :func:`plan_migrate_table` (the dry run);
:func:`execute_migrate` moves the files, and if a move or the commit fails it moves every file
back (copies: deletes the copies) and drops the staging table, so the Hive table is left as it was.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..data import binary_row
from ..data.predicate_literal import RawLiteral, coerce_literal
from ..data.types import DataField, DataType, parse_data_type
from ..errors import AlreadyExists, InvalidInput, NotFound, NotYetSupported, PaimonError, UnsafeRefused
from ..io import paths
from ..io.fileio import FileIO, join
from ..manifest.manifest import DataFileMeta
from ..mergetree.commit_message import CommitMessage
from ..operation.clone import CloneFile, copy_file
from ..operation.commit import FileStoreCommit
from ..schema.options import CoreOptions
from ..schema.schema_manager import SchemaManager, new_table_schema
from ..schema.table_schema import Schema
from ..table.identifiers import Identifier
from ..utils.rows import Rows
from ..utils.workers import map_ordered
from .base import local_location
from .hive_files import hive_file_meta
from .hive_metastore import hms_table_kind

if TYPE_CHECKING:
    from pymetastore.hive_metastore import ttypes

    from ..table.file_store_table import FileStoreTable
    from .hive import HiveCatalog

PAIMON_SUFFIX = "_paimon_"
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
READ_THREADS = 4

# Hive column type -> the Paimon type Java's HiveTypeUtils maps it to (the types we can check
# against the files; the rest are refused by name)
_HIVE_SIMPLE = {
    "boolean": "BOOLEAN", "tinyint": "TINYINT", "smallint": "SMALLINT", "int": "INT", "integer": "INT",
    "bigint": "BIGINT", "float": "FLOAT", "double": "DOUBLE", "string": "STRING", "binary": "BYTES",
    "date": "DATE", "timestamp": "TIMESTAMP(3)",  # Java's TIMESTAMP_MILLIS
}
_HIVE_PARAM = re.compile(r"^(decimal|varchar|char)\((\d+)(?:,(\d+))?\)$")


def hive_to_paimon_type(column: str, hive_type: str, *, command: str) -> DataType:
    """A Hive column type as a (nullable) Paimon type, nested ones too (array -> ARRAY, map ->
    MAP, struct -> ROW, as Java's HiveTypeUtils); NotYetSupported names what is not mapped
    (and ``command``, the migrate or clone command that met it)."""
    try:
        sql, rest = _hive_sql(hive_type.strip().lower())
    except _Unmapped:
        sql, rest = "", "?"
    if rest.strip():
        raise NotYetSupported(f"{command}: column {column} has Hive type {hive_type}, which is not supported yet")
    return parse_data_type(sql)


class _Unmapped(Exception):
    pass


_HIVE_TOKEN = re.compile(r"\s*(array|map|struct)\s*<|\s*([a-z_][a-z0-9_]*(?:\s*\(\s*\d+\s*(?:,\s*\d+\s*)?\))?)")
_HIVE_FIELD = re.compile(r"\s*([a-z_][a-z0-9_]*)\s*:")


def _hive_sql(t: str) -> tuple[str, str]:
    """The Paimon SQL of the Hive type at the start of ``t``, and the text after it."""
    m = _HIVE_TOKEN.match(t)
    if m is None:
        raise _Unmapped
    rest = t[m.end():]
    if m.group(1) is None:  # a primitive
        name = re.sub(r"\s+", "", m.group(2))
        if name in _HIVE_SIMPLE:
            return _HIVE_SIMPLE[name], rest
        if name == "decimal":
            return "DECIMAL(10, 0)", rest  # Hive's default precision and scale
        pm = _HIVE_PARAM.match(name)
        if pm and (pm.group(1) == "decimal" or pm.group(3) is None):
            return name.upper(), rest
        raise _Unmapped
    kind, parts = m.group(1), []
    while True:
        if kind == "struct":
            fm = _HIVE_FIELD.match(rest)
            if fm is None:
                raise _Unmapped
            inner, rest = _hive_sql(rest[fm.end():])
            parts.append(f"`{fm.group(1)}` {inner}")
        else:
            inner, rest = _hive_sql(rest)
            parts.append(inner)
        rest = rest.lstrip()
        if rest.startswith(","):
            rest = rest[1:]
            continue
        if not rest.startswith(">"):
            raise _Unmapped
        rest = rest[1:]
        break
    if (kind, len(parts)) not in (("array", 1), ("map", 2)) and kind != "struct":
        raise _Unmapped
    return f"{'ROW' if kind == 'struct' else kind.upper()}<{', '.join(parts)}>", rest


def hive_file_format(sd: Any, what: str, *, command: str) -> str:
    """``avro``, ``parquet`` or ``orc`` from a storage descriptor's SerDe and input format (as
    Java's ``parseFormat``); others refused."""
    serde = (getattr(sd.serdeInfo, "serializationLib", None) or "") if sd is not None and sd.serdeInfo else ""
    text = f"{serde} {getattr(sd, 'inputFormat', '') or ''}".lower()
    for fmt in ("avro", "parquet", "orc"):  # Java's order
        if fmt in text:
            return fmt
    shown = serde or getattr(sd, "inputFormat", None) or "none"
    raise NotYetSupported(f"{command}: {what} is stored as {shown}; only Parquet, ORC and Avro Hive tables are supported")


@dataclass(frozen=True)
class HiveFiles:
    """The file system a Hive table's files are copied from."""

    file_io: FileIO


@dataclass(frozen=True)
class MigratedFile:
    """One Hive data file and where it goes in the Paimon table."""

    source: str
    target: str
    partition: str  # the Paimon partition directory ('' unpartitioned)
    partition_row: bytes
    meta: DataFileMeta


@dataclass
class MigratePlan:
    """What one table's migration does, decided before anything changes (the dry run)."""

    catalog: str
    kind: str  # "table" (migrate_table / migrate_database) or "file" (migrate_file)
    source: Identifier
    target: Identifier  # the Paimon table's name when done
    staging: Identifier  # where the files are committed first (the target itself for migrate_file)
    file_format: str
    source_location: str
    schema: Schema | None  # the staging table's schema (None: it exists)
    delete_origin: bool
    files: list[MigratedFile] = field(default_factory=list)
    source_dirs: list[str] = field(default_factory=list)  # every table/partition location
    copy: bool = False  # not one local filesystem: files are copied, the originals deleted after the commit
    done: bool = False

    @property
    def row_count(self) -> int:
        return sum(f.meta.row_count for f in self.files)

    @property
    def relocates(self) -> bool:
        """The staging table's directory is copied to the target's (object-store warehouse)."""
        return self.copy and self.staging != self.target

    def files_with_names(self) -> list[tuple[MigratePlan, MigratedFile]]:
        return [(self, f) for f in self.files]

    def rows(self) -> Rows:
        return _rows(self.files_with_names())

    def describe(self) -> str:
        verb = "migrated" if self.done else "would migrate"
        was = "was" if self.done else "would be"
        origin = f"; Hive table {self.source} {was} {'dropped' if self.delete_origin else 'kept, without its files'}"
        staged = ""
        if self.staging != self.target:
            staged = f" (committed as {self.staging}, then {'copied to its place' if self.relocates else 'renamed'})"
        how = ""
        if self.copy:
            gone = "were" if self.done else "would be"
            how = f" by copying them (the originals {gone} deleted after the commit)"
        return (f"{verb} {len(self.files)} file(s), {self.row_count} row(s) of Hive table {self.source} "
                f"into Paimon table {self.target}{how}{staged}{origin}")


@dataclass
class MigrateDatabasePlan:
    """Every migratable table of a Hive database; Paimon tables and views are skipped."""

    catalog: str
    database: str
    tables: list[MigratePlan]
    skipped: list[str]
    done: bool = False

    def rows(self) -> Rows:
        return _rows([f for p in self.tables for f in p.files_with_names()])

    def describe(self) -> str:
        verb = "migrated" if self.done else "would migrate"
        files = sum(len(p.files) for p in self.tables)
        skipped = f"; skipped (already Paimon or views): {', '.join(self.skipped)}" if self.skipped else ""
        return f"{verb} {len(self.tables)} Hive table(s) of {self.database}, {files} file(s){skipped}"


def _rows(files: list[tuple[MigratePlan, MigratedFile]]) -> Rows:
    return Rows(
        ["source_table", "target_table", "partition", "file", "rows", "bytes", "move", "from", "to"],
        [{"source_table": p.source.full_name, "target_table": p.target.full_name, "partition": f.partition,
          "file": f.meta.file_name, "rows": f.meta.row_count, "bytes": f.meta.file_size,
          "move": "copy" if p.copy else "rename", "from": f.source, "to": f.target} for p, f in files],
        brief=["source_table", "target_table", "partition", "file", "rows", "move"],
    )


# -- planning ------------------------------------------------------------------------------


def _parse_options(options: Mapping[str, str] | None, command: str) -> dict[str, str]:
    opts = dict(options or {})
    if opts.get("bucket", "-1").strip() != "-1":
        raise InvalidInput(f"{command} makes an unaware-bucket append table: option bucket must be -1")
    if "primary-key" in opts:
        raise InvalidInput(f"{command} makes an append table: option primary-key cannot be set")
    return opts


def hive_table(catalog: HiveCatalog, ident: Identifier, *, command: str) -> ttypes.Table:
    """The metastore's table ``ident``, refused (naming ``command``) unless a plain Hive table."""
    table = catalog._call(lambda c: c.find_table(ident.database, ident.table))
    if table is None:
        raise NotFound(f"table {ident} does not exist in catalog {catalog.name}")
    kind = hms_table_kind(table)
    if kind == "paimon":
        raise InvalidInput(f"{command}: table {ident} is already a Paimon table")
    if kind == "view":
        raise NotYetSupported(f"{command}: table {ident} is a view, not a Hive table; only Hive tables are supported")
    if (table.parameters or {}).get("transactional", "false").lower() == "true":
        raise NotYetSupported(f"{command}: table {ident} is a transactional (ACID) Hive table, whose files are "
                              "deltas; only plain Hive tables are supported")
    return table


def _source_dirs(catalog: HiveCatalog, ident: Identifier, hms: ttypes.Table, keys: list[str], command: str
                 ) -> list[tuple[dict[str, str], str, str]]:
    """[(partition spec, location, format)] of the table (one entry when unpartitioned)."""
    if not keys:
        return [({}, hms.sd.location, hive_file_format(hms.sd, f"table {ident}", command=command))]
    parts = catalog._call(lambda c: c.list_partitions(ident.database, ident.table))
    out = []
    for p in parts:
        spec = dict(zip(keys, p.values, strict=True))
        name = "/".join(f"{k}={v}" for k, v in spec.items())
        out.append((spec, p.sd.location, hive_file_format(p.sd, f"partition {name} of {ident}", command=command)))
    return out


def _visible_files(fio: FileIO, location: str, what: str, command: str) -> list[tuple[str, str, int]]:
    """[(path, name, size)] of the data files directly under ``location`` (names starting with
    ``_`` or ``.`` are Hive's markers and stay, as Java's HIDDEN_PATH_FILTER); a subdirectory
    is refused (Java would leave its files behind)."""
    if not fio.is_dir(location):
        raise NotFound(f"{command}: {what}: its location {location} is not a directory; nothing was changed")
    out = []
    for st in sorted(fio.list_status(location), key=lambda s: s.name):
        if st.name.startswith(("_", ".")):
            continue
        if st.is_dir:
            raise NotYetSupported(f"{command}: {what}: {st.path} is a subdirectory; only the files directly under "
                                  "a table or partition location are taken")
        out.append((st.path, st.name, st.size))
    return out


def _partition_values(spec: Mapping[str, str], fields: Sequence[DataField], default_name: str) -> list[Any]:
    values: list[Any] = []
    for f in fields:
        text = spec[f.name]
        if text in (HIVE_DEFAULT_PARTITION, default_name):
            values.append(None)
        else:
            try:
                values.append(coerce_literal(RawLiteral("str", text), f.type, f.name))
            except InvalidInput:
                raise InvalidInput(f"partition value {f.name}={text!r} is not a {f.type.as_sql()}") from None
    return values



def _copies(fio: FileIO, target_fio: FileIO, source: Identifier, command: str) -> bool:
    """Whether the files are copied (then deleted) rather than renamed: a rename is one step on
    one local filesystem only; object stores (either side) take copies. Other remote
    filesystems are refused."""
    if fio.is_local and target_fio.is_local:
        return False
    for f in (fio, target_fio):
        if not (f.is_local or f.is_object_store):
            raise NotYetSupported(f"{command}: table {source}: {f.scheme}:// is neither a local filesystem nor an "
                                  "object store; migration moves files only on those (copy it with clone "
                                  "--clone-from hive instead)")
    return True


def plan_hive_files(catalog: HiveCatalog, source: Identifier, hms: ttypes.Table, fields: list[DataField],
                    partition_keys: list[str], options: CoreOptions, schema_id: int, data_root: str,
                    target_fio: FileIO, *, selection: Callable[[bytes], bool] | None = None,
                    keep_names: bool = False, command: str) -> tuple[list[MigratedFile], str, list[str]]:
    """Every visible file of the Hive table (of the partitions ``selection`` keeps) with the
    Paimon meta its footer gives and its place in ``<data_root>/<partition>/bucket-0`` of
    ``target_fio``: named ``<name>.<format>`` (Java's naming, for migration and clone alike).
    ``keep_names`` (clone): a name the target already has is kept, a re-run finds its copy
    there; otherwise (migration's rename) the moved file gets a random suffix."""
    fio = catalog.file_io_for(hms.sd.location or catalog.warehouse)
    part_fields = [next(f for f in fields if f.name == k) for k in partition_keys]
    formats = set()
    todo: list[tuple[str, str, int, str, str, str, bytes, str]] = []
    dirs: list[str] = []
    only_value = options.options.get("partition.generate-path-only-value", "false").lower() == "true"
    for spec, location, fmt in _source_dirs(catalog, source, hms, partition_keys, command):
        if not location:
            raise InvalidInput(f"{command}: table {source} has no location for {spec or 'its data'}")
        what = f"table {source}" + (f" partition {spec}" if spec else "")
        values = _partition_values(spec, part_fields, options.partition_default_name)
        row = binary_row.serialize(values, [f.type for f in part_fields])
        if selection is not None and not selection(row):
            continue
        formats.add(fmt)
        strs = paths.partition_values_to_str(values, [f.type for f in part_fields], options.partition_legacy_name)
        part_dir = paths.partition_path(partition_keys, strs, options.partition_default_name, only_value)
        bucket_dir = paths.bucket_path(data_root, part_dir, 0)
        taken = set() if keep_names or not target_fio.is_dir(bucket_dir) else set(target_fio.list_names(bucket_dir))
        dirs.append(local_location(location))
        for path, name, size in _visible_files(fio, local_location(location), what, command):
            new_name = name if name.endswith("." + fmt) else f"{name}.{fmt}"
            if new_name in taken:  # a file of the Paimon table has the name: the moved one gets another
                new_name = f"{new_name[:-len(fmt) - 1]}-{uuid.uuid4()}.{fmt}"
            taken.add(new_name)
            todo.append((path, new_name, size, fmt, f"{command}: {what}", part_dir, row, join(bucket_dir, new_name)))
    keys = set(partition_keys)

    def migrated(t: tuple[str, str, int, str, str, str, bytes, str]) -> MigratedFile:
        path, new_name, size, fmt, what, part_dir, row, target = t
        meta = hive_file_meta(fio, path, new_name, size, fmt, fields, keys, options, schema_id, what)
        return MigratedFile(path, target, part_dir, row, meta)

    # each file is read whole for its stats, a few at a time (Java's migrator runs a thread pool too)
    threads = min(16 if fio.is_object_store else READ_THREADS, len(todo))
    out = map_ordered(migrated, todo, threads, "paimon-migrate")
    targets = [f.target for f in out]
    if len(set(targets)) != len(targets):
        raise InvalidInput(f"table {source}: two files would get the same name in one partition "
                           "(<name> and <name>.<format>)")
    return out, (formats.pop() if len(formats) == 1 else "parquet" if not formats else "mixed"), dirs


def hive_columns(catalog: HiveCatalog, source: Identifier, hms: ttypes.Table, *, command: str) -> list[Any]:
    """The Hive table's data columns. For an Avro table those the metastore derives through the
    Avro SerDe (Java's ``getSchema``; comments and an ``avro.schema.literal`` included), for the
    others the storage descriptor's (the same columns)."""
    cols = list(hms.sd.cols or []) if hms.sd else []
    if hms.sd is None or hive_file_format(hms.sd, f"table {source}", command=command) != "avro":
        return cols
    keys = {k.name for k in hms.partitionKeys or []}
    return [c for c in catalog._call(lambda c: c.get_schema(source.database, source.table)) if c.name not in keys]


def hive_schema(hms: ttypes.Table, source: Identifier, options: dict[str, str],
                columns_of: list[Any] | None = None, *, command: str) -> Schema:
    """The Paimon schema of a Hive table (``columns_of`` or its storage descriptor's columns,
    then partition keys; its comment), as Java's ``hiveTableToPaimonSchema``: ``file.format``
    is the table's unless ``options`` set it."""
    keys = [k.name for k in hms.partitionKeys or []]
    hive_cols = columns_of if columns_of is not None else (hms.sd.cols or [])
    columns = [(c.name, hive_to_paimon_type(c.name, c.type, command=command), c.comment) for c in hive_cols]
    columns += [(k.name, hive_to_paimon_type(k.name, k.type, command=command), k.comment) for k in hms.partitionKeys or []]
    comment = (hms.parameters or {}).get("comment")
    opts = dict(options)
    if comment is not None:
        opts.setdefault("hive.comment", comment)
    formats = {hive_file_format(hms.sd, f"table {source}", command=command)} if hms.sd else set()
    if formats and "file.format" not in opts:
        opts["file.format"] = next(iter(formats))
    return Schema.of(columns, partition_keys=keys, options=opts, comment=comment)


def plan_migrate_table(catalog: HiveCatalog, source: str | Identifier, *, target: str | Identifier | None = None,
                       options: Mapping[str, str] | None = None, delete_origin: bool = True,
                       command: str = "migrate-table") -> MigratePlan:
    """Java's ``migrate_table``, decided: the schema, every file's move and meta. Nothing changes.
    ``command`` is what refusals name (``migrate-database`` plans each table through here)."""
    src = source if isinstance(source, Identifier) else Identifier.parse(source)
    dst = src if target is None else target if isinstance(target, Identifier) else Identifier.parse(target)
    opts = _parse_options(options, command)
    hms = hive_table(catalog, src, command=command)
    if not delete_origin and dst == src:
        raise InvalidInput("keeping the Hive table needs another target name (--target-table)")
    if dst != src and catalog.table_exists(dst) or dst != src and catalog._call(
            lambda c: c.find_table(dst.database, dst.table)) is not None:
        raise AlreadyExists(f"table {dst} already exists")
    staging = Identifier(dst.database, dst.table + PAIMON_SUFFIX)
    if catalog._call(lambda c: c.find_table(staging.database, staging.table)) is not None:
        raise AlreadyExists(f"table {staging} (the staging table of the migration) already exists; drop it first")
    keys = [k.name for k in hms.partitionKeys or []]
    schema = hive_schema(hms, src, opts, hive_columns(catalog, src, hms, command=command), command=command)
    table_schema = new_table_schema(schema)  # refused here, before anything is made
    location = catalog.new_table_location(staging)
    data_root = paths.data_root(local_location(location), table_schema.options.get("data-file.path-directory"))
    fio, target_fio = catalog.file_io_for(hms.sd.location or catalog.warehouse), catalog.file_io_for(location)
    copy = _copies(fio, target_fio, src, command)
    if copy and dst != staging and not target_fio.is_local:
        final = catalog.new_table_location(dst)
        if SchemaManager(target_fio, local_location(final)).latest() is not None:
            raise AlreadyExists(f"{command}: a Paimon table already exists at {final}, where {dst} would go")
    files, fmt, dirs = plan_hive_files(catalog, src, hms, table_schema.fields, keys, table_schema.core_options, 0,
                                       data_root, target_fio, command=command)
    return MigratePlan(catalog.name, "table", src, dst, staging, fmt, hms.sd.location, schema, delete_origin, files,
                       dirs, copy)


def plan_migrate_file(catalog: HiveCatalog, source: str | Identifier, target: str | Identifier, *,
                      delete_origin: bool = True) -> MigratePlan:
    """Java's ``migrate_file``: the Hive table's files into an existing unaware-bucket append
    Paimon table whose partition keys are the Hive table's (names and types)."""
    src = source if isinstance(source, Identifier) else Identifier.parse(source)
    dst = target if isinstance(target, Identifier) else Identifier.parse(target)
    hms = hive_table(catalog, src, command="migrate-file")
    table = catalog.get_table(dst)
    schema = table.schema
    if schema.primary_keys:
        raise InvalidInput(f"table {dst} has a primary key; files can migrate only into an append table")
    if schema.bucket != -1:
        raise InvalidInput(f"table {dst} has bucket={schema.bucket}; files can migrate only into an "
                           "unaware-bucket table (bucket -1)")
    hive_keys = {k.name: hive_to_paimon_type(k.name, k.type, command="migrate-file") for k in hms.partitionKeys or []}
    paimon_keys = {f.name: f.type for f in schema.fields if f.name in schema.partition_keys}
    if {k: _nullable_sql(t) for k, t in hive_keys.items()} != {k: _nullable_sql(t) for k, t in paimon_keys.items()}:
        raise InvalidInput(f"the partition keys of {src} ({', '.join(hive_keys) or 'none'}) are not those of "
                           f"{dst} ({', '.join(schema.partition_keys) or 'none'})")
    fio = catalog.file_io_for(hms.sd.location or catalog.warehouse)
    copy = _copies(fio, table.file_io, src, "migrate-file")
    files, fmt, dirs = plan_hive_files(catalog, src, hms, schema.fields, list(schema.partition_keys),
                                       schema.core_options, schema.id, table.data_root, table.file_io,
                                       command="migrate-file")
    return MigratePlan(catalog.name, "file", src, dst, dst, fmt, hms.sd.location, None, delete_origin, files, dirs,
                       copy)


def _nullable_sql(t: DataType) -> str:
    return t.as_sql().removesuffix(" NOT NULL")


def plan_migrate_database(catalog: HiveCatalog, database: str, *, options: Mapping[str, str] | None = None
                          ) -> MigrateDatabasePlan:
    """Java's ``migrate_database``: every Hive table of ``database`` as :func:`plan_migrate_table`
    (each keeps its name); Paimon tables and views are skipped. One refused table refuses all."""
    entries = catalog.list_table_entries(database)
    plans, skipped = [], []
    for e in entries:
        if e.kind not in ("hive-table", "format-table"):
            skipped.append(e.name)
            continue
        plans.append(plan_migrate_table(catalog, Identifier(database, e.name), options=options,
                                        command="migrate-database"))
    return MigrateDatabasePlan(catalog.name, database, plans, skipped)


# -- doing ---------------------------------------------------------------------------------


def _move_back(fio: FileIO, target_fio: FileIO, moved: list[MigratedFile], copied: bool) -> list[str]:
    """Undo the moves (newest first): renamed files go back, copies are deleted (their originals
    never moved); returns what could not be undone."""
    stuck = []
    for f in reversed(moved):
        try:
            if copied:
                target_fio.delete(f.target)
            else:
                fio.rename_file(f.target, f.source)
        except Exception:  # noqa: BLE001 - keep undoing the others, report the rest
            stuck.append(f"copy {f.target} (unreferenced)" if copied else f"{f.target} -> {f.source}")
    return stuck


def _copy_files(fio: FileIO, table: FileStoreTable, files: list[MigratedFile], started: list[MigratedFile]) -> None:
    """Copy each file to its place in ``table`` (object stores: many at a time); every copy
    begun is noted in ``started`` first, so a failure can delete it. A place already taken or a
    copy of another size than the plan read (the Hive file changed since) fails the run."""
    source = HiveFiles(fio)

    def one(f: MigratedFile) -> None:
        if table.file_io.exists(f.target):
            raise PaimonError(f"{f.target}: already exists")
        started.append(f)
        copy_file(source, table, CloneFile("data", f.source, f.target, f.meta.file_size, False))
        size = table.file_io.file_size(f.target)
        if size != f.meta.file_size:
            raise InvalidInput(f"{f.source} changed since the plan ({f.meta.file_size} bytes read, {size} copied); "
                               "plan again")

    remote = fio.is_object_store or table.file_io.is_object_store
    map_ordered(one, files, max(1, min(len(files), 16 if remote else READ_THREADS)), "paimon-migrate-copy")


def _walk(fio: FileIO, directory: str) -> list[tuple[str, int]]:
    out = []
    for st in fio.list_status(directory):
        out += _walk(fio, st.path) if st.is_dir else [(st.path, st.size)]
    return out


def _relocate(catalog: HiveCatalog, table: FileStoreTable, staging: Identifier, target: Identifier) -> list[str]:
    """Java's rename of the staging table on an object store, done so nothing is lost: every
    file of its directory is copied to the target's (the snapshot directory last, its hints at
    the very end, so the new place holds a table only once it is whole: metadata paths are
    relative to the table), the target registered there, the staging table unregistered, and
    only then its directory deleted. Returns what could not be deleted."""
    location = catalog.new_table_location(target)
    old, new = table.path.rstrip("/"), local_location(location).rstrip("/")
    files = _walk(table.file_io, old)

    def last(item: tuple[str, int]) -> tuple[bool, bool, str]:
        rel = item[0][len(old):]
        return rel.startswith("/snapshot/"), rel.endswith(("/LATEST", "/EARLIEST")), rel

    copies = [CloneFile("meta", p, new + p[len(old):], size, False) for p, size in sorted(files, key=last)]
    body = [c for c in copies if not c.source[len(old):].startswith("/snapshot/")]
    map_ordered(lambda c: copy_file(table, table, c), body, max(1, min(len(body), 16)), "paimon-migrate-relocate")
    for c in copies[len(body):]:
        copy_file(table, table, c)
    catalog.register_table(target, location, table.schema)
    catalog.unregister_table(staging)
    try:
        table.file_io.delete_dir(old)
    except Exception:  # noqa: BLE001 - an unregistered copy left behind is reported
        return [old]
    return []


def _finish_copies(catalog: HiveCatalog, plan: MigratePlan, table: FileStoreTable, fio: FileIO,
                   markers: list[str]) -> None:
    """After the commit, as the rename path: the Hive table dropped (its entry only) and the
    staging table given the target's name; the originals (and, with the Hive table, its
    markers) deleted last. From here a failure loses nothing: it says what is where."""
    if plan.delete_origin:
        catalog._call(lambda c: c.drop_table(plan.source.database, plan.source.table, delete_data=False))
    left: list[str] = []
    if plan.staging != plan.target:
        try:
            if plan.relocates:
                left += _relocate(catalog, table, plan.staging, plan.target)
            else:
                catalog.rename_table(plan.staging, plan.target)
        except Exception as err:  # noqa: BLE001 - the committed staging table and the originals are named
            dropped = "the Hive table was dropped; " if plan.delete_origin else ""
            raise UnsafeRefused(f"migrated {plan.source} into {plan.staging} (committed), but moving it to "
                                f"{plan.target} failed: {err}; {dropped}read {plan.staging}; the original files are "
                                f"kept under {plan.source_location}") from err

    def delete(path: str) -> None:
        try:
            fio.delete(path)
        except Exception:  # noqa: BLE001 - reported below
            left.append(path)

    originals = [f.source for f in plan.files] + (markers if plan.delete_origin else [])
    map_ordered(delete, originals, max(1, min(len(originals), 16 if fio.is_object_store else 1)),
                "paimon-migrate-delete")
    if left:
        raise UnsafeRefused(f"migrated {plan.source} into Paimon table {plan.target}, but {len(left)} file(s) or "
                            f"directories could not be deleted (they are no longer used): {', '.join(left[:5])}"
                            + (" ..." if len(left) > 5 else ""))


def _commit(committer: FileStoreCommit, files: list[MigratedFile], buckets: int) -> None:
    by_partition: dict[bytes, list[DataFileMeta]] = {}
    for f in files:
        by_partition.setdefault(f.partition_row, []).append(f.meta)
    messages = [CommitMessage(p, 0, buckets, new_files=metas) for p, metas in by_partition.items()]
    if messages:
        committer.commit(messages)


def execute_migrate(catalog: HiveCatalog, plan: MigratePlan) -> MigratePlan:
    """Carry out a plan: the staging table, the moves (or copies), one snapshot; then the Hive
    table is dropped and the staging table renamed (copies: the originals deleted last). Until
    the snapshot is published any failure moves the files back (deletes the copies) and drops
    the staging table (the Hive table is untouched)."""
    created = False
    if plan.schema is not None:
        table = catalog.create_table(plan.staging, plan.schema)
        created = True
        if table.schema.id != 0:
            raise PaimonError(f"table {plan.staging}: expected a new schema-0")
    else:
        table = catalog.get_table(plan.staging)
        if table.schema.id != (plan.files[0].meta.schema_id if plan.files else table.schema.id):
            raise InvalidInput(f"table {plan.staging} changed its schema since the plan; plan again")
    fio = catalog.file_io_for(plan.source_location or catalog.warehouse)
    committer = FileStoreCommit(table)
    moved: list[MigratedFile] = []
    try:
        if plan.copy:
            _copy_files(fio, table, plan.files, moved)
        else:
            for f in plan.files:
                fio.rename_file(f.source, f.target)
                moved.append(f)
        _commit(committer, plan.files, table.schema.bucket)
    except BaseException as err:
        if committer.may_have_published():
            # a snapshot may reference the moved files: they stay where it expects them
            raise UnsafeRefused(f"migration of {plan.source}: the commit failed ({err}) after it may have "
                                f"published; the files stay in {plan.staging} and the Hive table is kept. "
                                f"Read {plan.staging} before migrating again") from err
        stuck = _move_back(fio, table.file_io, moved, plan.copy)
        if created:
            try:
                catalog.drop_table(plan.staging, ignore_if_not_exists=True)
            except Exception:  # noqa: BLE001 - a leftover empty staging table is named below
                stuck.append(f"staging table {plan.staging}")
        if stuck:
            raise UnsafeRefused(f"migration of {plan.source} failed ({err}) and could not undo: {'; '.join(stuck)}"
                                ) from err
        raise
    planned = {f.source for f in plan.files} if plan.copy else set()
    listed = [st for d in plan.source_dirs for st in fio.list_status(d) if not st.is_dir]
    late = [st.path for st in listed if not st.name.startswith(("_", ".")) and st.path not in planned]
    if late:  # written into the Hive table since the plan: dropping it would delete them
        raise UnsafeRefused(f"migrated {len(plan.files)} file(s) of {plan.source} into {plan.staging}, but "
                            f"{len(late)} file(s) appeared in the Hive table since the plan (first: {late[0]}); "
                            "the Hive table is kept: migrate them with migrate-file")
    if plan.copy:
        _finish_copies(catalog, plan, table, fio, [st.path for st in listed if st.name.startswith(("_", "."))])
        plan.done = True
        return plan
    if plan.delete_origin:
        catalog._call(lambda c: c.drop_table(plan.source.database, plan.source.table, delete_data=True))
    if plan.staging != plan.target:
        try:
            catalog.rename_table(plan.staging, plan.target)
        except PaimonError as err:
            raise PaimonError(f"migrated {plan.source} into {plan.staging}, but renaming it to {plan.target} "
                              f"failed: {err}") from err
    plan.done = True
    return plan


def execute_migrate_database(catalog: HiveCatalog, plan: MigrateDatabasePlan) -> MigrateDatabasePlan:
    for p in plan.tables:
        execute_migrate(catalog, p)
    plan.done = True
    return plan


def require_hive(catalog: Any, what: str) -> HiveCatalog:
    from .hive import HiveCatalog

    if not isinstance(catalog, HiveCatalog):
        raise InvalidInput(f"{what} needs a Hive catalog (metastore=hive); catalog {catalog.name} is "
                           f"metastore={catalog.options.metastore}")
    return catalog


__all__ = [
    "HiveFiles", "MigrateDatabasePlan", "MigratePlan", "MigratedFile", "execute_migrate", "execute_migrate_database",
    "hive_columns", "hive_file_format", "hive_schema", "hive_table", "hive_to_paimon_type", "plan_hive_files", "plan_migrate_database", "plan_migrate_file", "plan_migrate_table", "require_hive",
]
