"""``Warehouse``: the library's entry point, a catalog of tables.

``Warehouse("/wh")`` is the filesystem catalog (``<path>/<db>.db/<table>``);
``Warehouse(catalog="prod")`` a catalog of the catalogs file and ``Warehouse(catalog_options=
{"metastore": "hive", "uri": ...})`` any catalog by Java's options. Nothing is read when a
``Warehouse`` is made: the catalog opens on the first call that needs it, so a script can build
handles before the storage or the metastore is reachable.
"""

from __future__ import annotations

import contextlib
import datetime
import re
import weakref
from collections.abc import Iterator
from functools import cached_property
from typing import IO, TYPE_CHECKING, Any

from ..catalog import Catalog, CatalogOptions, TableEntry, load_catalog, resolve_catalog_options
from ..errors import InvalidInput, NotFound, NotYetSupported, PaimonError
from ..io.fileio import basename, load_file_io, parent
from ..table.identifiers import Identifier, validate_name
from ..utils.interrupt import deferred
from ..utils.progress import StepProgress
from ..utils.rows import Rows
from .arguments import (
    Duration,
    KeyValues,
    Names,
    PointInTime,
    duration_millis,
    key_values,
    name_list,
    point_in_time_millis,
    schema_spec,
    storage_options,
)

if TYPE_CHECKING:
    from ..catalog.base import Registration
    from ..catalog.drop import DropPlan
    from ..catalog.hive_migrate import MigrateDatabasePlan, MigratePlan
    from ..compact.local import Progress
    from .health_report import HealthReport
    from .maintain import MaintainReport
    from .reports import (
        CatalogRepairReport,
        CloneReport,
        DatabaseCompactReport,
        DatabaseOrphanFilesReport,
        TableCompaction,
    )
    from .table import Table


_OPEN: weakref.WeakSet[Warehouse] = weakref.WeakSet()  # warehouses whose catalog is open


def close_open_catalogs() -> None:
    """Close every catalog a :class:`Warehouse` of this process opened (the CLI does at the end
    of each command)."""
    for wh in list(_OPEN):
        with contextlib.suppress(Exception):
            wh.close()


