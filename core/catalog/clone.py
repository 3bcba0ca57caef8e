"""Clone tables between two catalogs (Java's Flink ``clone`` / Spark ``copy``, Paimon to Paimon).

Which tables, and the target each gets (created with the source's latest schema and options,
``path`` stripped), is decided here; the files of one table are planned and copied by
:mod:`core.operation.clone`. Everything refused is refused before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import InvalidInput, NotFound, NotYetSupported, PaimonError
from ..operation.clone import (
    IF_EXISTS,
    STRIPPED_OPTIONS,
    TARGET_TABLE_CONF,
    TableClone,
    apply_table_clone,
    check_cloneable,
    check_compatible,
    check_target_conf_held,
    check_target_table_conf,
    plan_table_clone,
)
from ..operation.partition_spec import partition_filter
from ..schema import schema_change as sc
from ..schema.schema_change import SchemaChange, apply_changes
from ..schema.schema_manager import new_table_schema
from ..schema.schema_validation import validate_table_schema
from ..schema.table_schema import Schema, TableSchema
from ..table.features import Action, check_features
from ..table.file_store_table import FileStoreTable
from ..table.identifiers import Identifier, validate_name
from .base import Catalog, local_location

CLONE_FROM = ("paimon", "hive")


@dataclass(frozen=True)
class CloneRequest:
    source: str | None  # DB.TABLE, DB, or None: every table of every database
    target: str | None  # DB2.TABLE2 or DB2 (a table keeps its name in DB2); None with a whole catalog
    where: str | None = None
    included_tables: Sequence[str] = ()
    excluded_tables: Sequence[str] = ()
    meta_only: bool = False
    if_exists: str = "overwrite"
    clone_from: str = "paimon"
    parallelism: int | None = None  # copy threads (default: 4, 16 with an object store)
    prefer_file_format: str | None = None  # file.format of a created target (its new files)
    target_table_conf: dict[str, str] = field(default_factory=dict)  # options of a created target


def clone_pairs(source: Catalog, req: CloneRequest, tables: Callable[[str], list[str]] | None = None,
                kind: str = "Paimon") -> list[tuple[Identifier, Identifier]]:
    """(source, target) identifiers, as Java's ``ClonePaimonTableUtils.buildSource``;
    ``tables`` lists a database's ``kind`` tables (default: its Paimon tables)."""
    if req.clone_from not in CLONE_FROM:
        raise InvalidInput(f"--clone-from {req.clone_from!r}: expected paimon or hive")
    if req.parallelism is not None and req.parallelism < 1:
        raise InvalidInput(f"--parallelism {req.parallelism}: expected 1 or more")
    if req.prefer_file_format is not None and req.prefer_file_format.lower() not in ("parquet", "orc", "avro"):
        raise InvalidInput(f"--prefer-file-format {req.prefer_file_format!r}: expected parquet, orc or avro")
    if req.if_exists not in IF_EXISTS:
        raise InvalidInput(f"--if-exists {req.if_exists!r}: expected one of {', '.join(IF_EXISTS)}")
    check_target_table_conf(req.target_table_conf)
    if req.source is None:
        return _catalog_pairs(source, req, tables, kind)
    if req.target is None:
        raise InvalidInput(f"clone {req.source}: --target is required (only a whole-catalog clone, no source, "
                           "keeps every database's name)")
    if "." in req.source:
        if req.included_tables or req.excluded_tables:
            raise InvalidInput("--included-tables / --excluded-tables select tables of a database; "
                               "the source is one table")
        src = Identifier.parse(req.source)
        dst = Identifier.parse(req.target) if "." in req.target else Identifier(_db(req.target), src.table)
        return [(src, dst)]
    if "." in req.target:
        raise InvalidInput(f"--target {req.target!r}: cloning database {req.source} needs a target database, "
                           "not a table")
    database, target_db = _db(req.source), _db(req.target)
    included, excluded = set(req.included_tables), set(req.excluded_tables)
    names = [f"{database}.{t}" for t in (tables or source.list_tables)(database)]
    selected = [n for n in names if n not in excluded and (not included or n in included)]
    if not selected:
        raise NotFound(f"clone {database}: no table to clone (the database has {len(names)} {kind} tables; "
                       "--included-tables / --excluded-tables name them as db.table)")
    return [(Identifier.parse(n), Identifier(target_db, Identifier.parse(n).table)) for n in sorted(selected)]


