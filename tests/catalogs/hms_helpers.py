"""Small helpers shared by the Hive Metastore tests."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from paimon_cli.core.catalog.hive_metastore import HiveMetastoreClient
from paimon_cli.core.catalog.hms_table import HMS_MANAGED_PARAMETERS
from paimon_cli.core.io import fileio
from paimon_cli.core.schema.schema_manager import SchemaManager
from paimon_cli.core.schema.table_schema import TableSchema

from .hive_metastore_server import HiveMetastoreServer


def client(server: HiveMetastoreServer, **kw: Any) -> HiveMetastoreClient:
    return HiveMetastoreClient(server.uri, **kw)


def fresh_db(prefix: str = "db") -> str:
    """A database name no other test of the session uses (the metastore is shared)."""
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def schema_on_disk(location: str) -> TableSchema:
    """The latest schema file of the table at ``location`` (a file: URI or a path)."""
    path = location[len("file:"):] if location.startswith("file:") else location
    path = "/" + path.lstrip("/")
    latest = SchemaManager(fileio.load_file_io(path), path).latest()
    assert latest is not None, f"no schema under {path}"
    return latest


def as_plain(obj: Any) -> Any:
    """A Thrift struct (and what it holds) as plain dicts/lists, for comparing field by field."""
    if isinstance(obj, list):
        return [as_plain(x) for x in obj]
    if isinstance(obj, dict):
        return {k: as_plain(v) for k, v in obj.items()}
    if hasattr(obj, "thrift_spec") or hasattr(obj, "__dict__") and type(obj).__module__.startswith("pymetastore"):
        return {k: as_plain(v) for k, v in vars(obj).items()}
    return obj


def comparable_table(table: Any, *, drop_names: bool = False) -> dict[str, Any]:
    """An HMS table as the metastore returns it, minus what the metastore itself sets per call
    (create/access times, DDL time, file statistics)."""
    d = as_plain(table)
    for key in ("createTime", "lastAccessTime"):
        d.pop(key, None)
    d["parameters"] = {k: v for k, v in (d.get("parameters") or {}).items() if k not in HMS_MANAGED_PARAMETERS}
    if drop_names:
        d.pop("tableName", None)
        d["sd"].pop("location", None)
    return d


def comparable_partition(part: Any) -> dict[str, Any]:
    d = as_plain(part)
    for key in ("createTime", "lastAccessTime"):
        d.pop(key, None)
    d["parameters"] = {k: v for k, v in (d.get("parameters") or {}).items() if k not in HMS_MANAGED_PARAMETERS}
    return d


def warehouse_uri(path: Path) -> str:
    return path.as_uri()
