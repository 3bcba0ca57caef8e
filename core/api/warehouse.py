"""``Warehouse``: the library's entry point, a filesystem catalog (``<path>/<db>.db/<table>``).

Nothing is read when a ``Warehouse`` is made: the catalog opens on the first call that needs
it, so a script can build handles before the storage is reachable.
"""

from __future__ import annotations

from functools import cached_property
from typing import IO, TYPE_CHECKING, Any

from ..demo import build_demo_warehouse
from ..errors import InvalidInput, NotYetSupported
from ..io.fileio import load_file_io, parent
from ..maintain.health import assess_warehouse
from ..schema.schema_manager import new_table_schema
from ..schema.table_schema import Schema
from ..system.registry import CATALOG_TABLES, SYSTEM_TABLES
from ..table.catalog import FileSystemCatalog
from ..table.identifiers import Identifier, validate_name
from ..utils.rows import Rows
from .arguments import Duration, KeyValues, Names, key_values, name_list, schema_spec, storage_options
from .health_report import HealthReport
from .table import Table

if TYPE_CHECKING:
    from .maintain import MaintainReport


class Warehouse:
    """A warehouse of Paimon tables, as the CLI's ``--warehouse`` / ``--fs-option`` open it.

    ``path``: a local path or URI (``file://``, ``s3://``, ...); ``fs_options``: fsspec
    options as a (nested) mapping, or ``key=value`` texts whose dotted keys nest
    (``client_kwargs.endpoint_url=http://...``). ``PAIMON_FS_OPTIONS`` is merged under them.
    """

    def __init__(self, path: str, fs_options: KeyValues | None = None) -> None:
        self.path = path
        self._fs_options = fs_options

    def __repr__(self) -> str:
        return f"Warehouse({self.path!r})"

    @cached_property
    def storage_options(self) -> dict[str, Any]:
        """The explicit filesystem options (without ``PAIMON_FS_OPTIONS``)."""
        return storage_options(self._fs_options)

    @cached_property
    def catalog(self) -> FileSystemCatalog:
        """Core's catalog, for what this API does not cover."""
        return FileSystemCatalog(self.path, self.storage_options)

    # -- tables ---------------------------------------------------------------------------------

    def table(self, identifier: str, branch: str | None = None) -> Table:
        """A handle on ``db.table`` (a branch of it with ``branch``); nothing is read yet."""
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
        return Table(self, ident.full_name)

    def list_databases(self) -> list[str]:
        return self.catalog.list_databases()

    def list_tables(self, database: str) -> list[str]:
        validate_name("database", database)
        return self.catalog.list_tables(database)

    def inspect(self, kind: str) -> Rows:
        """A system table of the warehouse: ``all-table-options`` or ``catalog-options``."""
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
        names = name_list(selectors) if selectors is not None else []
        return HealthReport(assess_warehouse(self.catalog, names, now_millis=now_millis, scan_orphans=scan_orphans),
                            scan_orphans)

    def quickstart(self) -> list[Table]:
        """Create database ``demo`` with a primary-key and an append table holding a few commits
        (the key table fully compacted); tables that already hold data are left as they are."""
        return [Table(self, name) for name in build_demo_warehouse(self.catalog)]

    # -- fleet upkeep ----------------------------------------------------------------------------

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