def _catalog_pairs(source: Catalog, req: CloneRequest, tables: Callable[[str], list[str]] | None,
                   kind: str) -> list[tuple[Identifier, Identifier]]:
    """Java's clone without a database: every table of every database, under the same names."""
    if req.target is not None:
        raise InvalidInput(f"--target {req.target!r}: a whole-catalog clone (no source) keeps every database's and "
                           "table's name; give a source DB or DB.TABLE to rename")
    if req.where:
        raise InvalidInput("--where selects partitions of one table; the source is a whole catalog")
    included, excluded = set(req.included_tables), set(req.excluded_tables)
    names = [f"{db}.{t}" for db in sorted(source.list_databases()) for t in (tables or source.list_tables)(db)]
    selected = sorted(n for n in names if n not in excluded and (not included or n in included))
    if not selected:
        raise NotFound(f"clone: no table to clone (the catalog has {len(names)} {kind} tables; "
                       "--included-tables / --excluded-tables name them as db.table)")
    return [(Identifier.parse(n), Identifier.parse(n)) for n in selected]


def _db(name: str) -> str:
    validate_name("database", name)
    return name


def clone(source_catalog: Catalog, target_catalog: Catalog, req: CloneRequest, *, same_catalog: bool,
          dry_run: bool = False, progress: Callable[[object], None] | None = None) -> list[TableClone]:
    """Plan every table first against its existing or would-be target, so any refusal comes
    before anything is written; then create, copy and commit table by table."""
    if req.source is None and same_catalog:
        raise InvalidInput("clone of a whole catalog: every table would be its own target; give the target "
                           "catalog (--target-warehouse / --target-catalog / --target-catalog-option)")
    if req.clone_from == "hive":
        from .hive_clone import clone_hive

        return clone_hive(source_catalog, target_catalog, req, same_catalog=same_catalog, dry_run=dry_run,
                          progress=progress)
    plans: list[tuple[FileStoreTable, TableClone, Schema, bool]] = []
    for src_id, dst_id in clone_pairs(source_catalog, req):
        if same_catalog and src_id == dst_id:
            raise InvalidInput(f"clone {src_id}: the target is the source table")
        src = source_catalog.get_table(src_id)
        check_features(src, Action.CLONE)
        check_cloneable(src)
        selection = partition_filter(src.schema, None, req.where, command="clone") if req.where else None
        schema = target_schema(src, req.prefer_file_format, req.target_table_conf)
        exists = target_catalog.table_exists(dst_id)
        server = target_catalog.server_places_tables
        history = not exists and _has_history(src)
        action = ("overwrite" if req.if_exists == "overwrite" else "skip") if exists else "create"
        if exists:
            dst = target_catalog.get_table(dst_id)
            if action == "overwrite" and _history_started(src, dst) and (
                    not server or not server_differences(dst.schema, _history(src, schema)[dst.schema.id])):
                # an earlier run stopped while carrying the schema history: finish it first
                # (through a server: only where its last schema is the replay's, options too)
                action, history = "resume", True
                if server:
                    check_replayable(src, dst_id, schema, dst.schema.id)
                dst = dst.with_schema(replace(dst.schema, id=src.schema.id))
            elif action == "overwrite":
                check_compatible(src, dst)
                check_target_conf_held(dst, req.target_table_conf)
        else:
            location = (server_location(dst_id) if target_catalog.server_places_tables
                        else target_catalog.new_table_location(dst_id))
            would_be = new_table_schema(schema)
            if history:
                would_be = replace(would_be, id=src.schema.id, highest_field_id=src.schema.highest_field_id)
            dst = FileStoreTable(target_catalog.file_io_for(location), local_location(location), dst_id, None,
                                 would_be)
        plan = (TableClone(str(src.identifier), str(dst_id), action) if req.meta_only
                else plan_table_clone(src, dst, action, selection, carried_history=history))
        if server and action == "create" and history:
            # the server owns the schemas: the history is replayed through its alter-table
            # endpoint, and only when live files need it (fewer calls a server can get wrong)
            history = any(f.schema_id != src.schema.id for m in plan.messages for f in m.new_files)
            if history:
                check_replayable(src, dst_id, schema, 0)
        plans.append((src, plan, schema, history))
    if dry_run:
        return [plan for _, plan, _, _ in plans]
    out = []
    for src, plan, schema, history in plans:
        dst_id = Identifier.parse(plan.target)
        if plan.action == "create":
            create_target(target_catalog, dst_id, src, schema, history)
            if target_catalog.server_places_tables:
                plan = _replanned(target_catalog, dst_id, src, plan, req, schema)
        elif plan.action == "resume":
            if target_catalog.server_places_tables:
                replay_history(target_catalog, dst_id, src, schema, created=False)
            else:
                _publish_history(target_catalog, dst_id, src, schema)
        out.append(apply_table_clone(src, target_catalog.get_table(dst_id), plan, progress, req.parallelism))
    return out


