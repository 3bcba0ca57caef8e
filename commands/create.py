"""``paimon-cli create``: create a table from a column list or a Paimon schema JSON."""

from typing import Annotated

import typer

from paimon_cli.options import CatalogOpt, CatalogOptionOpt, DebugOpt, FsOpt, WarehouseOpt
from paimon_cli.output import note


def create(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to create.")],
    schema: Annotated[
        str,
        typer.Option("--schema", "-s", metavar="COLUMNS|@FILE", help='Columns ("id BIGINT NOT NULL, name STRING") or @file.json.'),
    ],
    primary_key: Annotated[str | None, typer.Option("--primary-key", metavar="COLS", help="Comma-separated key columns.")] = None,
    partition_by: Annotated[str | None, typer.Option("--partition-by", metavar="COLS", help="Comma-separated columns.")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", metavar="K=V", help="Table option, repeatable.")] = None,
    comment: Annotated[str | None, typer.Option("--comment", metavar="TEXT", help="Table comment.")] = None,
    if_not_exists: Annotated[bool, typer.Option("--if-not-exists", help="Succeed if the table exists.")] = False,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Create a table; the database is created when missing.

    \b
    Example:
        paimon-cli create shop.orders --schema "id BIGINT NOT NULL, name STRING, dt STRING" \\
            --primary-key id,dt --partition-by dt --option bucket=4
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).create_table(
        identifier, schema, primary_key=primary_key, partition_by=partition_by, options=option, comment=comment,
        if_not_exists=if_not_exists,
    )
    note(f"table {table.name} " + ("exists (created now or before)" if if_not_exists else "created"))
