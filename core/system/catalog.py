"""``$all_table_options`` and ``$catalog_options``: catalog-wide system tables."""

from __future__ import annotations

from typing import Any

from ..catalog.base import Catalog
from ..utils.rows import Rows

_SECRET_WORDS = ("secret", "password", "token", "key")


def all_table_options(catalog: Catalog) -> Rows:
    rows = []
    for db in catalog.list_databases():
        for t in catalog.list_tables(db):
            tbl = catalog.get_table(f"{db}.{t}")
            for k, v in tbl.schema.options.items():
                rows.append({"database_name": db, "table_name": t, "key": k, "value": v})
    return Rows(["database_name", "table_name", "key", "value"], rows)


def catalog_options(catalog: Catalog) -> Rows:
    """The catalog's options (Java's keys) and the storage options, secrets masked; ``source``
    says where each came from (the catalogs file, the environment, the command line)."""
    rows = [{"key": k, "value": v, "source": catalog.options.sources.get(k, "default")}
            for k, v in catalog.options.masked()]
    if "metastore" not in catalog.options:
        rows.insert(0, {"key": "metastore", "value": catalog.metastore, "source": "default"})

    def walk(prefix: str, d: dict[str, Any]) -> None:
        for k, v in d.items():
            name = f"{prefix}{k}"
            if isinstance(v, dict):
                walk(name + ".", v)
            else:
                hidden = any(w in k.lower() for w in _SECRET_WORDS)
                rows.append({"key": f"fs.{name}", "value": "******" if hidden else str(v), "source": "--fs-option"})

    walk("", catalog.file_io.storage_options)
    return Rows(["key", "value", "source"], rows)
