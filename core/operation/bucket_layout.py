"""The bucket number a fixed-bucket partition is laid out with, and the refusal to mix two.

A fixed-bucket partition keeps the bucket number its files were written with (the manifest
entries' ``_TOTAL_BUCKETS``) until it is rewritten; ``alter --set bucket=N`` changes only the
schema. Writing into such a partition would hash keys into the new layout while the old rows
stay in the old one -- two rows per key -- so ``write`` and ``compact`` refuse it (Java's
``AbstractFileStoreWrite`` check) and name the ``rescale`` command that rewrites it
(:mod:`core.compact.rescale`).
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from .partition_spec import partition_label

if TYPE_CHECKING:
    from ..manifest.manifest import ManifestEntry
    from ..table.file_store_table import FileStoreTable


def rescale_command(table: FileStoreTable, partition: bytes | None) -> str:
    """The ``paimon-cli rescale`` command that rewrites ``partition`` (None: every partition
    that needs it) -- quoted for a POSIX shell."""
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
