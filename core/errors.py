"""One exception tree for the whole library.

Each class carries the process exit code the CLI maps it to, so the mapping lives with the
meaning of the error rather than in a table that can drift.
"""

from __future__ import annotations

from collections.abc import Iterable


class PaimonError(Exception):
    """Base of every error the core raises on purpose."""

    exit_code = 1


class NotFound(PaimonError):
    """A warehouse, database, table, branch, snapshot, tag, schema or file does not exist."""

    exit_code = 3


class NoPartitionMatched(NotFound):
    """A ``--partition`` / ``--where`` selection that matches no live partition of the table:
    reported apart from "nothing to do", so a mistyped value in a cron line is seen."""


class InvalidInput(PaimonError):
    """Bad schema, bad option, bad identifier or bad data supplied by the user."""

    exit_code = 4


class CorruptMetadata(InvalidInput):
    """A metadata file (snapshot, schema, manifest, index, hint) exists but cannot be parsed, or
    contradicts the others (a LATEST hint naming a snapshot that is gone, a gap in the ids)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class MissingMetadata(InvalidInput):
    """A manifest list, manifest, index manifest, statistics or schema file that a snapshot,
    tag, changelog or data file names is gone: the table's metadata is broken (exit 4, as when
    it is corrupt), not the table gone (exit 3 is for what the user named: a table, a snapshot
    id, a tag); a refusal for a command that would delete (exit 6)."""


class CommitConflict(PaimonError):
    """Another writer won the race or the change conflicts with the latest snapshot (retryable)."""

    exit_code = 5


class LockNotAcquired(CommitConflict):
    """The catalog's commit lock (``lock.enabled``) stayed held by another writer past
    ``lock-acquire-timeout``; nothing was published, so retrying is safe."""


class CatalogUnavailable(PaimonError):
    """The catalog's metastore (Hive Metastore, JDBC database) could not be reached, timed out
    or answered an error: nothing was changed that the catalog would have had to record."""

    exit_code = 8


class PermissionDenied(PaimonError):
    """The catalog refused the credentials (HTTP 401) or the action on this resource (403):
    nothing was changed. Not corrupt metadata and not a conflict; a retry needs other rights."""

    exit_code = 9


class OutcomeUnknown(PaimonError):
    """A publish (write-if-absent) whose result could not be learnt: the file may hold our
    content or not. Not a conflict to retry (a retry could publish the same change twice);
    nothing the file may reference may be deleted (left-overs are orphans at worst)."""

    exit_code = 1


class UnsafeRefused(PaimonError):
    """The operation could destroy data or could not prove it safe, so nothing was done."""

    exit_code = 6


class NotYetSupported(PaimonError):
    """A feature the toolkit knows about but does not implement yet; refused before any I/O."""

    exit_code = 1


class AlreadyExists(InvalidInput):
    """A database, table, tag or branch with that name already exists."""


# How bad a per-table exit code is, for commands that report many tables (``maintain``,
# ``compact DB``) and exit with the worst: later is worse, an unexpected failure (1) the worst
# listed; a code not listed (a signal's 130 / 143) ranks above all.
EXIT_SEVERITY = (0, 5, 6, 3, 4, 9, 8, 1)


def worst_exit_code(codes: Iterable[int]) -> int:
    """The most severe of ``codes`` (0 when there are none)."""
    def rank(code: int) -> int:
        return EXIT_SEVERITY.index(code) if code in EXIT_SEVERITY else len(EXIT_SEVERITY)

    return max(codes, key=rank, default=0)
