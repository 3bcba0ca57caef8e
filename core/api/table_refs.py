"""The tag, consumer and branch verbs of ``Table`` (Java's ``TagManager``, ``ConsumerManager``
and ``BranchManager`` as its procedures call them: ``create_tag``, ``reset_consumer``,
``create_branch``, ``fast_forward`` ...), one method per command.

:class:`TableRefs` is a part of ``table.Table`` (the handle's state lives there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from ..system.registry import SYSTEM_TABLES
from ..table.actions import Action
from ..utils.rows import Rows
from .arguments import Duration, PointInTime, Timestamp, duration_millis, local_datetime, timestamp_millis

if TYPE_CHECKING:
    from ..operation.branch_ops import BranchPlan, MergePlan
    from ..operation.consumer_ops import ConsumerPlan
    from ..operation.tag_deletion import TagDeletionPlan
    from ..operation.tag_ops import AutoTagPlan, TagReplacePlan
    from ..refs.tags import Tag
    from ..table.file_store_table import FileStoreTable
    from .table import Table
    from .warehouse import Warehouse


class TableRefs:
    """Tags, consumers and branches of ``table.Table`` (which sets these attributes)."""

    warehouse: Warehouse

    if TYPE_CHECKING:
        @property
        def name(self) -> str: ...
        def open(self) -> FileStoreTable: ...
        def _open_for(self, action: Action) -> FileStoreTable: ...

    def list_tags(self) -> Rows:
        return SYSTEM_TABLES["tags"](self.open(), None)

    def create_tag(self, name: str, *, snapshot: int | None = None, time_retained: Duration | None = None,
                   from_timestamp: Timestamp | None = None, from_watermark: int | None = None) -> Tag:
        """Tag a snapshot (default: the latest); without ``time_retained`` the table's
        tag.default-time-retained applies, as for a tag made by Java. ``from_timestamp`` (epoch
        millis, ISO-8601 or a ``datetime``) / ``from_watermark``: the earliest snapshot committed
        (watermarked) at or after it, as Java's create_tag_from_timestamp / _watermark."""
        from ..operation import tag_ops
        from ..refs.tags import validate_tag_name
        if sum(x is not None for x in (snapshot, from_timestamp, from_watermark)) > 1:
            raise InvalidInput("tag create: give at most one of snapshot, from_timestamp and from_watermark")
        retained = None
        if time_retained is not None:
            retained = duration_millis(time_retained, "--time-retained", positive=True) / 1000
        millis = None if from_timestamp is None else timestamp_millis(from_timestamp, "--from-timestamp")
        validate_tag_name(name)
        table = self._open_for(Action.TAG)
        if millis is not None or from_watermark is not None:
            snapshot = tag_ops.snapshot_from_time(table, millis, from_watermark)[0].id
        return tag_ops.create_tag(table, name, snapshot, retained)

    def replace_tag(self, name: str, *, snapshot: int | None = None, time_retained: Duration | None = None,
                    dry_run: bool = False) -> TagReplacePlan:
        """Java's ``replace_tag``: the existing tag ``name`` names ``snapshot`` (default: the
        latest) with ``time_retained`` (default: tag.default-time-retained); the files only its
        old snapshot held are deleted as ``tag delete`` would."""
        from ..operation import tag_ops
        from ..refs.tags import validate_tag_name
        retained = None
        if time_retained is not None:
            retained = duration_millis(time_retained, "--time-retained", positive=True) / 1000
        validate_tag_name(name)
        table = self._open_for(Action.TAG)
        plan = tag_ops.plan_replace_tag(table, name, snapshot, retained)
        if not dry_run:
            tag_ops.apply_replace_tag(table, plan)
        return plan

    def trigger_tags(self, *, dry_run: bool = False) -> AutoTagPlan:
        """Java's ``trigger_tag_automatic_creation``: create the tags tag.automatic-creation /
        tag.creation-period would have made up to now (trimming to tag.num-retained-max), then
        expire tags past their retention (tag.time-expire-enabled)."""
        from ..operation import tag_ops
        return tag_ops.trigger_tags(self._open_for(Action.TAG), dry_run=dry_run)

    def rename_tag(self, name: str, new_name: str) -> Tag:
        from ..operation import tag_ops
        from ..refs.tags import validate_tag_name
        validate_tag_name(name)
        validate_tag_name(new_name)
        return tag_ops.rename_tag(self._open_for(Action.TAG), name, new_name)

    def delete_tags(self, names: str | Sequence[str], *, dry_run: bool = False) -> TagDeletionPlan:
        """Delete tags (``"a,b"`` or a list) and the files only they still used."""
        from ..operation import tag_ops
        table = self._open_for(Action.TAG)
        if isinstance(names, str):
            listed = [n.strip() for n in names.split(",")]
            if any(not n for n in listed):
                raise InvalidInput(f"tag names {names!r}: empty name in the list")
        else:
            listed = list(names)
        return tag_ops.delete_tags(table, listed, dry_run=dry_run)

    def expire_tags(self, *, older_than: PointInTime | None = None, dry_run: bool = False) -> TagDeletionPlan:
        """Delete tags whose retention has passed (and with ``older_than`` those created before)."""
        from ..operation import tag_ops
        older = None if older_than is None else local_datetime(older_than, "--older-than")
        return tag_ops.expire_tags(self._open_for(Action.TAG), dry_run=dry_run, older_than=older)

    # -- consumers ------------------------------------------------------------------------------

    def list_consumers(self) -> Rows:
        """Each consumer: its next snapshot, when it last moved and how far it is behind."""
        from ..operation import consumer_ops
        return consumer_ops.list_consumers(self.open())

    def reset_consumer(self, consumer_id: str, *, snapshot: int | None = None, dry_run: bool = False
                       ) -> ConsumerPlan:
        """Java's ``reset_consumer``: the consumer reads on from ``snapshot`` (which must exist),
        or without one is deleted."""
        from ..operation import consumer_ops
        consumer_ops.validate_consumer_id(consumer_id)
        table = self._open_for(Action.CONSUMER)
        plan = consumer_ops.plan_reset_consumer(table, consumer_id, snapshot)
        return plan if dry_run else consumer_ops.apply_consumer_plan(table, plan)

    def clear_consumers(self, *, including: str | None = None, excluding: str | None = None,
                        dry_run: bool = False) -> ConsumerPlan:
        """Java's ``clear_consumers``: delete the consumers whose whole id matches ``including``
        (default: all) and not ``excluding`` (regular expressions)."""
        from ..operation import consumer_ops
        consumer_ops.compile_consumer_pattern(including, "--including")
        consumer_ops.compile_consumer_pattern(excluding, "--excluding")
        table = self._open_for(Action.CONSUMER)
        plan = consumer_ops.plan_clear_consumers(table, including, excluding)
        return plan if dry_run else consumer_ops.apply_consumer_plan(table, plan)

    # -- branches -------------------------------------------------------------------------------

    def list_branches(self) -> Rows:
        return SYSTEM_TABLES["branches"](self.open(), None)

    def create_branch(self, name: str, *, tag: str | None = None) -> Table:
        """A branch from a tag of this branch, or empty (the schemas only) without ``tag``;
        returns a handle on it."""
        from ..operation import branch_ops
        from ..refs.branches import validate_branch_name
        from .table import Table  # the handle this part belongs to
        validate_branch_name(name)
        branch_ops.create_branch(self.open(), name, tag)
        return Table(self.warehouse, self.name, name)

    def delete_branch(self, name: str, *, dry_run: bool = False) -> BranchPlan:
        from ..operation import branch_ops
        from ..refs.branches import validate_branch_name
        validate_branch_name(name)
        return branch_ops.delete_branch(self.open(), name, dry_run=dry_run)

    def fast_forward(self, name: str, *, dry_run: bool = False) -> BranchPlan:
        """Make this branch (default: main) equal to branch ``name``."""
        from ..operation import branch_ops
        from ..refs.branches import validate_branch_name
        validate_branch_name(name)
        return branch_ops.fast_forward(self._open_for(Action.FAST_FORWARD), name, dry_run=dry_run)

    def rename_branch(self, name: str, new_name: str, *, dry_run: bool = False) -> BranchPlan:
        """Java 2.x's ``rename_branch``: the branch directory is renamed (local filesystems)."""
        from ..operation import branch_ops
        from ..refs.branches import validate_branch_name
        validate_branch_name(name)
        validate_branch_name(new_name)
        return branch_ops.rename_branch(self._open_for(Action.RENAME_BRANCH), name, new_name, dry_run=dry_run)

    def merge_branch(self, source: str, *, dry_run: bool = False) -> MergePlan:
        """Java 2.x's ``merge_branch``: the data files of branch ``source`` (``main`` allowed)
        that this branch (default: main) lacks are added to it in one APPEND snapshot; both
        must be append tables with an append-only history from snapshot 1."""
        from ..operation import branch_ops
        from ..refs.branches import validate_branch_name
        if source.lower() != "main":
            validate_branch_name(source)
        return branch_ops.merge_branch(self._open_for(Action.MERGE_BRANCH), "main" if source.lower() == "main"
                                       else source, dry_run=dry_run)
