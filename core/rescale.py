"""A fixed-bucket partition keeps the bucket number its files were written with.

Why: ``alter --set bucket=N`` changes only the schema; the manifest entries of the existing
files keep their ``_TOTAL_BUCKETS``. Writing into such a partition would hash keys into the
new layout while the old rows stay in the old one -- two rows per key -- so ``write`` and
``compact`` refuse it (:func:`check_bucket_layout`, Java's ``AbstractFileStoreWrite``
check "Try to write ... with a new bucket num") and name the command that rewrites it.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from .errors import InvalidInput

if TYPE_CHECKING:
    from .manifest import ManifestEntry
    from .table import FileStoreTable

# ---------------------------------------------------------------------------------------
# The refusal of write / compact
# ---------------------------------------------------------------------------------------

def rescale_command(table: FileStoreTable, partition: bytes | None) -> str:
    """The ``paimon-cli rescale`` command that rewrites ``partition`` (None: every partition
    that needs it) -- quoted for a POSIX shell."""
    from .compact.job import partition_label

    args = ["paimon-cli", "rescale", str(table.identifier)]
    label = partition_label(table.schema, partition) if partition is not None else ""
    # a value holding ',' or ';' cannot be spelled as a --partition spec: rescale them all
    values = label.split(",") if label else []
    if label and len(values) == len(table.schema.partition_keys) and ";" not in label:
        args += ["--partition", label]
    if table.branch:
        args += ["--branch", table.branch]
    return " ".join(shlex.quote(a) for a in args)

def check_bucket_layout(
    table: FileStoreTable, partition: bytes, previous: Collection[int], action: str, expected: int | None = None
) -> None:
    """InvalidInput when ``partition`` holds files written with another bucket number than
    ``expected`` (the table's option): writing there would split keys over two layouts."""
    expected = table.schema.bucket if expected is None else expected
    other = sorted({b for b in previous if b > 0 and b != expected})
    if not other:
        return
    from .compact.job import partition_label

    label = partition_label(table.schema, partition)
    where = f"partition {label} of {table.identifier}" if label else str(table.identifier)
    counts = " and ".join(str(b) for b in other)
    why = " (writing would put keys in two buckets)" if action == "write" else ""
    raise InvalidInput(
        f"{action}: {where} holds files written with {counts} buckets, but the table's bucket option is "
        f"{expected}{why}; rewrite it into the new layout first: {rescale_command(table, partition)}"
    )

def check_entries_layout(table: FileStoreTable, entries: Sequence[ManifestEntry], action: str) -> None:
    """:func:`check_bucket_layout` for every partition of ``entries`` (fixed-bucket tables)."""
    if table.schema.bucket <= 0:
        return
    totals: dict[bytes, set[int]] = {}
    for e in entries:
        totals.setdefault(e.partition, set()).add(e.total_buckets)
    for partition in sorted(totals):
        check_bucket_layout(table, partition, totals[partition], action)

__all__ = ["check_bucket_layout", "check_entries_layout", "rescale_command"]
