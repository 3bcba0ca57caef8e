"""Shell completion of names and values: tables (``DB.TABLE``), branches, tags, and every
option whose values are a fixed list.

The committed scripts (``completions/``) call the app back with ``_PAIMON_CLI_COMPLETE`` set;
:func:`attach` then gives the click parameters their completers, by parameter name, in this
one place (the commands stay as they are). Names come from the catalog typed before the
cursor (``-w``, ``--catalog``, ``--catalog-option``), else ``$PAIMON_WAREHOUSE``, else
``./warehouse``; ``--catalog`` completes the catalogs file's names. A completer never raises
and never prints: a missing or unreachable warehouse completes nothing, and a listing that
takes longer than :data:`BUDGET_SECONDS` is abandoned.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

BUDGET_SECONDS = 2.0
_CHOICES = re.compile(r"^[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)+$")  # a metavar such as auto|local|spark


def attach(group: Any) -> None:
    """Set the completers of every command's parameters (``group``: the app's click group)."""
    for cmd in group.commands.values():
        for param in cmd.params:
            fn = _completer(cmd.name, param)
            if fn is not None:
                param._custom_shell_complete = fn


def _completer(command: str, param: Any) -> Callable[[Any, Any, str], list[str]] | None:
    name = param.name
    if name == "identifier":
        return _guarded(_tables)
    if command in ("tag", "branch") and name == "name":  # an existing name, except for `create`
        existing = _branches if command == "branch" else _tags
        return _guarded(lambda ctx, incomplete: [] if _action(ctx) == "create" else existing(ctx, incomplete))
    if command == "consumer" and name == "consumer_id":
        return _guarded(_consumers)
    if name == "branch":
        return _guarded(_branches)
    if name == "tag" and command != "tag":
        return _guarded(_tags)
    if name == "catalog":
        return _guarded(_catalog_names)
    metavar = getattr(param, "metavar", None) or ""
    if _CHOICES.match(metavar):
        values = metavar.split("|")
        return lambda ctx, p, incomplete: [v for v in values if v.startswith(incomplete)]
    return None


def _guarded(fn: Callable[[Any, str], list[str]]) -> Callable[[Any, Any, str], list[str]]:
    """``fn`` run in a daemon thread within the budget; any failure or overrun completes nothing."""

    def complete(ctx: Any, param: Any, incomplete: str) -> list[str]:
        out: list[str] = []

        def work() -> None:
            try:
                out.extend(fn(ctx, incomplete))
            except BaseException:  # noqa: BLE001 - completion must never fail loudly
                out.clear()

        t = threading.Thread(target=work, daemon=True)
        t.start()
        t.join(BUDGET_SECONDS)
        return [] if t.is_alive() else sorted(out)

    return complete


def _params(ctx: Any) -> dict[str, Any]:
    """The values typed before the cursor. Click parses them again without the option whose
    value is being completed (with it dangling, its resilient parse drops the arguments too)."""
    if ctx.params.get("identifier") is not None:
        return dict(ctx.params)
    import os
    import shlex

    try:
        words = shlex.split(os.environ.get("COMP_WORDS", ""))[: int(os.environ.get("COMP_CWORD", "0"))]
    except ValueError:  # an open quote
        return dict(ctx.params)
    if ctx.info_name not in words:
        return dict(ctx.params)
    args = words[words.index(ctx.info_name) + 1:]
    if args and args[-1].startswith("-"):
        args = args[:-1]
    return dict(ctx.command.make_context(ctx.info_name, args, parent=ctx.parent, resilient_parsing=True).params)


def _action(ctx: Any) -> str | None:
    action = _params(ctx).get("action")
    return getattr(action, "value", action)


def _catalog(params: dict[str, Any]) -> Any:
    """The catalog the command line names so far (``-w``, ``--catalog``, ``--catalog-option``)."""
    import os

    from .core.api import Warehouse

    warehouse = params.get("warehouse") or os.environ.get("PAIMON_WAREHOUSE")
    return Warehouse(warehouse, params.get("fs_option"), catalog=params.get("catalog"),
                     catalog_options=params.get("catalog_option")).catalog


def _catalog_names(ctx: Any, incomplete: str) -> list[str]:
    """The catalogs of the catalogs file (``--catalog NAME``)."""
    from .core.catalog.config import load_catalogs_file

    return sorted(n for n in load_catalogs_file() if n.startswith(incomplete))


def _tables(ctx: Any, incomplete: str) -> list[str]:
    """``db.table`` names; before the dot, the databases (expanded when only one matches)."""
    catalog = _catalog(ctx.params)
    db, dot, _ = incomplete.partition(".")
    if dot:
        return [f"{db}.{t}" for t in catalog.list_tables(db) if f"{db}.{t}".startswith(incomplete)]
    dbs = [d for d in catalog.list_databases() if d.startswith(db)]
    if len(dbs) != 1:
        return [f"{d}." for d in dbs]
    return [f"{dbs[0]}.{t}" for t in catalog.list_tables(dbs[0])] or [f"{dbs[0]}."]


def _table(ctx: Any, with_branch: bool = False) -> Any:
    params = _params(ctx)
    identifier = params.get("identifier")
    if not identifier:
        return None
    return _catalog(params).get_table(identifier, params.get("branch") if with_branch else None)


def _branches(ctx: Any, incomplete: str) -> list[str]:
    table = _table(ctx)
    if table is None:
        return []
    from .core.refs.branches import BranchManager

    names = BranchManager(table.file_io, table.path).branch_names()
    return [b for b in names if b.startswith(incomplete)]


def _consumers(ctx: Any, incomplete: str) -> list[str]:
    table = _table(ctx, with_branch=True)  # --branch: whose consumers
    if table is None:
        return []
    return [c for c in table.consumer_manager.consumer_ids() if c.startswith(incomplete)]


def _tags(ctx: Any, incomplete: str) -> list[str]:
    table = _table(ctx, with_branch=True)  # --branch: whose tags (also `branch create --tag`)
    if table is None:
        return []
    return [t for t in table.tag_manager.tag_names() if t.startswith(incomplete)]
