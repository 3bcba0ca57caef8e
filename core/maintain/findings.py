"""What ``health`` measures and ``maintain`` acts on: named findings of one table.

``health`` decides (a :class:`TableHealth` per table, metadata only); ``maintain`` turns the
findings into actions under a policy. Both speak this model, so a finding always names the one
maintenance action that fixes it and the exact command an operator would run by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Severity(str, Enum):
    """How urgent a finding is; ``critical`` means readers or writers are already affected
    (write stall, unreadable metadata), ``warning`` that a threshold is crossed."""

    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


class MaintenanceAction(str, Enum):
    """One procedure ``maintain`` can run; the value is the command that does it by hand."""

    COMPACT = "compact"
    FULL_COMPACT = "compact --full"
    COMPACT_MANIFEST = "compact-manifest"
    EXPIRE_SNAPSHOTS = "expire"
    EXPIRE_CHANGELOGS = "expire --changelog"
    EXPIRE_PARTITIONS = "expire-partitions"
    EXPIRE_TAGS = "tag expire"
    REWRITE_FILE_INDEX = "rewrite-file-index"
    REMOVE_ORPHAN_FILES = "remove-orphan-files"


class FindingKind(str, Enum):
    """The kinds ``health`` reports (one OpenMetrics gauge family each)."""

    SMALL_FILES = "small_files"                  # small-file ratio vs target-file-size
    SORTED_RUNS = "sorted_runs"                  # sorted runs / level-0 files per bucket vs triggers
    SIZE_AMPLIFICATION = "size_amplification"    # LSM size amplification
    DELETE_RATIO = "delete_ratio"                # deletion-vector / delete-row ratio
    MANIFESTS = "manifests"                      # manifest count, size, small manifests
    SNAPSHOTS = "snapshots"                      # snapshot count and age vs retention
    CONSUMERS = "consumers"                      # snapshots past retention consumers keep
    CHANGELOGS = "changelogs"                    # long-lived changelogs past retention
    EXPIRED_PARTITIONS = "expired_partitions"    # partitions past partition.expiration-time
    EXPIRED_TAGS = "expired_tags"                # tags past their retention
    MISSING_FILE_INDEX = "missing_file_index"    # data files lacking a configured file index
    UNREADABLE_METADATA = "unreadable_metadata"  # metadata that cannot be read (score 0)
    ORPHAN_FILES = "orphan_files"                # orphan bytes (only with --scan-orphans)

    @property
    def action(self) -> MaintenanceAction | None:
        """The procedure that fixes this kind (``None``: nothing automatic may fix it)."""
        return _ACTION_OF[self]

    @property
    def description(self) -> str:
        """What the finding's value measures (the OpenMetrics HELP text)."""
        return _DESCRIPTION[self]


_ACTION_OF: dict[FindingKind, MaintenanceAction | None] = {
    FindingKind.SMALL_FILES: MaintenanceAction.COMPACT,
    FindingKind.SORTED_RUNS: MaintenanceAction.COMPACT,
    FindingKind.SIZE_AMPLIFICATION: MaintenanceAction.FULL_COMPACT,
    FindingKind.DELETE_RATIO: MaintenanceAction.FULL_COMPACT,
    FindingKind.MANIFESTS: MaintenanceAction.COMPACT_MANIFEST,
    FindingKind.SNAPSHOTS: MaintenanceAction.EXPIRE_SNAPSHOTS,
    FindingKind.CONSUMERS: None,  # a reader's progress: only an operator may move or drop it
    FindingKind.CHANGELOGS: MaintenanceAction.EXPIRE_CHANGELOGS,
    FindingKind.EXPIRED_PARTITIONS: MaintenanceAction.EXPIRE_PARTITIONS,
    FindingKind.EXPIRED_TAGS: MaintenanceAction.EXPIRE_TAGS,
    FindingKind.MISSING_FILE_INDEX: MaintenanceAction.REWRITE_FILE_INDEX,
    FindingKind.UNREADABLE_METADATA: None,
    FindingKind.ORPHAN_FILES: MaintenanceAction.REMOVE_ORPHAN_FILES,
}


_DESCRIPTION: dict[FindingKind, str] = {
    FindingKind.SMALL_FILES: "Files below target-file-size in buckets holding compaction.min.file-num of them",
    FindingKind.SORTED_RUNS: "Sorted runs of the fullest bucket of a primary-key table",
    FindingKind.SIZE_AMPLIFICATION: "Size amplification of the worst bucket, in percent",
    FindingKind.DELETE_RATIO: "Share of rows in live files that are deleted or retracted",
    FindingKind.MANIFESTS: "Data manifests below manifest.target-file-size",
    FindingKind.SNAPSHOTS: "Snapshots past retention that expire would remove",
    FindingKind.CONSUMERS: "Snapshots past retention that consumers keep from expiring",
    FindingKind.CHANGELOGS: "Long-lived changelogs past retention",
    FindingKind.EXPIRED_PARTITIONS: "Partitions older than partition.expiration-time",
    FindingKind.EXPIRED_TAGS: "Tags past their retention",
    FindingKind.MISSING_FILE_INDEX: "Live data files without the file index the table configures",
    FindingKind.UNREADABLE_METADATA: "1 when the table's metadata cannot be read",
    FindingKind.ORPHAN_FILES: "Bytes of orphan files older than 1 day (only with --scan-orphans)",
}


@dataclass(frozen=True)
class Finding:
    """One crossed (or, at ``info``, approached) threshold of one table.

    ``value`` and ``threshold`` are in ``unit`` (``ratio``, ``files``, ``bytes``, ``count``,
    ``seconds``, ...); ``fix`` is the exact command line that fixes it (empty when nothing
    automatic may, e.g. unreadable metadata).
    """

    kind: FindingKind
    severity: Severity
    value: float
    threshold: float
    unit: str
    message: str
    fix: str

    @property
    def action(self) -> MaintenanceAction | None:
        return self.kind.action


@dataclass(frozen=True)
class TableHealth:
    """The health of one table: a score 0-100 (100 = nothing to do) and its findings.

    ``error`` is set (and the score is 0) when the table's metadata cannot be read; such a
    table is never maintained. ``error_code`` is then the exit code of that error (4: corrupt
    or missing metadata; 1: a feature not supported yet, or an unexpected failure).
    """

    database: str
    table: str
    score: int
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    error: str | None = None
    error_code: int | None = None

    @property
    def identifier(self) -> str:
        return f"{self.database}.{self.table}"

    @property
    def actions(self) -> tuple[MaintenanceAction, ...]:
        """The distinct actions the findings call for, in finding order."""
        seen: dict[MaintenanceAction, None] = {}
        for f in self.findings:
            if f.action is not None:
                seen.setdefault(f.action)
        return tuple(seen)
