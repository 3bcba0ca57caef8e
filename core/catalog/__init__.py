"""Catalogs: where tables are registered (filesystem, Hive Metastore, JDBC, REST), one protocol.

:func:`load_catalog` picks the metastore module by Java's ``metastore`` option; each module is
imported only when its metastore is asked for, so its client library is needed only then.
"""

from __future__ import annotations

from typing import Any

from ..errors import NotYetSupported
from .base import Catalog, TableEntry
from .config import resolve_catalog_options
from .options import CatalogOptions

__all__ = ["Catalog", "CatalogOptions", "TableEntry", "load_catalog", "resolve_catalog_options"]


def load_catalog(options: CatalogOptions, storage_options: dict[str, Any] | None = None) -> Catalog:
    """The catalog ``options`` describe; nothing is contacted until a call needs it."""
    metastore = options.metastore
    if metastore == "filesystem":
        from .filesystem import FileSystemCatalog

        return FileSystemCatalog(options, storage_options)
    if metastore == "hive":
        from .hive import HiveCatalog

        return HiveCatalog(options, storage_options)
    if metastore == "jdbc":
        from .jdbc import JdbcCatalog

        return JdbcCatalog(options, storage_options)
    if metastore == "rest":
        from .rest import RestCatalog

        return RestCatalog(options, storage_options)
    raise NotYetSupported(f"metastore={metastore}: not supported yet")
