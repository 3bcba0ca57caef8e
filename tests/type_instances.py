"""Instances of every Paimon type class, for tests that compare two dispatches over types.

Nullable and NOT NULL, decimal / time / timestamp precisions at their edges, char / varchar /
binary lengths, nested types (also nested in each other), variant and blob. A test using
this list also asserts (``covers_every_type_class``) that it names every class the type
visitor knows, so a new type class fails those tests until it is listed here.
"""

from __future__ import annotations

from paimon_cli.core.data.type_visitor import VISIT_METHODS
from paimon_cli.core.data.types import DataType, parse_data_type

EVERY_TYPE = [
    "BOOLEAN", "BOOLEAN NOT NULL", "TINYINT", "TINYINT NOT NULL", "SMALLINT", "INT", "INT NOT NULL",
    "BIGINT", "BIGINT NOT NULL", "FLOAT", "DOUBLE", "DOUBLE NOT NULL",
    "DECIMAL(1, 0)", "DECIMAL(10, 2)", "DECIMAL(18, 3)", "DECIMAL(18, 18) NOT NULL", "DECIMAL(19, 0)",
    "DECIMAL(25, 4)", "DECIMAL(38, 0)", "DECIMAL(38, 18) NOT NULL",
    "CHAR(1)", "CHAR(3)", "CHAR(255) NOT NULL", "VARCHAR(1)", "VARCHAR(40)", "STRING", "STRING NOT NULL",
    "BINARY(1)", "BINARY(4)", "VARBINARY(7)", "BYTES", "BYTES NOT NULL",
    "DATE", "DATE NOT NULL", "TIME(0)", "TIME", "TIME(3) NOT NULL", "TIME(6)",
    "TIMESTAMP(0)", "TIMESTAMP(3)", "TIMESTAMP(3) NOT NULL", "TIMESTAMP(4)", "TIMESTAMP(6)", "TIMESTAMP(7)",
    "TIMESTAMP(9)", "TIMESTAMP(0) WITH LOCAL TIME ZONE", "TIMESTAMP(3) WITH LOCAL TIME ZONE",
    "TIMESTAMP(6) WITH LOCAL TIME ZONE", "TIMESTAMP(9) WITH LOCAL TIME ZONE NOT NULL",
    "VARIANT", "BLOB", "BLOB NOT NULL",
    "ARRAY<INT>", "ARRAY<BLOB>", "ARRAY<INT NOT NULL> NOT NULL", "MULTISET<STRING>", "MULTISET<BLOB>",
    "MAP<STRING, INT>", "MAP<BLOB, INT>", "MAP<INT, BLOB>", "MAP<INT, ARRAY<BLOB>>",
    "ROW<a INT, b STRING>", "ROW<a INT, b BLOB>", "ROW<a ROW<b ARRAY<BLOB>>> NOT NULL",
    "ARRAY<ROW<a DECIMAL(38, 2), b TIMESTAMP(9)>>",
]


def every_type() -> list[DataType]:
    return [parse_data_type(s) for s in EVERY_TYPE]


def covers_every_type_class(sqls: list[str]) -> bool:
    return {type(parse_data_type(s)) for s in sqls} == set(VISIT_METHODS)
