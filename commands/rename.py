"""``paimon-cli rename``: rename a table through its catalog, as Java renames it."""

from typing import Annotated

import typer

from paimon_cli.options import CatalogOpt, CatalogOptionOpt, DebugOpt, FsOpt, WarehouseOpt
from paimon_cli.output import note


def rename(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="The table to rename.")],
    new_identifier: Annotated[str, typer.Argument(metavar="DB.NEW_TABLE", help="Its new name (any database).")],
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Rename DB.TABLE to DB.NEW_TABLE.

    A managed table's directory moves with its name, as Java moves it (local filesystems only:
    on object stores a rename would copy every file, and is refused); an external table keeps
    its location. The target must not exist.

    \b
    Example:
        paimon-cli rename shop.orders shop.orders_2024
    """
    from paimon_cli.core.api import Warehouse

    wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
    table = wh.rename_table(identifier, new_identifier)
    note(f"renamed {identifier} to {table.name}")
