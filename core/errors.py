"""One exception tree for the whole library.

Each class carries the process exit code the CLI maps it to, so the mapping lives with the
meaning of the error rather than in a table that can drift.
"""

from __future__ import annotations


class PaimonError(Exception):
    """Base of every error the core raises on purpose."""

    exit_code = 1


class NotFound(PaimonError):
    """A warehouse, database, table, branch, snapshot, tag, schema or file does not exist."""

    exit_code = 3


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