def server_location(ident: Identifier) -> str:
    """What a plan names a new table's location before a server that places tables chose it
    (no file system has it, so nothing is found present there)."""
    return f"<location the server gives {ident}>"


def _replanned(catalog: Catalog, ident: Identifier, source: FileStoreTable, plan: TableClone,
               req: CloneRequest, schema: Schema) -> TableClone:
    """The plan again against the table the server just created, at the location it chose;
    a server that did not keep the columns (field ids), keys or the options that decide how
    files read as sent is refused, and the empty table it made dropped again, before any file
    is copied."""
    created = catalog.get_table(ident)
    try:
        check_compatible(source, created)
        differ = server_differences(created.schema, replace(new_table_schema(schema), id=created.schema.id))
        if differ:
            raise InvalidInput("; ".join(differ))
    except InvalidInput as e:
        catalog.drop_table(ident, ignore_if_not_exists=True)
        raise InvalidInput(f"clone {source.identifier}: catalog {catalog.name} did not create {ident} as sent "
                           f"({e}); dropped it again") from None
    if req.meta_only:
        return plan
    selection = partition_filter(source.schema, None, req.where, command="clone") if req.where else None
    return plan_table_clone(source, created, "create", selection)


def _has_history(source: FileStoreTable) -> bool:
    """Whether the source's schemas are ids 0..latest (Java never deletes one), so a new
    target can carry them all and every copied file keeps the schema it was written with."""
    return source.schema.id > 0 and source.schema_manager.list_ids() == list(range(source.schema.id + 1))


def create_target(catalog: Catalog, ident: Identifier, source: FileStoreTable, schema: Schema,
                  history: bool) -> FileStoreTable:
    """Create the target; with ``history`` its schema-0 is the source's and the later schemas
    are the source's files under the same ids (``path`` stripped), the metastore brought in
    step with the latest."""
    if not history:
        return catalog.create_table(ident, schema)
    schemas = _history(source, schema)
    for h in schemas:
        validate_table_schema(h)  # refused before the target exists, not half-way
    first = schemas[0]
    catalog.create_table(ident, Schema(list(first.fields), list(first.partition_keys), list(first.primary_keys),
                                       dict(first.options), first.comment))
    if catalog.server_places_tables:
        return replay_history(catalog, ident, source, schema, created=True)
    return _publish_history(catalog, ident, source, schema)


def _history(source: FileStoreTable, schema: Schema) -> list[TableSchema]:
    """The source's schemas 0..latest as the target gets them: ``path`` stripped, the latest
    with the clone's own options."""
    out = [_stripped(source.schema_manager.schema(sid)) for sid in range(source.schema.id + 1)]
    out[-1] = replace(out[-1], options=dict(schema.options))
    return out


def _history_started(source: FileStoreTable, target: FileStoreTable) -> bool:
    """A target with no snapshot whose schemas are the first of the source's history (a run
    stopped between creating it and writing its later schemas)."""
    if not _has_history(source) or target.snapshot_manager.latest_snapshot() is not None:
        return False
    ids = target.schema_manager.list_ids()
    if ids != list(range(len(ids))) or len(ids) > source.schema.id:
        return False
    return all(_same_columns(target.schema_manager.schema(i), source.schema_manager.schema(i)) for i in ids)


