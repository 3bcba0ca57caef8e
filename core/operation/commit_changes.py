"""The changes one commit attempt writes (Java's ``CommitChanges``) and what an overwrite
changes (Java's ``OverwriteChangesProvider``): the live data and index files of the
overwritten partitions, deleted on the snapshot the attempt builds on.

:class:`OverwriteChanges` is a part of ``commit.FileStoreCommit`` (its state lives there).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..io import paths
from ..manifest.index_manifest import IndexManifestEntry
from ..manifest.manifest import FileKind, ManifestEntry
from ..refs.snapshot import Snapshot
from .commit_conflicts import ConflictDetection, LiveFiles, partition_text
from .partition_spec import static_partition_filter

if TYPE_CHECKING:
    from ..schema.options import CoreOptions
    from ..table.file_store_table import FileStoreTable


@dataclass
class CommitChanges:
    """The manifest entries of one attempt."""

    table: list[ManifestEntry]
    changelog: list[ManifestEntry]
    index: list[IndexManifestEntry]


class OverwriteChanges:
    """The overwrite verbs of ``commit.FileStoreCommit`` (which sets these attributes)."""

    table: FileStoreTable
    options: CoreOptions
    partition_types: list[Any]
    live: LiveFiles
    conflicts: ConflictDetection
    overwritten_files: int

    if TYPE_CHECKING:
        def _try_commit(self, build: Callable[[Snapshot | None], CommitChanges], kind: str, check_conflicts: bool,
                        identifier: int, watermark: int | None, props: dict[str, str] | None,
                        operation: str | None = None) -> Snapshot: ...

    def _overwrite(
        self,
        spec: Mapping[str, Any],
        table_entries: list[ManifestEntry],
        index_entries: list[IndexManifestEntry],
        dynamic: bool | None,
        identifier: int,
        watermark: int | None,
        props: dict[str, str] | None,
        base_snapshot_id: int | None = None,
    ) -> Snapshot | None:
        """Delete every live file (and index file) the filter selects, then add the new ones."""
        adds: dict[bytes, str] = {}
        for e in table_entries:
            if e.kind == FileKind.ADD:
                adds.setdefault(e.partition, e.file.file_name)
        skip, part_filter = self._overwrite_scope(spec, adds, dynamic)
        if skip:
            return None  # dynamic mode: nothing new, nothing deleted (as Java)
        return self._overwrite_filtered(
            part_filter, table_entries, index_entries, identifier, watermark, props, base_snapshot_id
        )

    def _overwrite_scope(self, spec: Mapping[str, Any], adds: Mapping[bytes, str], dynamic: bool | None
                         ) -> tuple[bool, Callable[[bytes], bool] | None]:
        """(nothing to do, the partition filter of what goes; None = whole table) for new files
        in ``adds`` (partition -> a file name, for the refusal of one outside ``spec``)."""
        partitioned = bool(self.partition_types)
        if dynamic is None:
            dynamic = self.options.get_bool("dynamic-partition-overwrite", True)
        dynamic = dynamic and partitioned
        static = static_partition_filter(self.table.schema, spec)
        if static is not None:
            for partition, name in adds.items():
                if not static(partition):
                    raise InvalidInput(
                        f"overwrite of partition {dict(spec)}: new file {name} is in partition "
                        f"{partition_text(self.table.schema, partition)}, outside the overwritten partition"
                    )
        if dynamic:
            return not adds, set(adds).__contains__
        return False, static

    def overwrite_deletes(self, spec: Mapping[str, Any], adds: Mapping[bytes, str], dynamic: bool | None
                          ) -> tuple[Snapshot | None, list[ManifestEntry], list[IndexManifestEntry]]:
        """What an overwrite with new files in the partitions ``adds`` names would delete from
        the latest snapshot (a dry run: the same selection :meth:`commit` makes); writes nothing."""
        latest = self.table.snapshot_manager.latest_snapshot()
        skip, part_filter = self._overwrite_scope(spec, adds, dynamic)
        if skip or latest is None:
            return latest, [], []
        deletes, index_deletes = self._overwritten(latest, part_filter)
        return latest, deletes, index_deletes

    def _overwritten(self, latest: Snapshot, part_filter: Callable[[bytes], bool] | None
                     ) -> tuple[list[ManifestEntry], list[IndexManifestEntry]]:
        """DELETE entries of the live data and index files ``part_filter`` selects (None: all)."""
        deletes: list[ManifestEntry] = []
        index_deletes: list[IndexManifestEntry] = []
        for e in self.live.data(latest, part_filter):
            if e.bucket < 0 and self.table.schema.bucket != paths.POSTPONE_BUCKET:
                continue  # Java: only an overwrite through the postpone table drops staged files
            deletes.append(ManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.total_buckets, e.file))
        for ie in self.live.index(latest):
            if part_filter is None or part_filter(ie.partition):
                index_deletes.append(IndexManifestEntry(FileKind.DELETE, ie.partition, ie.bucket, ie.index_file))
        return deletes, index_deletes

    def _overwrite_filtered(
        self,
        part_filter: Callable[[bytes], bool] | None,
        table_entries: list[ManifestEntry],
        index_entries: list[IndexManifestEntry],
        identifier: int,
        watermark: int | None,
        props: dict[str, str] | None,
        base_snapshot_id: int | None,
        operation: str | None = None,
    ) -> Snapshot:
        adds = [e for e in table_entries if e.kind == FileKind.ADD]
        extra_deletes = [e for e in table_entries if e.kind == FileKind.DELETE]

        def build(latest: Snapshot | None) -> CommitChanges:
            if base_snapshot_id is not None:
                self.conflicts.check_nothing_added_since(base_snapshot_id, latest, part_filter)
            deletes: list[ManifestEntry] = []
            index_deletes: list[IndexManifestEntry] = []
            if latest is not None:
                deletes, index_deletes = self._overwritten(latest, part_filter)
            self.overwritten_files = len(deletes)
            seen = {d.identifier() for d in deletes}
            deletes += [d for d in extra_deletes if d.identifier() not in seen]
            return CommitChanges(deletes + adds, [], index_deletes + index_entries)

        return self._try_commit(build, "OVERWRITE", True, identifier, watermark, props, operation)
