"""Parse ``DB.TABLE`` and validate database, table, branch and tag names.

Names become directory and file names (``<wh>/<db>.db/<table>``, ``branch/branch-<name>``,
``tag/tag-<name>``), so anything that could escape the warehouse or confuse a later parse is
refused here, before any I/O.

Splitting follows Java Paimon's ``Identifier.fromString``: the text is split at the FIRST
``.`` that is outside backticks, so a database name never contains a dot. Unlike Java we
strip one pair of enclosing backticks from each part (```db`.`t``` == ``db.t``) and then
refuse a ``.`` inside the table name: on a filesystem catalog ``a.b.c`` would be read by Java
as table ``b.c`` in database ``a``, which is almost always a typo.
"""

from __future__ import annotations

from ..errors import InvalidInput
from ..io.paths import check_name_length
from ..utils.values import FrozenValue, set_field

NAME_KINDS = ("database", "table", "branch", "tag", "consumer")

# Java's SYSTEM_TABLE_SPLITTER: "t$snapshots" addresses a system table, "t$branch_b" a branch.
_SYSTEM_SPLITTER = "$"
_SYSTEM_DATABASE = "sys"


def validate_name(kind: str, name: str) -> str:
    """Return ``name`` if it is safe as a ``kind`` name, else raise InvalidInput (one line)."""
    if kind not in NAME_KINDS:
        raise ValueError(f"unknown name kind {kind!r}")
    if name is None or not name.strip():
        raise InvalidInput(f"{kind} name {name!r} is empty")
    check_name_length(kind, name)
    if name != name.strip():
        raise InvalidInput(f"{kind} name {name!r} has leading or trailing whitespace")
    for ch in name:
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            raise InvalidInput(f"{kind} name {name!r} contains a control character")
    if "/" in name or "\\" in name:
        raise InvalidInput(f"{kind} name {name!r} contains a path separator")
    if name in (".", "..") or ".." in name:
        raise InvalidInput(f"{kind} name {name!r} contains '..'")
    if kind == "table" and "." in name:
        raise InvalidInput(f"table name {name!r} contains '.'; write DB.TABLE with exactly one dot")
    if kind == "database" and "." in name:
        raise InvalidInput(f"database name {name!r} contains '.'")
    if kind in ("table", "database") and _SYSTEM_SPLITTER in name:
        raise InvalidInput(
            f"{kind} name {name!r} contains '$' (Paimon's system-table separator); "
            "use `paimon-cli inspect KIND DB.TABLE` for system tables"
        )
    if kind == "branch" and name.isdigit():
        # Java refuses pure numbers: they would clash with snapshot-id time travel.
        raise InvalidInput(f"branch name {name!r} cannot be a pure number")
    return name


def _unquote(part: str) -> str:
    if len(part) >= 2 and part.startswith("`") and part.endswith("`"):
        return part[1:-1]
    return part


def _split_first_dot(text: str) -> list[str]:
    """Split at the first '.' outside backticks (Java Identifier.getPartsFromEscaped)."""
    in_tick = False
    for i, ch in enumerate(text):
        if ch == "`":
            in_tick = not in_tick
        elif ch == "." and not in_tick:
            return [text[:i], text[i + 1 :]]
    return [text]


class Identifier(FrozenValue):
    """A table address: database plus table name, both validated."""

    database: str
    table: str
    FIELDS = __match_args__ = ("database", "table")

    def __init__(self, database: str, table: str) -> None:
        set_field(self, "database", database)
        set_field(self, "table", table)
        validate_name("database", self.database)
        validate_name("table", self.table)

    @staticmethod
    def parse(text: str) -> Identifier:
        """``db.table`` (or ```db`.`table```) to an Identifier; InvalidInput when malformed."""
        if text is None or not text.strip():
            raise InvalidInput("table identifier is empty; expected DB.TABLE")
        parts = _split_first_dot(text)
        if len(parts) != 2:
            raise InvalidInput(f"table identifier {text!r} has no '.'; expected DB.TABLE")
        db, table = (_unquote(p) for p in parts)
        if not db or not table:
            raise InvalidInput(f"table identifier {text!r} has an empty part; expected DB.TABLE")
        return Identifier(db, table)

    @property
    def full_name(self) -> str:
        return f"{self.database}.{self.table}"

    def __str__(self) -> str:
        return self.full_name


def is_system_database(name: str) -> bool:
    """Java reserves ``sys`` for the global system database; the catalog may refuse to create it."""
    return name == _SYSTEM_DATABASE
