"""The library API, twin of the CLI: what Airflow / Dagster tasks call instead of shelling out.

    from paimon_cli import Warehouse

    wh = Warehouse("s3://lake/warehouse", {"client_kwargs": {"endpoint_url": "http://minio:9000"}})
    t = wh.table("shop.orders")
    t.write(arrow_table)
    t.compact(full=True)
    t.expire(retain_min=5, older_than="2h")
    rows = t.inspect("snapshots").to_arrow()

One method per command, with the command's defaults; each command of the CLI is a thin call
of its twin here. Errors are the classes of ``paimon_cli.core.errors``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..catalog.drop import DropPlan
    from ..catalog.hive_migrate import MigrateDatabasePlan, MigratePlan
    from ..utils.rows import Rows
    from .maintain import MaintainInterrupted, MaintainReport
    from .reports import (
        CompactReport,
        ExpireReport,
        OrphanFilesReport,
        Reader,
        RescaleReport,
        RewriteFileIndexReport,
        RollbackReport,
        WriteReport,
    )
    from .table import ROW_STREAM_KINDS, STREAMED_KINDS, Table
    from .warehouse import Warehouse

# Each name loads its module on first use (PEP 562): a read must not import the write,
# compaction and maintenance code (and numpy, polars) that other verbs need.
_HOME = {
    "CompactReport": ".reports",
    "DropPlan": "..catalog.drop",
    "ExpireReport": ".reports",
    "MaintainInterrupted": ".maintain",
    "MaintainReport": ".maintain",
    "MigrateDatabasePlan": "..catalog.hive_migrate",
    "MigratePlan": "..catalog.hive_migrate",
    "OrphanFilesReport": ".reports",
    "Reader": ".reports",
    "RescaleReport": ".reports",
    "RewriteFileIndexReport": ".reports",
    "RollbackReport": ".reports",
    "ROW_STREAM_KINDS": ".table",
    "Rows": "..utils.rows",
    "STREAMED_KINDS": ".table",
    "Table": ".table",
    "Warehouse": ".warehouse",
    "WriteReport": ".reports",
}

__all__ = [
    "CompactReport",
    "DropPlan",
    "ExpireReport",
    "MaintainInterrupted",
    "MaintainReport",
    "MigrateDatabasePlan",
    "MigratePlan",
    "OrphanFilesReport",
    "Reader",
    "RescaleReport",
    "RewriteFileIndexReport",
    "RollbackReport",
    "ROW_STREAM_KINDS",
    "Rows",
    "STREAMED_KINDS",
    "Table",
    "Warehouse",
    "WriteReport",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home, __name__), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
