"""CompactUnit / UnitResult: the picklable contract between the planner, the executors and the commit.

A unit is one (partition, bucket) of work decided on the driver; executing it (in-process or in
a Spark task) only reads its input files and writes new ones, never commits. The driver turns
every UnitResult into a CommitMessage and publishes one COMPACT snapshot.

The model lives in the merge tree (Java's ``mergetree.compact.CompactUnit`` / ``CompactResult``)
because the merge tree's strategy picks units and its task executes them; the append
planner and the compaction jobs above use the same model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .commit_message import CommitMessage

if TYPE_CHECKING:
    from ..manifest.index_manifest import IndexFileMeta
    from ..manifest.manifest import DataFileMeta

MERGE_TREE = "merge-tree"
APPEND = "append"


@dataclass(frozen=True)
class CompactUnit:
    """Files of one bucket to compact, and where their output goes.

    ``files`` are the inputs (every file the unit reads and replaces or upgrades).
    ``bucket_files`` are all live files of the bucket at planning time: lookup (deletion
    vectors, ``changelog-producer=lookup``, first-row) reads the levels outside the unit.
    ``index_files`` are the bucket's live deletion-vector index files.
    """

    kind: str  # MERGE_TREE | APPEND
    partition: bytes
    bucket: int
    total_buckets: int
    files: tuple[DataFileMeta, ...]
    output_level: int = 0
    drop_delete: bool = False
    full: bool = False
    max_level: int = 0
    bucket_files: tuple[DataFileMeta, ...] = ()
    index_files: tuple[IndexFileMeta, ...] = ()
    reason: str = ""  # why the planner picked it (size-amplification, size-ratio, run-count, full, force-up, small-files)

    @property
    def bytes_in(self) -> int:
        return sum(f.file_size for f in self.files)

    @property
    def rows_in(self) -> int:
        return sum(f.row_count for f in self.files)


@dataclass
class UnitResult:
    """What executing one unit produced; nothing of it is committed yet.

    ``before``/``after`` become DELETE/ADD entries in that order (a level upgrade lists the
    same file name in both). ``written`` are the paths this unit created, deleted again when
    the job does not commit.
    """

    unit: CompactUnit
    before: list[DataFileMeta] = field(default_factory=list)
    after: list[DataFileMeta] = field(default_factory=list)
    changelog: list[DataFileMeta] = field(default_factory=list)
    new_index_files: list[IndexFileMeta] = field(default_factory=list)
    deleted_index_files: list[IndexFileMeta] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    rows_out: int = 0
    seconds: float = 0.0

    @property
    def bytes_out(self) -> int:
        return sum(f.file_size for f in self.after if f.file_name not in {b.file_name for b in self.before})

    def commit_message(self) -> CommitMessage:
        u = self.unit
        return CommitMessage(
            u.partition, u.bucket, u.total_buckets,
            new_files=list(self.after), deleted_files=list(self.before), changelog_files=list(self.changelog),
            new_index_files=list(self.new_index_files), deleted_index_files=list(self.deleted_index_files),
        )
