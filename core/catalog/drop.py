"""Dropping tables and databases, as Java's catalogs drop them, decided before it is done.

A managed table's drop deletes its directory (every file under the table's location) after the
metastore forgets it; an external table's files are kept. :func:`plan_drop` lists exactly what
would go (the dry run) and refuses when anything it needs cannot be read; the real drop then
deletes the table's directory (with whatever a writer added meanwhile, as Java's drop does).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InvalidInput, NotFound, NotYetSupported, UnsafeRefused
from ..io.fileio import FileIO
from ..table.identifiers import Identifier, validate_name
from ..utils.rows import Rows
from .base import Catalog, ident_of, local_location

EXTERNAL_PATHS = "data-file.external-paths"


@dataclass
class DroppedTable:
    """One table of a drop: its location, whether its files go, and which they are."""

    identifier: str
    location: str
    managed: bool
    files: list[tuple[str, int]] = field(default_factory=list)  # (path, bytes) deleted with it

    @property
    def bytes(self) -> int:
        return sum(size for _, size in self.files)


@dataclass
class DropPlan:
    """What ``drop`` removes: tables (with their files), and the database when one is dropped."""

    catalog: str
    tables: list[DroppedTable]
    database: str | None = None
    done: bool = False
    root: str | None = None  # the warehouse: a terminal shows locations under it relative to it

    @property
    def file_count(self) -> int:
        return sum(len(t.files) for t in self.tables)

    @property
    def total_bytes(self) -> int:
        return sum(t.bytes for t in self.tables)

    def rows(self) -> Rows:
        rows: list[dict[str, object]] = [{"kind": "table", "name": t.identifier, "location": t.location,
                 "files": "deleted" if t.managed else "kept (external table)",
                 "file_count": len(t.files), "bytes": t.bytes} for t in self.tables]
        if self.database is not None:
            rows.append({"kind": "database", "name": self.database, "location": None, "files": None,
                         "file_count": 0, "bytes": 0})
        return Rows(["kind", "name", "location", "files", "file_count", "bytes"], rows, root=self.root)

    def describe(self) -> str:
        what = f"database {self.database} and " if self.database is not None else ""
        verb = "dropped" if self.done else "would drop"
        return (f"{verb} {what}{len(self.tables)} table(s) from catalog {self.catalog}: "
                f"{self.file_count} file(s), {self.total_bytes} bytes deleted")


def _files_under(fio: FileIO, path: str) -> list[tuple[str, int]]:
    """Every file under ``path`` with its size; an unreadable directory refuses the drop."""
    out: list[tuple[str, int]] = []
    stack = [path]
    while stack:
        d = stack.pop()
        try:
            entries = fio.list_status(d)
        except NotFound:
            continue
        except Exception as e:  # noqa: BLE001 - fail closed: what cannot be listed is not deleted
            raise UnsafeRefused(f"cannot list {d} ({type(e).__name__}: {e}); nothing was dropped") from e
        for s in entries:
            if s.is_dir:
                stack.append(s.path)
            else:
                out.append((s.path, s.size))
    return sorted(out)


def _plan_table(catalog: Catalog, ident: Identifier) -> DroppedTable:
    table = catalog.get_table(ident)  # a Paimon table (others are refused by name)
    location = catalog.table_location(ident)
    managed = catalog.is_managed(ident)
    if managed and table.schema.options.get(EXTERNAL_PATHS):
        raise NotYetSupported(f"drop of {ident}: its data files also live under {EXTERNAL_PATHS}, which drop "
                              "does not delete yet; purge-files it first, or drop it as an external table")
    files = _files_under(table.file_io, local_location(location)) if managed else []
    return DroppedTable(ident.full_name, location, managed, files)


def _root(catalog: Catalog) -> str | None:
    w = catalog.options.warehouse
    return local_location(w) if w else None


def plan_drop_table(catalog: Catalog, identifier: str | Identifier) -> DropPlan:
    return DropPlan(catalog.name, [_plan_table(catalog, ident_of(identifier))], root=_root(catalog))


def plan_drop_database(catalog: Catalog, database: str, cascade: bool = False) -> DropPlan:
    """A database drop: refused while it holds tables unless ``cascade`` (then every Paimon
    table goes with it); tables of other kinds are never dropped by us."""
    validate_name("database", database)
    entries = catalog.list_table_entries(database)
    others = [e for e in entries if not e.is_paimon]
    if others:
        raise NotYetSupported(f"database {database} holds {others[0].kind} {others[0].name}, not a Paimon table: "
                              "drop it with the engine that owns it first")
    if entries and not cascade:
        raise InvalidInput(f"database {database} is not empty ({len(entries)} table(s)); pass --cascade to drop "
                           "its tables too")
    return DropPlan(catalog.name, [_plan_table(catalog, Identifier(database, e.name)) for e in entries], database,
                    root=_root(catalog))


def execute_drop(catalog: Catalog, plan: DropPlan) -> DropPlan:
    """Each table: the metastore forgets it, then its planned files go (managed only); then
    the database. A crash in between leaves unregistered files (orphans of no table), never a
    registered table without files."""
    for t in plan.tables:
        catalog.drop_table(t.identifier)
    if plan.database is not None:
        catalog.drop_database(plan.database)
    plan.done = True
    return plan


def rename_table(catalog: Catalog, src: str, dst: str) -> tuple[str, str]:
    a, b = ident_of(src), ident_of(dst)
    if a == b:
        raise InvalidInput(f"cannot rename {a} to itself")
    catalog.rename_table(a, b)
    return a.full_name, b.full_name
