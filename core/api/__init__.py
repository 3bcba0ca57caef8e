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