class Warehouse:
    """The tables of one catalog, as the CLI's ``--warehouse`` / ``--catalog`` /
    ``--catalog-option`` / ``--fs-option`` open it.

    ``path``: the warehouse, a local path or URI (``file://``, ``s3://``, ...; overrides the
    catalog's ``warehouse`` option); ``fs_options``: fsspec options as a (nested) mapping, or
    ``key=value`` texts whose dotted keys nest (``client_kwargs.endpoint_url=http://...``),
    with ``PAIMON_FS_OPTIONS`` merged under them; ``catalog``: a catalog's name in the catalogs
    file (else ``PAIMON_CATALOG``); ``catalog_options``: Java's catalog options as a mapping or
    ``key=value`` texts, over ``PAIMON_CATALOG_OPTIONS``. With none: ``./warehouse``.
    """

    def __init__(self, path: str | None = None, fs_options: KeyValues | None = None, *,
                 catalog: str | None = None, catalog_options: KeyValues | None = None) -> None:
        self._path = path
        self._fs_options = fs_options
        self._catalog_name = catalog
        self._catalog_options = catalog_options

    def __repr__(self) -> str:
        if self._catalog_name or self._catalog_options:
            return f"Warehouse(catalog={self._catalog_name or self.catalog_options.label!r})"
        return f"Warehouse({self.path!r})"

    @cached_property
    def catalog_options(self) -> CatalogOptions:
        """The catalog's options, merged from every source and checked (no I/O)."""
        pairs = self._catalog_options
        given = None if pairs is None else key_values(pairs, "--catalog-option")
        return resolve_catalog_options(self._catalog_name, given, self._path)

    @property
    def path(self) -> str:
        """The warehouse root."""
        return self.catalog_options.warehouse or ""

    def describe(self) -> str:
        """``warehouse PATH``, or ``catalog NAME (metastore ...)`` for messages."""
        opts = self.catalog_options
        if opts.metastore == "filesystem" and not opts.name:
            return f"warehouse {self.path}"
        return f"catalog {opts.label} (metastore {opts.metastore}, warehouse {self.path or 'from the metastore'})"

    def cli_selection(self) -> str:
        """The command-line options that select this catalog again (secrets never included:
        a catalog given by secret options is named through its environment variable)."""
        opts = self.catalog_options
        if opts.name:
            return f"--catalog {opts.name}"
        if opts.metastore == "filesystem":
            return f"-w {self.path}"
        return "(with the same --catalog-option / PAIMON_CATALOG_OPTIONS)"

    @cached_property
    def storage_options(self) -> dict[str, Any]:
        """The explicit filesystem options (without ``PAIMON_FS_OPTIONS``)."""
        return storage_options(self._fs_options)

    @cached_property
    def catalog(self) -> Catalog:
        """Core's catalog, for what this API does not cover."""
        catalog = load_catalog(self.catalog_options, self.storage_options)
        _OPEN.add(self)
        return catalog

    def close(self) -> None:
        """Close the catalog's connections to its metastore (the process exit does too)."""
        if "catalog" in self.__dict__:
            self.catalog.close()
            _OPEN.discard(self)

    # -- tables ---------------------------------------------------------------------------------

    def table(self, identifier: str, branch: str | None = None) -> Table:
        """A handle on ``db.table`` (a branch of it with ``branch``); nothing is read yet."""
        from .table import Table  # here: listing databases and tables loads no table code (issue 28)

        return Table(self, identifier, branch)

    def create_table(
        self,
        identifier: str,
        schema: str,
        *,
        primary_key: Names | None = None,
        partition_by: Names | None = None,
        options: KeyValues | None = None,
        comment: str | None = None,
        if_not_exists: bool = False,
    ) -> Table:
        """Create a table (and its database when missing) with schema-0 as Java writes it.

        ``schema``: columns (``"id BIGINT NOT NULL, name STRING"``), a Paimon schema JSON
        (``{"fields": [...], "primaryKeys": [...], ...}``) or ``@path`` of such a file. A
        refused schema leaves no folder behind. ``if_not_exists``: an existing table is kept.
        """
        from ..schema.schema_manager import new_table_schema
        from ..schema.table_schema import Schema
        ident = Identifier.parse(identifier)
        spec = schema_spec(schema)
        if primary_key is not None:
            spec["primary_keys"] = name_list(primary_key)
        if partition_by is not None:
            spec["partition_keys"] = name_list(partition_by)
        spec["options"] = {**spec.get("options", {}), **key_values(options, "--option")}
        if comment is not None:
            spec["comment"] = comment
        new_schema = Schema.of(spec.pop("columns"), **spec)  # numbers field ids the way Java does
        catalog = self.catalog
        if not (if_not_exists and catalog.table_exists(ident)):
            new_table_schema(new_schema)  # refuse before the warehouse or database folder is made
        catalog.create_table(ident.full_name, new_schema, if_not_exists)
        return self.table(ident.full_name)

    def drop_table(self, identifier: str, *, if_exists: bool = False, dry_run: bool = False) -> DropPlan:
        """Drop a table as its catalog's Java counterpart does: the metastore forgets it, then a
        managed table's directory is deleted (an external table's files are kept). ``dry_run``
        lists every file that would go. ``if_exists``: a missing table is no error."""
        from ..catalog.drop import DropPlan, execute_drop, plan_drop_table
        ident = Identifier.parse(identifier)
        if if_exists and not self.catalog.table_exists(ident):
            return DropPlan(self.catalog.name, [], done=not dry_run)
        plan = plan_drop_table(self.catalog, ident)
        return plan if dry_run else execute_drop(self.catalog, plan)

    def drop_database(self, database: str, *, cascade: bool = False, if_exists: bool = False,
                      dry_run: bool = False) -> DropPlan:
        """Drop a database; with ``cascade`` its Paimon tables first (each as :meth:`drop_table`).
        A database holding tables of other kinds is refused by name."""
        from ..catalog.drop import DropPlan, execute_drop, plan_drop_database
        validate_name("database", database)
        if if_exists and not self.catalog.database_exists(database):
            return DropPlan(self.catalog.name, [], done=not dry_run)
        plan = plan_drop_database(self.catalog, database, cascade)
        return plan if dry_run else execute_drop(self.catalog, plan)

    def rename_table(self, identifier: str, new_identifier: str) -> Table:
        """Rename a table (into another database too); a managed table's directory moves with
        its name, as Java moves it."""
        from ..catalog.drop import rename_table
        _, new = rename_table(self.catalog, identifier, new_identifier)
        return self.table(new)

    def migrate_table(self, identifier: str, *, target: str | None = None, options: KeyValues | None = None,
                      delete_origin: bool = True, dry_run: bool = False) -> MigratePlan:
        """Java's ``migrate_table``: Hive Parquet/ORC table ``identifier`` becomes an unaware-bucket
        append Paimon table (named ``target``, default the same), its files moved (on an object
        store copied, the originals deleted after the commit). Everything is decided before a
        file moves; a failed move or commit moves them back (deletes the copies)."""
        from ..catalog.hive_migrate import execute_migrate, plan_migrate_table, require_hive

        catalog = require_hive(self.catalog, "migrate-table")
        plan = plan_migrate_table(catalog, identifier, target=target, options=key_values(options, "--option"),
                                  delete_origin=delete_origin)
        return plan if dry_run else execute_migrate(catalog, plan)

    def migrate_file(self, identifier: str, target: str, *, delete_origin: bool = True,
                     dry_run: bool = False) -> MigratePlan:
        """Java's ``migrate_file``: the files of Hive table ``identifier`` move into the existing
        unaware-bucket append Paimon table ``target`` (one snapshot)."""
        from ..catalog.hive_migrate import execute_migrate, plan_migrate_file, require_hive

        catalog = require_hive(self.catalog, "migrate-file")
        plan = plan_migrate_file(catalog, identifier, target, delete_origin=delete_origin)
        return plan if dry_run else execute_migrate(catalog, plan)

    def migrate_database(self, database: str, *, options: KeyValues | None = None,
                         dry_run: bool = False) -> MigrateDatabasePlan:
        """Java's ``migrate_database``: every Hive table of ``database`` as :meth:`migrate_table`
        (Paimon tables and views skipped); one table that cannot migrate refuses them all."""
        from ..catalog.hive_migrate import execute_migrate_database, plan_migrate_database, require_hive

        validate_name("database", database)
        catalog = require_hive(self.catalog, "migrate-database")
        plan = plan_migrate_database(catalog, database, options=key_values(options, "--option"))
        return plan if dry_run else execute_migrate_database(catalog, plan)

    def list_databases(self) -> list[str]:
        return self.catalog.list_databases()

    def list_tables(self, database: str) -> list[str]:
        """The Paimon tables of ``database``."""
        validate_name("database", database)
        return self.catalog.list_tables(database)

    def list_table_entries(self, database: str) -> list[TableEntry]:
        """Every table the catalog holds in ``database``, Paimon or not, with its kind."""
        validate_name("database", database)
        self.catalog.list_tables(database)  # NotFound for a missing database, with a suggestion
        return sorted(self.catalog.list_table_entries(database), key=lambda e: e.name)

    def inspect(self, kind: str) -> Rows:
        """A system table of the warehouse: ``all-table-options`` or ``catalog-options``."""
        from ..system.registry import CATALOG_TABLES, SYSTEM_TABLES  # not loaded by a listing

        fn = CATALOG_TABLES.get(kind)
        if fn is None:
            if kind in SYSTEM_TABLES:
                raise InvalidInput(f"inspect {kind} is about a table: call Warehouse.table(...).inspect({kind!r})")
            raise NotYetSupported(f"inspect {kind}: not yet supported")
        return fn(self.catalog)

    def health(self, selectors: Names | None = None, *, scan_orphans: bool = False,
               now_millis: int | None = None) -> HealthReport:
        """Findings and a score per table, from metadata only: ``selectors`` are ``db`` or
        ``db.table`` names (none: every table). ``scan_orphans`` also lists storage for orphan
        files. A table whose metadata cannot be read is in the report (score 0, its error);
        an unknown database or table named in ``selectors`` is NotFound."""
        from ..maintain.health import assess_warehouse
        from .health_report import HealthReport
        names = name_list(selectors) if selectors is not None else []
        return HealthReport(assess_warehouse(self.catalog, names, now_millis=now_millis, scan_orphans=scan_orphans),
                            scan_orphans)

    def quickstart(self) -> list[Table]:
        """Create database ``demo`` with a primary-key and an append table holding a few commits
        (the key table fully compacted); tables that already hold data are left as they are."""
        from ..demo import build_demo_warehouse
        return [self.table(name) for name in build_demo_warehouse(self.catalog)]

    # -- fleet upkeep ----------------------------------------------------------------------------

    def compact_database(
        self,
        database: str,
        *,
        including_tables: str | None = None,
        excluding_tables: str | None = None,
        full: bool = False,
        plan: bool = False,
        engine: str = "auto",
        spark_master: str | None = None,
        spark_conf: KeyValues | None = None,
        parallelism: int | None = None,
        max_bytes: int | str | None = None,
        max_buckets: int | None = None,
        expire: bool = True,
        progress: Progress | None = None,
        partition_idle_time: Duration | None = None,
    ) -> DatabaseCompactReport:
        """Java's ``compact_database`` for one database: each Paimon table whose ``db.table``
        name matches ``including_tables`` (a regular expression, whole name; default all) and
        not ``excluding_tables`` is compacted as :meth:`Table.compact` compacts it, one after
        the other, sorted by name. A table that fails is in the report with its error and exit
        code, never raised; the report's ``exit_code`` is the worst. No table selected is
        NotFound, as Java's "no tables to be compacted". ``partition_idle_time`` applies to
        each table as in :meth:`Table.compact`."""
        from .reports import DatabaseCompactReport, TableCompaction

        validate_name("database", database)
        if partition_idle_time is not None:  # bad input fails the run, not each table
            partition_idle_time = datetime.timedelta(
                milliseconds=duration_millis(partition_idle_time, "--partition-idle-time"))
        include = _pattern(including_tables, "--including-tables")
        exclude = _pattern(excluding_tables, "--excluding-tables")
        names = [f"{database}.{t}" for t in self.catalog.list_tables(database)]
        selected = [n for n in names if (include is None or include.fullmatch(n))
                    and not (exclude is not None and exclude.fullmatch(n))]
        if not selected:
            what = "has no Paimon table" if not names else "has no table matching the patterns (matched against " \
                                                           "db.table, as Java's compact_database)"
            raise NotFound(f"compact {database}: the database {what}; no tables to be compacted")
        out: list[TableCompaction] = []
        for name in sorted(selected):
            try:
                report = self.table(name).compact(
                    full=full, plan=plan, engine=engine, spark_master=spark_master, spark_conf=spark_conf,
                    parallelism=parallelism, max_bytes=max_bytes, max_buckets=max_buckets, expire=expire,
                    progress=progress, partition_idle_time=partition_idle_time)
            except PaimonError as e:
                out.append(TableCompaction(name, error=" ".join(str(e).split()), exit_code=e.exit_code))
            except Exception as e:  # noqa: BLE001 - one table's bug must not stop the others (as maintain)
                out.append(TableCompaction(name, error=f"{type(e).__name__}: {e}", exit_code=1))
            else:
                out.append(TableCompaction(name, report))
        return DatabaseCompactReport(database, out, plan)

    def repair(self, target: str | None = None, *, dry_run: bool = False) -> CatalogRepairReport:
        """Java's ``repair`` of '' (every table of every database), ``db`` (every table of it)
        or ``db.table``, comma-separated: each table repaired as :meth:`Table.repair` repairs
        it, in order. Names and databases are checked before any table is repaired; a table
        that fails is in the report with its error and exit code and the others are still
        repaired (Java stops at the first; repair only rewrites hints and metastore entries)."""
        from .reports import CatalogRepairReport, TableRepair

        catalog = self.catalog
        text = (target or "").strip()
        names: list[str] = []
        databases: list[Registration] = []

        def tables_of(database: str) -> list[str]:
            """The catalog's Paimon tables of ``database`` and, where the metastore can name
            them, the tables on storage (Java's repairDatabase registers those)."""
            if not catalog.registers_from_storage:
                return [f"{database}.{t}" for t in catalog.list_tables(database)]
            validate_name("database", database)
            missing = catalog.database_registration(database)
            if missing is not None:
                databases.append(missing)
            listed = catalog.list_tables(database) if missing is None else []
            return [f"{database}.{t}" for t in sorted({*listed, *catalog.storage_tables(database)})]

        if not text:
            found = catalog.list_databases()
            if catalog.registers_from_storage:  # Java's repairCatalog: the warehouse's databases
                found = sorted({*found, *catalog.storage_databases()})
            for database in found:
                names += tables_of(database)
        else:
            for part in (p.strip() for p in text.split(",")):
                pieces = part.split(".")
                if len(pieces) == 1:
                    names += tables_of(part)
                elif len(pieces) == 2:
                    validate_name("database", pieces[0])
                    validate_name("table", pieces[1])
                    names.append(part)
                else:
                    raise InvalidInput(f"repair {part!r}: expected DB or DB.TABLE (Java: cannot get the database "
                                       "and table from it)")
        if not dry_run:
            catalog.register(databases)
        out: list[TableRepair] = []
        for name in dict.fromkeys(names):
            try:
                report = self.table(name).repair(dry_run=dry_run)
            except PaimonError as e:
                out.append(TableRepair(name, error=" ".join(str(e).split()), exit_code=e.exit_code))
            else:
                out.append(TableRepair(name, report))
        return CatalogRepairReport(text or "(the whole catalog)", out, dry_run, databases,
                                   registers=catalog.metastore != "filesystem")

    def remove_orphan_files_database(
        self,
        database: str,
        *,
        older_than: PointInTime | None = None,
        force: bool = False,
        external_paths: bool = False,
        dry_run: bool = False,
        progress: StepProgress | None = None,
    ) -> DatabaseOrphanFilesReport:
        """Java's ``remove_orphan_files`` of ``db.*``: each Paimon table of ``database`` cleaned
        as :meth:`Table.remove_orphan_files` cleans it, in name order, with one ``older_than``
        cut-off for all. As Java opens every table before cleaning any, a table that cannot be
        opened (or whose kind the command refuses) raises with nothing deleted anywhere. A table
        whose metadata cannot be read while planning deletes nothing and is in the report with
        its error and exit code; the others are still cleaned (Java cleans them concurrently)."""
        from ..table.features import Action
        from .reports import DatabaseOrphanFilesReport, TableOrphans

        validate_name("database", database)
        if older_than is not None:  # one cut-off for every table, as Java's olderThanMillis
            older_than = datetime.datetime.fromtimestamp(point_in_time_millis(older_than, "--older-than") / 1000)
        tables = [self.table(f"{database}.{t}") for t in self.catalog.list_tables(database)]
        for t in tables:
            t._open_for(Action.REMOVE_ORPHAN_FILES)
        out: list[TableOrphans] = []
        for t in tables:
            try:
                report = t.remove_orphan_files(older_than=older_than, force=force, external_paths=external_paths,
                                               dry_run=dry_run, progress=progress, engine="local")
            except PaimonError as e:
                out.append(TableOrphans(t.name, error=" ".join(str(e).split()), exit_code=e.exit_code))
            else:
                out.append(TableOrphans(t.name, report))
        return DatabaseOrphanFilesReport(database, out, dry_run)

    def clone(
        self,
        source: str | None,
        target: str | None,
        *,
        target_warehouse: Warehouse | None = None,
        where: str | None = None,
        included_tables: Names | None = None,
        excluded_tables: Names | None = None,
        meta_only: bool = False,
        if_exists: str = "overwrite",
        clone_from: str = "paimon",
        parallelism: int | None = None,
        prefer_file_format: str | None = None,
        target_table_conf: KeyValues | None = None,
        dry_run: bool = False,
    ) -> CloneReport:
        """Java's ``clone`` (Paimon to Paimon): ``source`` DB.TABLE (or DB, each of its tables)
        into ``target`` DB2[.TABLE2] of ``target_warehouse`` (default: this one). A missing
        target is created with the source's schemas (its history; replayed on a REST server)
        and options; the data and index
        files of the source's latest snapshot (the partitions ``where`` selects) are copied
        with their names and committed as one OVERWRITE of the partitions they touch. An
        existing target is overwritten (``if_exists="skip"`` keeps it) when its columns,
        keys and bucket match. A re-run copies only missing files and commits only once.
        ``parallelism``: copy threads; ``prefer_file_format``: ``file.format`` of a created
        target (its later writes; copied files keep their format). ``clone_from="hive"``: this
        is a Hive catalog whose Parquet/ORC tables are cloned (files copied, metas from the
        footers) into unaware-bucket append tables. ``source`` None (and ``target`` None): every
        table of every database, each under its own name in ``target_warehouse``.
        ``target_table_conf``: options of a created target, only those that leave how the
        copied files read unchanged (others: UnsafeRefused, nothing written)."""
        from ..catalog.clone import CloneRequest, clone
        from .reports import CloneReport

        req = CloneRequest(source, target, where, name_list(included_tables) if included_tables else (),
                           name_list(excluded_tables) if excluded_tables else (), meta_only, if_exists, clone_from,
                           parallelism, prefer_file_format, key_values(target_table_conf, "--target-table-conf"))
        dst = self if target_warehouse is None else target_warehouse
        same = target_warehouse is None or target_warehouse is self
        tables = clone(self.catalog, dst.catalog, req, same_catalog=same, dry_run=dry_run)
        return CloneReport("clone", tables, dry_run)

    def copy(self, source_table: str, target_table: str, *, where: str | None = None,
             dry_run: bool = False) -> CloneReport:
        """Spark's ``copy`` procedure: the files of ``source_table`` (the partitions ``where``
        selects) copied into ``target_table`` of this catalog, created when missing, as
        :meth:`clone` copies one table."""
        from ..catalog.clone import CloneRequest, clone
        from .reports import CloneReport

        for name, flag in ((source_table, "SOURCE_TABLE"), (target_table, "TARGET_TABLE")):
            if "." not in name:
                raise InvalidInput(f"copy: {flag} {name!r} must be DB.TABLE")
        req = CloneRequest(source_table, target_table, where)
        return CloneReport("copy", clone(self.catalog, self.catalog, req, same_catalog=True, dry_run=dry_run),
                           dry_run)

    def maintain(
        self,
        selectors: Names | None = None,
        *,
        policy: str | None = None,
        dry_run: bool = False,
        max_duration: Duration | None = None,
        max_bytes: int | str | None = None,
        parallel: int = 1,
        engine: str = "auto",
        spark_master: str | None = None,
        spark_conf: KeyValues | None = None,
        lease_ttl: Duration | None = None,
    ) -> MaintainReport:
        """Apply a maintenance policy (a TOML file; None: each table's options) to the selected
        tables (``"db"`` / ``"db.t"``; none: all), least healthy first, each under a lease so
        concurrent runs never work on one table; ``dry_run`` only plans. Per-table failures are
        in the report (its ``exit_code`` is the worst), never raised."""
        from .maintain import maintain

        return maintain(self, name_list(selectors) if selectors is not None else [], policy=policy,
                        dry_run=dry_run, max_duration=max_duration, max_bytes=max_bytes, parallel=parallel,
                        engine=engine, spark_master=spark_master, spark_conf=spark_conf, lease_ttl=lease_ttl)

    # -- files outside tables -------------------------------------------------------------------

    def open_output(self, path: str) -> IO[bytes]:
        """A new binary file at ``path`` (any filesystem, with this warehouse's options), its
        folder made first: where exports go (``read --to``). Not for table metadata."""
        fio = load_file_io(path, self.storage_options)  # PAIMON_FS_OPTIONS too, as for tables
        fio.mkdirs(parent(path))
        return fio.open_output(path)

    @contextlib.contextmanager
    def open_export(self, path: str) -> Iterator[IO[bytes]]:
        """:meth:`open_output` for a file that appears whole or not at all (``read --to``).

        Why: a read that fails or is interrupted half way must not leave a complete-looking
        file (a closed Parquet writer even adds a valid footer to the rows so far). The rows
        go to a hidden name beside ``path``, renamed onto it when the block ends normally and
        deleted on any error or interrupt (``path`` is then left as it was)."""
        import uuid

        fio = load_file_io(path, self.storage_options)
        if fio.is_dir(path):
            raise InvalidInput(f"{path}: cannot create the file (it is a directory)")
        head, name = parent(path), basename(path)
        tmp = f".{name}.{uuid.uuid4().hex[:12]}.tmp"
        tmp = f"{head}/{tmp}" if head else tmp
        if head:
            fio.mkdirs(head)
        try:
            out = fio.open_output(tmp)
        except InvalidInput as e:
            raise InvalidInput(str(e).replace(tmp, path)) from e
        try:
            with out:
                yield out
            fio.replace_file(tmp, path)
        except BaseException:
            with deferred():
                fio.delete(tmp)
            raise


def _pattern(text: str | None, flag: str) -> re.Pattern[str] | None:
    """A table-name pattern (Java's ``Pattern.compile``; ``matches`` is a whole-name match)."""
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as e:
        raise InvalidInput(f"{flag} {text!r}: not a regular expression ({e})") from None
