"""CommitMessage: what one writer (or compaction unit) hands the commit for one bucket.

It lives beside the writers that produce it (the rolling file writer, compaction units), so
the merge tree can describe its output without depending on the commit that consumes it
(:class:`core.operation.commit.FileStoreCommit`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..manifest.index_manifest import IndexFileMeta
    from ..manifest.manifest import DataFileMeta


@dataclass
class CommitMessage:
    """What one writer produced for one (partition, bucket): Java's CommitMessageImpl, flattened.

    ``deleted_files`` are DELETE entries (compaction inputs, or files a rewrite replaces);
    ``new_files`` are ADDs. Index files: HASH / DELETION_VECTORS files of that bucket.
    """

    partition: bytes
    bucket: int
    total_buckets: int
    new_files: list[DataFileMeta] = field(default_factory=list)
    deleted_files: list[DataFileMeta] = field(default_factory=list)
    changelog_files: list[DataFileMeta] = field(default_factory=list)
    new_index_files: list[IndexFileMeta] = field(default_factory=list)
    deleted_index_files: list[IndexFileMeta] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (
            self.new_files or self.deleted_files or self.changelog_files
            or self.new_index_files or self.deleted_index_files
        )
