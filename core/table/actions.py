"""What a command is about to do to a table: the question the feature gate (``features``) answers.

A module of its own so that code naming actions (``api.table``) loads no gate rules until a
gate is asked: ``inspect`` opens tables without one (start-up, issue 28).
"""

from __future__ import annotations

from enum import Enum


class Action(Enum):
    """What a command is about to do to a table (one gate per command)."""

    WRITE = "write"
    READ = "read"
    COMPACT = "compact"
    RESCALE = "rescale"
    REWRITE_FILE_INDEX = "rewrite-file-index"
    EXPIRE = "expire"
    EXPIRE_CHANGELOGS = "expire-changelogs"
    EXPIRE_PARTITIONS = "expire-partitions"
    REMOVE_ORPHAN_FILES = "remove-orphan-files"
    ROLLBACK = "rollback"
    COMPACT_MANIFEST = "compact-manifest"
    REMOVE_UNEXISTING_FILES = "remove-unexisting-files"
    PURGE_FILES = "purge-files"
    TAG = "tag"
    CONSUMER = "consumer"
    FAST_FORWARD = "branch fast-forward"
    RENAME_BRANCH = "branch rename"
    MERGE_BRANCH = "branch merge"
    DROP_PARTITION = "drop-partition"
    MARK_PARTITION_DONE = "mark-partition-done"
    REMOVE_UNEXISTING_MANIFESTS = "remove-unexisting-manifests"
    CLONE = "clone"
    MATERIALIZE_DELETION_VECTORS = "materialize-deletion-vectors"