def _same_columns(a: TableSchema, b: TableSchema) -> bool:
    return ([(f.id, f.name, str(f.type)) for f in a.fields], a.partition_keys, a.primary_keys) == (
        [(f.id, f.name, str(f.type)) for f in b.fields], b.partition_keys, b.primary_keys)


def _publish_history(catalog: Catalog, ident: Identifier, source: FileStoreTable, schema: Schema) -> FileStoreTable:
    """Write the source's later schemas the target does not have yet (a re-run finishes what
    an interrupted one started), then bring the metastore in step with the latest."""
    created = catalog.get_table(ident)
    manager = created.schema_manager
    before = manager.latest() or created.schema
    for h in _history(source, schema):
        if not manager.schema_exists(h.id):
            manager.publish_copy(h)
    catalog.after_alter(ident, before, manager.latest() or before)
    return catalog.get_table(ident)


def schema_changes_between(old: TableSchema, new: TableSchema) -> list[SchemaChange]:
    """The ALTER changes that make ``new`` of ``old`` (columns matched by field id): drops,
    renames, type changes, then the added columns in field-id order (ids are drawn in that
    order), each appended or placed after its predecessor in ``new``; then options and the
    comment. What they cannot express (a reorder, a nullability change, ...) shows when they
    are applied."""
    before = {f.id: f for f in old.fields}
    after = {f.id: f for f in new.fields}
    changes: list[SchemaChange] = [sc.DropColumn(f.name) for f in old.fields if f.id not in after]
    changes += [sc.RenameColumn(before[f.id].name, f.name) for f in new.fields
                if f.id in before and before[f.id].name != f.name]
    changes += [sc.UpdateColumnType(f.name, f.type) for f in new.fields
                if f.id in before and before[f.id].type != f.type]
    present = set(before) & set(after)
    order = [f.id for f in new.fields]
    for f in sorted((f for f in new.fields if f.id not in before), key=lambda f: f.id):
        pos = order.index(f.id)
        prior = [after[i].name for i in order[:pos] if i in present]
        if not any(i in present for i in order[pos + 1:]):  # appended: no move asked of the server
            changes.append(sc.AddColumn(f.name, f.type, f.description))
        else:
            changes.append(sc.AddColumn(f.name, f.type, f.description, after=prior[-1] if prior else None,
                                        first=not prior))
        present.add(f.id)
    moved = apply_changes(old, changes, has_snapshots=False) if changes else old
    changes += [sc.SetOption(k, v) for k, v in new.options.items() if moved.options.get(k) != v]
    changes += [sc.RemoveOption(k) for k in moved.options if k not in new.options]
    if new.comment != old.comment or not changes:  # a step that changes nothing still takes an id
        changes.append(sc.UpdateComment(new.comment))
    return changes


def _columns(schema: TableSchema) -> list[tuple[int, str, Any, str | None]]:
    """What decides how a file reads: field ids, names, types (nested ids too), defaults."""
    return [(f.id, f.name, f.type.to_json(), f.default_value) for f in schema.fields]


def server_differences(got: TableSchema, want: TableSchema) -> list[str]:
    """How the schema a server made differs from the one sent, in what decides how the copied
    files read: id, columns, keys, options (but those of ``--target-table-conf``'s allowlist)."""
    out = []
    if got.id != want.id:
        out.append(f"schema id {got.id}, expected {want.id}")
    if _columns(got) != _columns(want):
        theirs = {f.name: f for f in got.fields}
        for f in want.fields:
            g = theirs.pop(f.name, None)
            if g is None:
                out.append(f"no column {f.name}")
            elif g.id != f.id:
                out.append(f"column {f.name} has field id {g.id}, expected {f.id}")
            elif (g.type.to_json(), g.default_value) != (f.type.to_json(), f.default_value):
                out.append(f"column {f.name} is {g.type.as_sql()}, expected {f.type.as_sql()}")
        out += [f"unexpected column {n}" for n in theirs]
        if len(out) == (got.id != want.id):
            out.append(f"columns in the order {', '.join(f.name for f in got.fields)}, expected "
                       f"{', '.join(f.name for f in want.fields)}")
    if got.highest_field_id != want.highest_field_id:
        out.append(f"highest field id {got.highest_field_id}, expected {want.highest_field_id}")
    if list(got.partition_keys) != list(want.partition_keys):
        out.append(f"partition keys {got.partition_keys}, expected {want.partition_keys}")
    if list(got.primary_keys) != list(want.primary_keys):
        out.append(f"primary keys {got.primary_keys}, expected {want.primary_keys}")
    for k in sorted(set(got.options) | set(want.options)):
        if got.options.get(k) != want.options.get(k) and k not in TARGET_TABLE_CONF:
            out.append(f"option {k} = {got.options.get(k)!r}, expected {want.options.get(k)!r}")
    return out


