"""Branches: ``<table>/branch/branch-<name>/`` directories with their own metadata.

Java keeps no branch metadata file. Its ``$branches`` system table derives everything
from the directory tree:

* master (1.x+): columns ``branch_name, create_time``; create time is the modification
  time of the branch directory (``FileIO.getFileStatus(branchPath)``).
* 0.9: ``branch_name, created_from_tag, created_from_snapshot, create_time``; the two
  ``created_from`` columns are inferred from the branch's own tags and earliest snapshot
  (see :meth:`BranchManager.branch_origin`).

Object stores have no directory mtime, so we fall back to the oldest schema file in the
branch (written when the branch was created).
"""

from __future__ import annotations

from ..errors import InvalidInput
from ..io.commit_lock import NO_LOCK, CommitLock
from ..io.fileio import FileIO, join
from ..io.paths import BRANCH_PREFIX, MAIN_BRANCH, branch_dir, branch_path, check_name_length
from .snapshot import SnapshotManager
from .tags import TagManager


def validate_branch_name(name: str) -> None:
    """Java's rules (not ``main``, not blank, not all digits) plus path safety."""
    if name is None or not name.strip():
        raise InvalidInput(f"branch name {name!r} is blank")
    check_name_length("branch", name)
    if name == MAIN_BRANCH:
        raise InvalidInput("branch name 'main' is the default branch and cannot be used")
    if name.isdigit() and name.isascii():
        raise InvalidInput(f"branch name cannot be a pure numeric string but is {name!r}")
    if "/" in name or "\\" in name or any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise InvalidInput(f"branch name {name!r} must not contain '/', '\\' or control characters")


class BranchManager:
    def __init__(self, file_io: FileIO, table_path: str, lock: CommitLock = NO_LOCK) -> None:
        self.file_io = file_io
        self.lock = lock  # the catalog's commit lock: branch operations run under it
        self.table_path = table_path

    @property
    def branch_dir(self) -> str:
        return branch_dir(self.table_path)

    def branch_path(self, name: str) -> str:
        return branch_path(self.table_path, name)

    def branch_names(self) -> list[str]:
        return sorted(
            s.name[len(BRANCH_PREFIX) :]
            for s in self.file_io.list_status(self.branch_dir)
            if s.is_dir and s.name.startswith(BRANCH_PREFIX) and len(s.name) > len(BRANCH_PREFIX)
        )

    def branches(self) -> list[tuple[str, int]]:
        """(name, create time in epoch millis) sorted by name."""
        out = []
        for s in self.file_io.list_status(self.branch_dir):
            if not (s.is_dir and s.name.startswith(BRANCH_PREFIX) and len(s.name) > len(BRANCH_PREFIX)):
                continue
            name = s.name[len(BRANCH_PREFIX) :]
            mtime = s.mtime_millis
            if not mtime:
                mtime = self._schema_mtime(name)
            out.append((name, mtime or 0))
        out.sort()
        return out

    def create_time_millis(self, name: str) -> int | None:
        for n, t in self.branches():
            if n == name:
                return t
        return None

    def _schema_mtime(self, name: str) -> int | None:
        times = [
            s.mtime_millis
            for s in self.file_io.list_status(join(self.branch_path(name), "schema"))
            if s.name.startswith("schema-") and s.mtime_millis
        ]
        return min(times) if times else None

    def branch_exists(self, name: str) -> bool:
        if not name or name == MAIN_BRANCH or "/" in name:
            return name == MAIN_BRANCH
        return self.file_io.exists(self.branch_path(name))

    def branch_origin(self, name: str) -> tuple[str | None, int | None]:
        """(created_from_tag, created_from_snapshot) inferred as Java 0.9's ``$branches`` does.

        Only branches with a schema get values. With no tags the snapshot is the branch's
        earliest snapshot id. If the first tag (lowest snapshot id) sits on the earliest
        snapshot, the branch was created from that tag. Java asserts one tag per snapshot
        there; we take the first name instead of failing.
        """
        schema_dir = join(self.branch_path(name), "schema")
        if not any(n.startswith("schema-") for n in self.file_io.list_names(schema_dir)):
            return None, None
        earliest = SnapshotManager(self.file_io, self.table_path, name).earliest_snapshot_id()
        tags = TagManager(self.file_io, self.table_path, name).tags()
        if tags and tags[0].snapshot.id == earliest:
            return tags[0].name, earliest
        return None, earliest
