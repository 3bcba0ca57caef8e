"""Consumers of a table: list, reset and clear, as Java's ``reset_consumer`` / ``clear_consumers``.

A consumer (``consumer/consumer-<id>``) is a streaming reader's progress: the next snapshot it
will read, which expiration keeps. A reader that died keeps it forever unless it is reset or
removed here (or ``consumer.expiration-time`` expires it). Planning is separate from doing, so
``--dry-run`` shows exactly the consumers that would change; every write and delete runs under
the catalog's commit lock (:class:`~..refs.consumers.ConsumerManager`).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import CorruptMetadata, InvalidInput, NotFound
from ..utils.rows import Rows

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

LIST_COLUMNS = ["consumer_id", "next_snapshot_id", "modified", "behind_latest"]
PLAN_COLUMNS = ["consumer_id", "action", "next_snapshot_id", "new_next_snapshot_id"]


@dataclass(frozen=True)
class ConsumerChange:
    """One consumer file that is written (``new_next_snapshot`` set) or deleted (None)."""

    consumer_id: str
    next_snapshot: int | None  # before (None: the consumer did not exist)
    new_next_snapshot: int | None

    @property
    def action(self) -> str:
        return "delete" if self.new_next_snapshot is None else "reset"


@dataclass
class ConsumerPlan:
    identifier: str
    changes: list[ConsumerChange]

    def rows(self) -> Rows:
        return Rows(PLAN_COLUMNS, [{"consumer_id": c.consumer_id, "action": c.action,
                                    "next_snapshot_id": c.next_snapshot, "new_next_snapshot_id": c.new_next_snapshot}
                                   for c in self.changes])


def list_consumers(table: FileStoreTable) -> Rows:
    """Every consumer with its next snapshot, when its file last changed (local time) and how
    many snapshots it has yet to read; unreadable consumer files are CorruptMetadata."""
    cm = table.consumer_manager
    consumers = cm.consumers()
    mtimes = cm.consumer_mtimes()
    latest = table.snapshot_manager.latest_snapshot_id()
    rows = []
    for cid, nxt in consumers.items():
        m = mtimes.get(cid)
        rows.append({
            "consumer_id": cid, "next_snapshot_id": nxt,
            "modified": None if m is None else datetime.datetime.fromtimestamp(m / 1000).isoformat(
                sep=" ", timespec="milliseconds"),
            "behind_latest": None if latest is None else max(0, latest - nxt + 1),
        })
    return Rows(LIST_COLUMNS, rows)


def validate_consumer_id(consumer_id: str) -> str:
    """Java only needs a file name; we refuse what would escape the consumer directory."""
    if consumer_id is None or not consumer_id.strip():
        raise InvalidInput("consumer id must not be blank")
    if "/" in consumer_id or "\\" in consumer_id or any(ord(c) < 0x20 or ord(c) == 0x7F for c in consumer_id):
        raise InvalidInput(f"consumer id {consumer_id!r} must not contain '/', '\\' or control characters")
    return consumer_id


def plan_reset_consumer(table: FileStoreTable, consumer_id: str, next_snapshot: int | None) -> ConsumerPlan:
    """Java 2.x ``reset_consumer``: with a snapshot id the consumer reads on from it (the
    snapshot must exist, as 2.x checks; 0.9 did not); without one the consumer is deleted. A
    consumer to delete that does not exist is NotFound (Java says nothing: a mistyped id would
    look like success)."""
    validate_consumer_id(consumer_id)
    cm = table.consumer_manager
    before = _next_snapshot_or_none(table, consumer_id)
    if next_snapshot is None:
        if not table.file_io.exists(cm.consumer_path(consumer_id)):
            have = ", ".join(cm.consumer_ids()[:10]) or "none"
            raise NotFound(f"consumer {consumer_id!r} not found in {table.identifier}: existing consumers: {have}")
        return ConsumerPlan(table.identifier.full_name, [ConsumerChange(consumer_id, before, None)])
    if next_snapshot < 1:
        raise InvalidInput(f"--snapshot {next_snapshot}: a snapshot id is positive")
    table.snapshot_manager.snapshot(next_snapshot)  # NotFound naming the snapshots that exist
    return ConsumerPlan(table.identifier.full_name, [ConsumerChange(consumer_id, before, next_snapshot)])


def compile_consumer_pattern(pattern: str | None, flag: str) -> re.Pattern[str] | None:
    """A blank pattern is none (Java: ``isNullOrWhitespaceOnly``); a bad one is InvalidInput."""
    if pattern is None or not pattern.strip():
        return None
    try:
        return re.compile(pattern)
    except re.error as e:
        raise InvalidInput(f"{flag} {pattern!r}: not a regular expression ({e})") from e


def plan_clear_consumers(table: FileStoreTable, including: str | None = None,
                         excluding: str | None = None) -> ConsumerPlan:
    """Java's ``clear_consumers``: every consumer whose whole id matches ``including`` (default
    all) and does not match ``excluding`` (``Matcher.matches``: the whole id, not a part)."""
    inc = compile_consumer_pattern(including, "--including")
    exc = compile_consumer_pattern(excluding, "--excluding")
    names = table.consumer_manager.consumer_ids()
    chosen = [n for n in names if (inc is None or inc.fullmatch(n)) and not (exc is not None and exc.fullmatch(n))]
    return ConsumerPlan(table.identifier.full_name,
                        [ConsumerChange(n, _next_snapshot_or_none(table, n), None) for n in chosen])


def _next_snapshot_or_none(table: FileStoreTable, consumer_id: str) -> int | None:
    """The consumer's next snapshot; None when absent or unreadable: removing or overwriting a
    consumer (Java works by file name) needs no readable content, and is how a broken one is fixed."""
    try:
        return table.consumer_manager.consumer(consumer_id)
    except CorruptMetadata:
        return None


def apply_consumer_plan(table: FileStoreTable, plan: ConsumerPlan) -> ConsumerPlan:
    """Write or delete each planned consumer file (under the commit lock); a consumer already
    gone is skipped quietly, as Java's ``deleteQuietly``."""
    cm = table.consumer_manager
    for c in plan.changes:
        if c.new_next_snapshot is None:
            cm.delete_quietly(c.consumer_id)
        else:
            cm.reset_consumer(c.consumer_id, c.new_next_snapshot)
    return plan
