"""The maintenance verbs of ``Table``: snapshot, changelog and partition expiry, file clean-up,
rollback and metadata repair (Java's procedures ``expire_snapshots``, ``remove_orphan_files``,
``rollback_to``, ``compact_manifest``, ``repair`` ...), one method per command.

:class:`TableMaintenance` is a part of ``table.Table`` (the handle's state lives there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from ..table.actions import Action
from .arguments import (
    Duration,
    KeyValues,
    PointInTime,
    Timestamp,
    duration_millis,
    key_values,
    point_in_time_millis,
    point_in_time_text,
    string_list,
    tag_name,
    timestamp_millis,
)

if TYPE_CHECKING:
    from ..operation.partition_drop import PartitionDropPlan
    from ..operation.partition_expire import PartitionExpirePlan
    from ..operation.partition_mark_done import MarkDonePlan
    from ..operation.rollback import RollbackTarget
    from ..operation.rollback_as_latest import AsLatestPlan
    from ..operation.unexisting_manifests import UnexistingManifestsPlan
    from ..table.file_store_table import FileStoreTable
    from ..table.identifiers import Identifier
    from ..utils.progress import StepProgress
    from .reports import (
        CompactManifestReport,
        ExpireReport,
        OrphanFilesReport,
        PurgeFilesReport,
        RemoveUnexistingFilesReport,
        RepairReport,
        RollbackReport,
    )
    from .warehouse import Warehouse


class TableMaintenance:
    """Expiry, clean-up, rollback and repair of ``table.Table`` (which sets these attributes)."""

    warehouse: Warehouse
    identifier: Identifier
    branch: str | None

    if TYPE_CHECKING:
        @property
        def name(self) -> str: ...
        def open(self) -> FileStoreTable: ...
        def _open_for(self, action: Action) -> FileStoreTable: ...

    def expire(
        self,
        *,
        retain_max: int | None = None,
        retain_min: int | None = None,
        older_than: PointInTime | None = None,
        max_deletes: int | None = None,
        changelog: bool = False,
        dry_run: bool = False,
        progress: StepProgress | None = None,
        engine: str = "auto",
        spark_master: str | None = None,
        spark_conf: KeyValues | None = None,
    ) -> ExpireReport:
        """Expire old snapshots (or with ``changelog`` long-lived changelogs) and delete the
        files only they used, as Java does; unset arguments fall back to the table's options.
        If anything deciding what is still used cannot be read, nothing is deleted
        (UnsafeRefused). A run right after a dry run deletes exactly the dry run's files.
        ``progress(done, total, detail)`` is called as files are deleted. ``engine``: auto |
        local | spark (auto: Spark when ``spark_master``/``spark_conf`` is given); on Spark,
        tasks read the expiring snapshots' manifests and delete, with the same result."""
        from ..operation.expire import apply_expire, plan_expire
        from ..operation.expire_plan import ExpirePolicy
        from ..spark.expire import expire_on_spark, use_spark
        from .reports import ExpireReport
        cutoff = None if older_than is None else point_in_time_millis(older_than, "--older-than")
        conf = key_values(spark_conf, "--spark-conf") or None
        table = self._open_for(Action.EXPIRE)
        policy = ExpirePolicy(retain_max=retain_max, retain_min=retain_min, older_than_millis=cutoff,
                              max_deletes=max_deletes, changelog=changelog)
        if use_spark(engine, spark_master, conf):
            plan, result = expire_on_spark(table, policy, dry_run=dry_run, master=spark_master, conf=conf,
                                           progress=progress)
            return ExpireReport(plan, result, table.path)
        plan = plan_expire(table, policy)
        return ExpireReport(plan, None if dry_run else apply_expire(table, plan, progress=progress), table.path)

    def expire_changelogs(
        self,
        *,
        retain_max: int | None = None,
        retain_min: int | None = None,
        older_than: PointInTime | None = None,
        max_deletes: int | None = None,
        delete_all: bool = False,
        dry_run: bool = False,
    ) -> ExpireReport:
        """Java's ``expire_changelogs``: expire long-lived changelogs (``changelog/``) by these
        arguments alone; an omitted one keeps everything it governs (so no argument expires
        nothing) and the table's options do not apply. ``delete_all`` removes every one and
        the changelog hints (all must be older than the earliest snapshot)."""
        from ..operation.changelog_expire import plan_changelog_expire, plan_expire_all_changelogs, procedure_policy
        from ..operation.expire import apply_expire
        from ..operation.expire_plan import INT_MAX, check_retention
        from .reports import ExpireReport
        if delete_all and any(a is not None for a in (retain_max, retain_min, older_than, max_deletes)):
            raise InvalidInput("--delete-all takes none of --retain-max, --retain-min, --older-than, --max-deletes")
        cutoff = None if older_than is None else point_in_time_millis(older_than, "--older-than")
        if not delete_all:
            check_retention(1 if retain_min is None else retain_min, INT_MAX if retain_max is None else retain_max,
                            0 if max_deletes is None else max_deletes, 0)
        table = self._open_for(Action.EXPIRE_CHANGELOGS)
        rp = procedure_policy(table, retain_max, retain_min, cutoff, max_deletes)
        plan = plan_expire_all_changelogs(table, rp) if delete_all else plan_changelog_expire(table, rp)
        return ExpireReport(plan, None if dry_run else apply_expire(table, plan), table.path)

    def expire_partitions(
        self,
        *,
        expiration_time: Duration | None = None,
        timestamp_formatter: str | None = None,
        timestamp_pattern: str | None = None,
        strategy: str | None = None,
        max_expires: int | None = None,
        dry_run: bool = False,
    ) -> PartitionExpirePlan:
        """Drop partitions older than ``expiration_time`` (default: the table's
        partition.expiration-time) in one OVERWRITE snapshot, as Java's partition expiration."""
        from ..operation.partition_expire import JavaDateTimePattern
        from ..operation.partition_expire import expire_partitions as expire_partitions_of
        from ..utils.durations import parse_duration_millis
        if timestamp_formatter is not None:
            JavaDateTimePattern(timestamp_formatter)  # a bad pattern: refused before any I/O
        seconds = None
        if expiration_time is not None:
            seconds = duration_millis(expiration_time, "--expiration-time", positive=True) / 1000.0
        table = self._open_for(Action.EXPIRE_PARTITIONS)
        if seconds is None:
            opt = table.options.get("partition.expiration-time")
            if not opt:
                raise InvalidInput(
                    f"no expiration time: give --expiration-time or set partition.expiration-time on {self.name}")
            seconds = parse_duration_millis(opt, "partition.expiration-time") / 1000.0
        return expire_partitions_of(
            table, seconds, dry_run=dry_run, strategy=strategy, timestamp_formatter=timestamp_formatter,
            timestamp_pattern=timestamp_pattern, max_expires=max_expires,
        )

    def drop_partitions(self, partitions: str | Sequence[str], *, dry_run: bool = False) -> PartitionDropPlan:
        """Drop partitions (``"dt=2024-05-01"``, ``"dt=a;dt=b"`` or a list; leading keys or
        any of them) in one OVERWRITE snapshot, as Java's ``drop_partition``; every
        alternative must match a live partition (NoPartitionMatched otherwise)."""
        from ..operation.partition_drop import drop_partitions as drop_partitions_of
        return drop_partitions_of(self._open_for(Action.DROP_PARTITION), string_list(partitions), dry_run=dry_run)

    def mark_partitions_done(self, partitions: str | Sequence[str], *, actions: str | None = None,
                             allow_empty: bool = False, dry_run: bool = False) -> MarkDonePlan:
        """Java's ``mark_partition_done``: run the table's ``partition.mark-done-action`` (or
        ``actions``, comma-separated) for each partition (``"dt=a;dt=b"`` or a list; leading
        keys allowed for ``success-file`` and ``http-report``). A partition without data is
        NoPartitionMatched unless ``allow_empty``; what the catalog cannot do is refused first."""
        from ..operation.partition_mark_done import mark_done, plan_mark_done
        table = self._open_for(Action.MARK_PARTITION_DONE)
        plan = plan_mark_done(table, string_list(partitions), actions=actions, allow_empty=allow_empty)
        return plan if dry_run else mark_done(table, plan)

    def remove_orphan_files(
        self,
        *,
        older_than: PointInTime | None = None,
        force: bool = False,
        external_paths: bool = False,
        dry_run: bool = False,
        progress: StepProgress | None = None,
        engine: str = "auto",
        spark_master: str | None = None,
        spark_conf: KeyValues | None = None,
        parallelism: int | None = None,
    ) -> OrphanFilesReport:
        """Delete files no snapshot, tag, changelog or branch uses, last modified before
        ``older_than`` (default 1 day ago; under 1 hour needs ``force``). Anything unreadable
        stops the run (UnsafeRefused) with nothing deleted. ``engine`` spark (``auto``: when
        Spark options are given) lists, reads manifests, joins and deletes as Spark tasks."""
        from ..operation.orphans import plan_remove_orphans, remove_orphans
        from ..spark.orphans import choose_orphans_engine, remove_orphan_files_spark
        from .reports import OrphanFilesReport

        conf = key_values(spark_conf, "--spark-conf")
        on_spark = choose_orphans_engine(engine, spark_master, conf, parallelism) == "spark"
        table = self._open_for(Action.REMOVE_ORPHAN_FILES)
        if on_spark:
            plan, result = remove_orphan_files_spark(
                table, older_than=point_in_time_text(older_than), force=force, external_paths=external_paths,
                dry_run=dry_run, master=spark_master, conf=conf or None, parallelism=parallelism, progress=progress)
            return OrphanFilesReport(plan, result, self.name, table.path, external_paths)
        plan = plan_remove_orphans(table, point_in_time_text(older_than), force, external_paths=external_paths)
        result = None if dry_run else remove_orphans(table, plan, progress)
        return OrphanFilesReport(plan, result, self.name, table.path, external_paths)

    def purge_files(self, *, dry_run: bool = False) -> PurgeFilesReport:
        """Java's ``purge_files``: drop every branch, tag and consumer, truncate the table,
        delete the long-lived changelogs, expire all but the new empty snapshot and remove
        orphan files as of now. The schema stays. Anything unreadable it depends on refuses
        (UnsafeRefused) before anything changes."""
        from ..operation.purge import plan_purge, purge
        from .reports import PurgeFilesReport
        table = self._open_for(Action.PURGE_FILES)
        plan = plan_purge(table)
        return PurgeFilesReport(plan, None if dry_run else purge(table, plan))

    def rollback(self, *, snapshot: int | None = None, tag: str | None = None, to_timestamp: Timestamp | None = None,
                 to_watermark: int | None = None, dry_run: bool = False) -> RollbackReport:
        """Make a snapshot or a tag the latest again; later snapshots, changelogs and tags go,
        and so do the files only they used. ``to_timestamp`` (epoch millis, ISO-8601 or a
        ``datetime``): the latest snapshot committed at or before it (Java's
        ``rollback_to_timestamp``); ``to_watermark``: the latest whose watermark is at or below it."""
        from ..operation.rollback import rollback as rollback_table
        from .reports import RollbackReport
        target = self._rollback_target(snapshot, tag, to_timestamp, to_watermark)
        table = self._open_for(Action.ROLLBACK)
        plan = rollback_table(table, dry_run=dry_run, target=target)
        return RollbackReport(plan, self.name, table.path, dry_run)

    def rollback_as_latest(self, *, snapshot: int | None = None, tag: str | None = None,
                           to_timestamp: Timestamp | None = None, to_watermark: int | None = None,
                           dry_run: bool = False) -> AsLatestPlan:
        """Java 2.x ``rollback_to_as_latest``: commit a new snapshot equal to the target (chosen
        as :meth:`rollback` chooses it), deleting nothing; a target not given by tag is tagged
        ``rollback-to-as-latest-<id>-<uuid>`` first so expiration keeps its files."""
        from ..operation.rollback_as_latest import rollback_as_latest
        target = self._rollback_target(snapshot, tag, to_timestamp, to_watermark)
        return rollback_as_latest(self._open_for(Action.ROLLBACK), target, dry_run=dry_run)

    @staticmethod
    def _rollback_target(snapshot: int | None, tag: str | None, to_timestamp: Timestamp | None,
                         to_watermark: int | None) -> RollbackTarget:
        from ..operation.rollback import RollbackTarget
        given = [x for x in (snapshot, tag, to_timestamp, to_watermark) if x is not None]
        if len(given) != 1:
            raise InvalidInput("rollback: give exactly one of snapshot, tag, to_timestamp and to_watermark")
        if snapshot is not None and snapshot < 1:
            raise InvalidInput(f"rollback: snapshot {snapshot}: a snapshot id is positive")
        millis = None if to_timestamp is None else timestamp_millis(to_timestamp, "--to-timestamp")
        return RollbackTarget(snapshot_id=snapshot, tag=tag_name(tag), timestamp_millis=millis, watermark=to_watermark)

    # -- metadata repair ------------------------------------------------------------------------

    def compact_manifest(self, *, dry_run: bool = False) -> CompactManifestReport:
        """Rewrite the latest snapshot's data manifests into few, sorted by partition and
        bucket, as one COMPACT snapshot (Java's compact_manifest); nothing when already compact."""
        from ..operation.manifest_compact import compact_manifest as compact_manifest_of
        from ..operation.manifest_compact import plan_compact_manifest
        from .reports import CompactManifestReport
        table = self._open_for(Action.COMPACT_MANIFEST)
        plan = plan_compact_manifest(table)
        return CompactManifestReport(plan, None if dry_run else compact_manifest_of(table, plan), self.name)

    def remove_unexisting_files(self, *, dry_run: bool = False) -> RemoveUnexistingFilesReport:
        """Drop the manifest entries of live data files that no longer exist (their rows are
        lost) in one OVERWRITE snapshot; an unreadable manifest refuses (UnsafeRefused)."""
        from ..operation.maintenance import after_commit
        from ..operation.unexisting_files import plan_remove_unexisting_files
        from ..operation.unexisting_files import remove_unexisting_files as remove_unexisting_files_of
        from .reports import RemoveUnexistingFilesReport

        table = self._open_for(Action.REMOVE_UNEXISTING_FILES)
        plan = plan_remove_unexisting_files(table)
        result = None if dry_run else remove_unexisting_files_of(table, plan, lambda: after_commit(table))
        return RemoveUnexistingFilesReport(plan, result, self.name)

    def remove_unexisting_manifests(self, *, force: bool = False, dry_run: bool = False
                                    ) -> UnexistingManifestsPlan:
        """Java's ``remove_unexisting_manifests``: republish the latest snapshot without its data
        manifests that no longer exist (the files they added are gone for readers), as one
        OVERWRITE snapshot. A missing manifest holding DELETE entries is UnsafeRefused unless
        ``force`` (the files they deleted would be live again, as Java leaves them)."""
        from ..operation.unexisting_manifests import plan_remove_unexisting_manifests
        from ..operation.unexisting_manifests import remove_unexisting_manifests as remove_unexisting_manifests_of
        table = self._open_for(Action.REMOVE_UNEXISTING_MANIFESTS)
        plan = plan_remove_unexisting_manifests(table, force)
        return plan if dry_run else remove_unexisting_manifests_of(table, plan, force)

    def repair(self, *, earliest: int | None = None, dry_run: bool = False) -> RepairReport:
        """Make the EARLIEST / LATEST snapshot hints match the snapshot files; ``earliest``
        moves EARLIEST past a gap in the snapshot ids (Java's repair_earliest_snapshot)."""
        from ..operation.repair import apply_repair, plan_repair
        from ..table.features import refuse_on_catalog_server
        from .reports import RepairReport
        catalog = self.warehouse.catalog
        # on storage but not in the metastore: entered first (Java's repairTable); a dry run
        # plans on the table as storage holds it
        registrations = [] if self.branch is not None else catalog.table_registrations(self.identifier)
        if registrations and not dry_run:
            catalog.register(registrations)
        table = catalog.storage_table(self.identifier) if registrations and dry_run else self.open()
        refuse_on_catalog_server(table, "repair", "the server keeps the snapshot hints")
        plan = plan_repair(table, earliest)
        if table.branch is None and not (registrations and dry_run):
            plan.metastore_schema = catalog.schema_drift(table.identifier, table.schema)
        applied = [] if dry_run else apply_repair(table, plan)
        if not dry_run and plan.metastore_schema is not None:
            catalog.sync_schema(table.identifier, table.schema)
        return RepairReport(plan, applied, self.name, dry_run, registrations)