def check_replayable(source: FileStoreTable, ident: Identifier, schema: Schema, start: int) -> None:
    """Refuse, before anything is created, a schema history the REST API cannot replay step by
    step (each source schema after ``start`` made of the one before by one ALTER)."""
    schemas = _history(source, schema)
    for h in schemas:
        validate_table_schema(h)
    for k in range(start + 1, len(schemas)):
        try:
            made = replace(apply_changes(schemas[k - 1], schema_changes_between(schemas[k - 1], schemas[k]),
                                         has_snapshots=False), id=k)
            differ = server_differences(made, schemas[k])
        except PaimonError as e:
            differ = [str(e)]
        if differ:
            raise NotYetSupported(
                f"clone {source.identifier} -> {ident}: live files were written with older schemas, which the REST "
                f"server must replay, but schema {k} of the source cannot be made from schema {k - 1} through the "
                f"REST API ({'; '.join(differ)}); `paimon-cli compact {source.identifier} --full` the source first")


def replay_history(catalog: Catalog, ident: Identifier, source: FileStoreTable, schema: Schema, *,
                   created: bool) -> FileStoreTable:
    """Give a table the server created the source's later schemas through its alter-table
    endpoint, one ALTER per schema, each checked on return (id, field ids, names, types, keys,
    options). A server whose schema differs is refused, and a table this run ``created`` (it
    has no snapshot yet) dropped again. A re-run after an interruption replays only what is
    missing."""
    schemas = _history(source, schema)
    table = catalog.get_table(ident)
    step = start = table.schema.id
    try:
        differ = server_differences(table.schema, schemas[step])
        while not differ and step + 1 < len(schemas):
            step += 1
            catalog.alter_table(ident, schema_changes_between(table.schema, schemas[step]))
            table = catalog.get_table(ident)
            differ = server_differences(table.schema, schemas[step])
        if not differ:
            return table
        problem = f"schema {step}: {'; '.join(differ)}"
    except (InvalidInput, NotYetSupported) as e:  # the server refused a change
        problem = f"schema {step}: {e}"
    if created:
        catalog.drop_table(ident, ignore_if_not_exists=True)
        raise InvalidInput(f"clone {source.identifier}: catalog {catalog.name} did not replay the source's schema "
                           f"history on {ident} as sent ({problem}); dropped it again, nothing committed")
    left = "nothing changed" if step == start else f"its latest schema now is {catalog.get_table(ident).schema.id}"
    raise InvalidInput(f"clone {source.identifier}: the existing target {ident} does not take the source's schema "
                       f"history through catalog {catalog.name} ({problem}); {left}, nothing committed; drop it or "
                       "choose another target")


def _stripped(schema: TableSchema) -> TableSchema:
    return replace(schema, options={k: v for k, v in schema.options.items() if k not in STRIPPED_OPTIONS})


def target_schema(source: FileStoreTable, prefer_file_format: str | None = None,
                  conf: dict[str, str] | None = None) -> Schema:
    """The source's latest schema (field ids kept, so the copied files read the same) and
    options but where the table lives, with ``conf`` (checked by ``check_target_table_conf``)
    over them; ``prefer_file_format`` sets ``file.format`` (Java's ``prefer_file_format``:
    copied files keep theirs, readers go by each file's extension)."""
    s = source.schema
    options = {k: v for k, v in s.options.items() if k not in STRIPPED_OPTIONS} | dict(conf or {})
    if prefer_file_format:
        options["file.format"] = prefer_file_format.lower()
    return Schema(list(s.fields), list(s.partition_keys), list(s.primary_keys), options, s.comment)
