"""DB.TABLE parsing (Java Identifier.fromString semantics) and name validation."""

from __future__ import annotations

import pytest

from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.table.identifiers import Identifier, validate_name


@pytest.mark.parametrize(
    ("text", "db", "table"),
    [("db.t", "db", "t"), ("`db`.`t`", "db", "t"), ("my_db.Orders-2024", "my_db", "Orders-2024"), ("d.`t`", "d", "t")],
)
def test_parse(text: str, db: str, table: str) -> None:
    ident = Identifier.parse(text)
    assert (ident.database, ident.table) == (db, table)
    assert str(ident) == f"{db}.{table}"


@pytest.mark.parametrize(
    "text",
    ["", "  ", "nodot", "db.", ".t", "a.b.c", "`a.b`.c", "../x.t", "db.a/b", "db.a\\b", "db..t",
     "db.t$snapshots", "db.t\n", "d\x00b.t", " db.t"],
)
def test_parse_rejects(text: str) -> None:
    with pytest.raises(InvalidInput):
        Identifier.parse(text)


def test_split_is_on_first_dot_outside_backticks() -> None:
    # Java keeps "b.c" as the object name; we refuse it rather than create a dotted table dir.
    with pytest.raises(InvalidInput, match="exactly one dot"):
        Identifier.parse("a.b.c")


@pytest.mark.parametrize("kind", ["branch", "tag"])
@pytest.mark.parametrize("name", ["", "a/b", "..", "x..y", "a\tb", " lead"])
def test_validate_name_rejects(kind: str, name: str) -> None:
    with pytest.raises(InvalidInput):
        validate_name(kind, name)


def test_validate_name_accepts_and_numeric_rules() -> None:
    assert validate_name("branch", "dev-1") == "dev-1"
    assert validate_name("tag", "2024-05-01") == "2024-05-01"
    assert validate_name("tag", "5") == "5"  # Java allows numeric tag names
    with pytest.raises(InvalidInput, match="pure number"):
        validate_name("branch", "10")  # Java refuses numeric branch names
    with pytest.raises(ValueError):
        validate_name("column", "x")
