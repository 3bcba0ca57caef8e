"""Clone Hive tables into Paimon (Java's ``clone`` with ``clone_from => 'hive'``).

A Hive Parquet/ORC table of the metastore (or each of a database's) is cloned into a Paimon
unaware-bucket append table of any catalog: its files are COPIED, the Hive table is left as it
is. As Java: the target gets the Hive columns and partition keys with ``bucket=-1`` and the
Hive table's ``file.format``; each file goes to ``<partition>/bucket-0`` named
``<name>.<format>``, its meta built from its footer exactly as migration builds it (the code is
shared with :mod:`hive_migrate`); one OVERWRITE commit of the partitions the copy touches. An
existing target must be an append table with bucket -1, the same format and partition keys and
every Hive column (``--if-exists skip`` keeps it). Names are kept, so a re-run copies only what
is missing and commits nothing when the target already holds the files; a name the target
has for other bytes (Hive rewrote the file) gets a new one, never overwriting a used file. A
REST target is created by its server first and the files planned again where it put it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from ..manifest.manifest import DataFileMeta
from ..mergetree.commit_message import CommitMessage
from ..operation.clone import CloneFile, TableClone, apply_table_clone, check_target_conf_held, finish_plan
from ..operation.partition_spec import partition_filter
from ..operation.scan import FileStoreScan, ScanFilter
from ..schema.schema_manager import new_table_schema
from ..schema.table_schema import Schema
from ..table.file_store_table import FileStoreTable
from ..table.identifiers import Identifier
from .base import Catalog, local_location
from .clone import CloneRequest, clone_pairs, server_location
from .hive_migrate import HiveFiles, MigratedFile, hive_columns, hive_schema, hive_table, plan_hive_files, require_hive

if TYPE_CHECKING:
    from pymetastore.hive_metastore import ttypes

    from .hive import HiveCatalog


def _nullable(t: object) -> str:
    return str(t).removesuffix(" NOT NULL")


def check_existing(source: Identifier, schema: Schema, target: FileStoreTable) -> None:
    """Java's check of an existing target, and every Hive column in it under the same type
    (a column the target lacks would be dropped silently)."""
    t = target.schema
    problems = []
    if t.primary_keys:
        problems.append("it has a primary key")
    if t.bucket != -1:
        problems.append(f"bucket is {t.bucket}, not -1")
    want_format = schema.options.get("file.format")
    if want_format and t.core_options.file_format != want_format:
        problems.append(f"file.format is {t.core_options.file_format}, the Hive table's is {want_format}")
    if list(t.partition_keys) != list(schema.partition_keys):
        problems.append(f"partition keys ({', '.join(t.partition_keys) or 'none'}) are not the Hive table's "
                        f"({', '.join(schema.partition_keys) or 'none'})")
    theirs = {f.name: _nullable(f.type) for f in t.fields}
    missing = [f.name for f in schema.fields if theirs.get(f.name) != _nullable(f.type)]
    if missing:
        problems.append(f"it lacks Hive column(s) {', '.join(missing)} (or has another type)")
    if problems:
        raise InvalidInput(f"clone {source} -> {target.identifier}: the existing target cannot take the Hive "
                           f"files: {'; '.join(problems)}; drop it or choose another target")


def _renamed_where_taken(target: FileStoreTable, files: list[MigratedFile]) -> list[MigratedFile]:
    """Hive reuses file names (``000000_0`` again after an INSERT OVERWRITE), Paimon files are
    never rewritten: a planned file keeps its name, or the ``<name>-<uuid>`` an earlier clone
    gave it, when the target's live file of that name is this one (same size, row count and
    stats: a re-run); else it keeps its name only when nothing is there, and otherwise (a
    changed Hive file, a leftover of an interrupted run, a file older snapshots still read) it
    gets a new name, so no file a snapshot uses is overwritten."""
    live: dict[bytes, dict[str, DataFileMeta]] = {}
    snapshot = target.snapshot_manager.latest_snapshot()
    if snapshot is not None:
        touched = {f.partition_row for f in files}
        for e in FileStoreScan(target).plan(snapshot, ScanFilter(partition=touched.__contains__)):
            live.setdefault(e.partition, {})[e.file.file_name] = e.file
    out = []
    for f in files:
        here = live.get(f.partition_row, {})
        stem, fmt = f.meta.file_name.rsplit(".", 1)
        renamed = re.compile(re.escape(stem) + r"-[0-9a-f-]{36}\." + re.escape(fmt))
        same = [n for n, m in here.items() if (n == f.meta.file_name or renamed.fullmatch(n)) and m.level == 0
                and (m.file_size, m.row_count, m.value_stats) == (f.meta.file_size, f.meta.row_count,
                                                                   f.meta.value_stats)]
        name = sorted(same)[0] if same else f.meta.file_name
        if not same and (name in here or target.file_io.exists(f.target)):
            name = f"{stem}-{uuid.uuid4()}.{fmt}"
        if name != f.meta.file_name:
            f = replace(f, target=f"{f.target.rsplit('/', 1)[0]}/{name}", meta=replace(f.meta, file_name=name))
        out.append(f)
    return out


def clone_hive(source_catalog: Catalog, target_catalog: Catalog, req: CloneRequest, *, same_catalog: bool,
               dry_run: bool = False, progress: Callable[[object], None] | None = None) -> list[TableClone]:
    """Plan every table (footers read, targets checked) before anything is written."""
    command = "clone --clone-from hive"
    hive = require_hive(source_catalog, command)
    if req.prefer_file_format is not None:
        raise InvalidInput("--prefer-file-format: a Hive clone copies the files as they are; the target's "
                           "file.format is the Hive table's")

    def hive_tables(database: str) -> list[str]:
        return [e.name for e in hive.list_table_entries(database) if e.kind in ("hive-table", "format-table")]

    plans: list[tuple[TableClone, Schema, HiveFiles, ttypes.Table]] = []
    for src_id, dst_id in clone_pairs(hive, req, hive_tables, "Hive"):
        if same_catalog and src_id == dst_id:
            raise InvalidInput(f"clone {src_id}: the target is the source table")
        hms = hive_table(hive, src_id, command=command)
        schema = hive_schema(hms, src_id, {**req.target_table_conf, "bucket": "-1"},
                             hive_columns(hive, src_id, hms, command=command), command=command)
        files_io = HiveFiles(hive.file_io_for(hms.sd.location or hive.warehouse))
        if target_catalog.table_exists(dst_id):
            if req.if_exists == "skip":
                plans.append((TableClone(str(src_id), str(dst_id), "skip"), schema, files_io, hms))
                continue
            dst = target_catalog.get_table(dst_id)
            check_existing(src_id, schema, dst)
            check_target_conf_held(dst, req.target_table_conf)
            action = "overwrite"
        else:
            # a server that places tables (REST) chooses the location when it creates the
            # table: planned against a placeholder, planned again once it is created
            location = (server_location(dst_id) if target_catalog.server_places_tables
                        else target_catalog.new_table_location(dst_id))
            dst = FileStoreTable(target_catalog.file_io_for(location), local_location(location), dst_id, None,
                                 new_table_schema(schema))
            action = "create"
        clone = _plan_files(hive, src_id, hms, dst, TableClone(str(src_id), str(dst_id), action), files_io, req)
        plans.append((clone, schema, files_io, hms))
    if dry_run:
        return [c for c, _, _, _ in plans]
    out = []
    for clone, schema, files_io, hms in plans:
        dst_id = Identifier.parse(clone.target)
        if clone.action == "create":
            created = target_catalog.create_table(dst_id, schema)
            if created.schema.id != 0:
                raise InvalidInput(f"clone {clone.source}: {dst_id} was created meanwhile; run the clone again")
            if target_catalog.server_places_tables:
                clone = _replanned(hive, target_catalog, Identifier.parse(clone.source), hms, schema, clone,
                                   files_io, req)
        out.append(apply_table_clone(files_io, target_catalog.get_table(dst_id), clone, progress, req.parallelism))
    return out


def _plan_files(hive: HiveCatalog, src_id: Identifier, hms: ttypes.Table, dst: FileStoreTable, clone: TableClone,
                files_io: HiveFiles, req: CloneRequest) -> TableClone:
    """The Hive files (metas from their footers) under the target's names and what the target
    already holds of them; nothing is written."""
    if req.meta_only:
        return clone
    command = "clone --clone-from hive"
    ts = dst.schema
    selection = partition_filter(ts, None, req.where, command=command) if req.where else None
    files, _, _ = plan_hive_files(hive, src_id, hms, ts.fields, list(ts.partition_keys), ts.core_options,
                                  ts.id, dst.data_root, dst.file_io, selection=selection, keep_names=True,
                                  command=command)
    files = _renamed_where_taken(dst, files)
    groups: dict[tuple[bytes, int], CommitMessage] = {}
    copies = []
    for f in files:
        groups.setdefault((f.partition_row, 0), CommitMessage(f.partition_row, 0, ts.bucket)).new_files.append(f.meta)
        copies.append(CloneFile("data", f.source, f.target, f.meta.file_size, False))
    return finish_plan(files_io, dst, clone, groups, copies)


def _replanned(hive: HiveCatalog, catalog: Catalog, src_id: Identifier, hms: ttypes.Table, schema: Schema, clone: TableClone,
               files_io: HiveFiles, req: CloneRequest) -> TableClone:
    """The plan again against the table the server just created, at the location it chose; a
    server that did not keep the columns, partition keys, bucket or format as sent is refused,
    and the empty table it made dropped again, before any file is copied."""
    ident = Identifier.parse(clone.target)
    created = catalog.get_table(ident)
    try:
        check_existing(src_id, schema, created)
        if [(f.id, f.name, str(f.type)) for f in created.schema.fields] != [
                (f.id, f.name, str(f.type)) for f in new_table_schema(schema).fields]:
            raise InvalidInput(f"clone {src_id} -> {ident}: the created table's columns (ids, names, types) "
                               "differ from the Hive table's")
    except InvalidInput as e:
        catalog.drop_table(ident, ignore_if_not_exists=True)
        raise InvalidInput(f"clone {src_id}: catalog {catalog.name} did not create {ident} as sent ({e}); "
                           "dropped it again") from None
    return _plan_files(hive, src_id, hms, created, TableClone(clone.source, clone.target, "create"), files_io, req)


__all__ = ["HiveFiles", "check_existing", "clone_hive"]
