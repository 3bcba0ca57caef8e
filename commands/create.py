"""``paimon-cli create``: create a table from a column list or a Paimon schema JSON."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from paimon_cli.options import DebugOpt, FsOpt, WarehouseOpt, open_catalog, parse_identifier, parse_key_values
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
    warehouse: WarehouseOpt = "./warehouse",
    fs_option: FsOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Create a table; the database is created when missing.

    \b
    Example:
        paimon-cli create shop.orders --schema "id BIGINT NOT NULL, name STRING, dt STRING" \\
            --primary-key id,dt --partition-by dt --option bucket=4
    """
    ident = parse_identifier(identifier)
    spec = _schema_spec(schema)
    if primary_key is not None:
        spec["primary_keys"] = _names(primary_key)
    if partition_by is not None:
        spec["partition_keys"] = _names(partition_by)
    spec["options"] = {**spec.get("options", {}), **parse_key_values(option, "--option")}
    if comment is not None:
        spec["comment"] = comment
    from paimon_cli.core.schema.schema_manager import new_table_schema
    from paimon_cli.core.schema.table_schema import Schema

    schema_ = Schema.of(spec.pop("columns"), **spec)  # numbers field ids the way Java does
    catalog = open_catalog(warehouse, fs_option)
    if not (if_not_exists and catalog.table_exists(ident)):
        new_table_schema(schema_)  # refuse before the warehouse or database folder is made
    catalog.create_table(ident.full_name, schema_, if_not_exists)
    note(f"table {ident.full_name} " + ("exists (created now or before)" if if_not_exists else "created"))


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _schema_spec(text: str) -> dict[str, Any]:
    """``--schema`` to Schema keyword arguments: column list, inline JSON or @file (via FileIO)."""
    from paimon_cli.core.data.types import parse_columns

    if text.startswith("@"):
        from paimon_cli.core.io.fileio import load_file_io

        path = text[1:]
        return _spec_from_json(load_file_io(path).read_text(path), path)
    if text.lstrip().startswith("{"):
        return _spec_from_json(text, "--schema")
    return {"columns": parse_columns(text), "partition_keys": [], "primary_keys": [], "options": {}, "comment": None}


def _spec_from_json(text: str, source: str) -> dict[str, Any]:
    """A TableSchema file or ``{fields, partitionKeys, primaryKeys, options, comment}``."""
    from paimon_cli.core.data.types import data_type_from_json
    from paimon_cli.core.errors import InvalidInput
    from paimon_cli.core.utils.json_util import loads_metadata

    obj = loads_metadata(text, source)
    if not isinstance(obj, dict) or not isinstance(obj.get("fields"), list) or not obj["fields"]:
        raise InvalidInput(f"{source}: expected a JSON object with a non-empty \"fields\" list")
    if not all(isinstance(f, dict) and "name" in f and "type" in f for f in obj["fields"]):
        raise InvalidInput(f"{source}: every entry of \"fields\" must be an object with name and type")
    # ids in a schema file are dropped: a new table numbers its fields from 0, as Java does
    columns = [(str(f["name"]), data_type_from_json(f["type"]), f.get("description")) for f in obj["fields"]]
    return {
        "columns": columns,
        "partition_keys": list(obj.get("partitionKeys") or []),
        "primary_keys": list(obj.get("primaryKeys") or []),
        "options": {str(k): str(v) for k, v in (obj.get("options") or {}).items()},
        "comment": obj.get("comment"),
    }
