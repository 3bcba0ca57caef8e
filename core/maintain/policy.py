"""The ``maintain`` policy: which procedures may run on which table, read from a TOML file.

A missing policy means "what each table's options say": every procedure health can call for
is allowed, retention comes from the table's own options (the procedures read them), and a
scheduled full compaction follows the table's ``compaction.optimization-interval``. The file
only overrides, from the broadest scope to the narrowest::

    [defaults]                      # every selected table
    [databases.shop]                # the tables of database shop
    [tables."shop.orders"]          # one table

Orphan removal is the one procedure that is off unless a policy turns it on: it lists the
table's storage, and its ``older-than`` never goes below one day unless the policy says so by
name (``orphan-files-allow-under-1d``). Unknown keys are refused with a did-you-mean, so a typo
never silently disables a safeguard.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ..errors import InvalidInput
from ..utils.durations import parse_duration, parse_duration_millis

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, published as tomli before it joined the stdlib
    import tomli as tomllib

DAY_MILLIS = 86_400_000
HOUR_MILLIS = 3_600_000
SECTIONS = ("defaults", "databases", "tables")


@dataclass(frozen=True)
class TableRules:
    """What ``maintain`` may do on one table (the policy resolved for it)."""

    compact: bool = True
    full_compaction_interval_millis: int | None = None  # None: no scheduled full compaction
    expire_snapshots: bool = True
    expire_changelogs: bool = True
    expire_partitions: bool = True
    expire_tags: bool = True
    compact_manifest: bool = True
    rewrite_file_index: bool = True
    remove_orphan_files: bool = False
    orphan_files_older_than_millis: int = DAY_MILLIS
    orphan_files_allow_under_1d: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {_key_of(f.name): getattr(self, f.name) for f in fields(self)}


def _key_of(attr: str) -> str:
    return attr.removesuffix("_millis").replace("_", "-")


# policy key -> TableRules attribute
KEYS: dict[str, str] = {_key_of(f.name): f.name for f in fields(TableRules)}
_DURATION_KEYS = {"full-compaction-interval", "orphan-files-older-than"}


def _did_you_mean(key: str, known: list[str]) -> str:
    match = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f": did you mean {match[0]!r}?" if match else f" (known: {', '.join(known)})"


@dataclass(frozen=True)
class Policy:
    """A parsed policy: the overrides of each scope, checked when read."""

    defaults: Mapping[str, Any]
    databases: Mapping[str, Mapping[str, Any]]
    tables: Mapping[str, Mapping[str, Any]]
    source: str = "(no policy: each table's options)"

    @classmethod
    def empty(cls) -> Policy:
        return cls({}, {}, {})

    @classmethod
    def parse(cls, text: str, source: str = "policy") -> Policy:
        """Read a policy file's text; every error is one line naming the file and the key."""
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise InvalidInput(f"{source}: not valid TOML: {e}") from None
        except RecursionError:  # the parser recurses once per level of nested arrays / inline tables
            raise InvalidInput(f"{source}: not valid TOML: arrays or inline tables nested too deeply") from None
        for key in doc:
            if key not in SECTIONS:
                raise InvalidInput(f"{source}: unknown section [{key}]{_did_you_mean(key, list(SECTIONS))}")
        defaults = _scope(doc.get("defaults", {}), f"{source} [defaults]")
        databases = {name: _scope(v, f"{source} [databases.{name}]")
                     for name, v in _section(doc, "databases", source).items()}
        tables = {}
        for name, v in _section(doc, "tables", source).items():
            if name.count(".") != 1:
                raise InvalidInput(f'{source} [tables.{name}]: name a table as "db.table", '
                                   f'e.g. [tables."shop.orders"]')
            tables[name] = _scope(v, f'{source} [tables."{name}"]')
        policy = cls(defaults, databases, tables, source)
        # refuse a bad combination of scopes now, before any table is read
        policy.rules_for("", "", {})
        for db in databases:
            policy.rules_for(db, "", {})
        for name in tables:
            db, table = name.split(".")
            policy.rules_for(db, table, {})
        return policy

    def rules_for(self, database: str, table: str, table_options: Mapping[str, str]) -> TableRules:
        """The rules of one table: built-in defaults, then the table's options, then the
        policy's ``[defaults]``, ``[databases.<db>]`` and ``[tables."<db>.<table>"]``."""
        rules = TableRules()
        interval = table_options.get("compaction.optimization-interval")
        if interval:
            rules = replace(rules, full_compaction_interval_millis=parse_duration_millis(
                interval, "compaction.optimization-interval"))
        where = f"{self.source} (table {database}.{table})" if table else f"{self.source} [{database or 'defaults'}]"
        for scope in (self.defaults, self.databases.get(database, {}), self.tables.get(f"{database}.{table}", {})):
            rules = replace(rules, **{KEYS[k]: v for k, v in scope.items()})
        return _checked(rules, where)


def _section(doc: Mapping[str, Any], name: str, source: str) -> Mapping[str, Any]:
    value = doc.get(name, {})
    if not isinstance(value, dict) or any(not isinstance(v, dict) for v in value.values()):
        raise InvalidInput(f"{source} [{name}]: expected sub-tables, e.g. [{name}.NAME]")
    return value


def _scope(raw: Any, where: str) -> dict[str, Any]:
    """One scope's keys, typed: booleans stay booleans, durations become milliseconds."""
    if not isinstance(raw, dict):
        raise InvalidInput(f"{where}: expected a table of keys")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in KEYS:
            raise InvalidInput(f"{where}: unknown key {key!r}{_did_you_mean(key, list(KEYS))}")
        if key in _DURATION_KEYS:
            if value is False or value == "off":
                if key != "full-compaction-interval":
                    raise InvalidInput(f"{where}: {key} cannot be off; use remove-orphan-files = false")
                out[key] = None
                continue
            if not isinstance(value, str):
                raise InvalidInput(f"{where}: {key} must be a duration text such as \"7d\"")
            out[key] = parse_duration(value, f"{where}: {key}", positive=True)
        elif not isinstance(value, bool):
            raise InvalidInput(f"{where}: {key} must be true or false, not {value!r}")
        else:
            out[key] = value
    return out


def _checked(rules: TableRules, where: str) -> TableRules:
    """The orphan-file floor: 1 day, or 1 hour when the policy names the exception."""
    floor = HOUR_MILLIS if rules.orphan_files_allow_under_1d else DAY_MILLIS
    if rules.orphan_files_older_than_millis < floor:
        hint = ("" if rules.orphan_files_allow_under_1d
                else "; set orphan-files-allow-under-1d = true to go below 1 day (never below 1 hour)")
        raise InvalidInput(f"{where}: orphan-files-older-than under "
                           f"{'1 hour' if rules.orphan_files_allow_under_1d else '1 day'} is refused{hint}")
    return rules


def load_policy(text: str | None, source: str = "policy") -> Policy:
    """The policy of a file's text, or the empty policy when there is no file."""
    return Policy.empty() if text is None else Policy.parse(text, source)
