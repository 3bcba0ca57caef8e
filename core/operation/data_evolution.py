"""Data evolution (``data-evolution.enabled``, Paimon 1.3+): a table whose rows are addressed by
row id and whose columns may be rewritten file by file.

Per row-id range ``[_FIRST_ROW_ID, _FIRST_ROW_ID + _ROW_COUNT)`` a table holds one file with
every column and any number of partial-column files (``_WRITE_COLS``) that overlay the whole
range; for each column the file with the highest ``_MAX_SEQUENCE_NUMBER`` wins (Java's
``DataEvolutionSplitRead``). This module groups files into those ranges and counts rows as
Java's ``DataSplit`` does; the split read is in ``data_evolution_read``.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import NotYetSupported
from ..manifest.manifest import DataFileMeta
from ..schema.table_schema import TableSchema
from .blob_read import blob_columns


def check_no_blob(schema: TableSchema, what: str) -> None:
    """Writing BLOB columns (``.blob`` files beside each data file) is not supported yet."""
    blobs = blob_columns(schema)
    if blobs:
        raise NotYetSupported(f"{what}: BLOB columns ({', '.join(blobs)}) of data-evolution tables are not supported "
                              "yet")


def row_range_groups(files: Iterable[DataFileMeta]) -> list[list[DataFileMeta]]:
    """Files grouped by overlapping row-id ranges, groups in row-id order, files in input order.

    Every data-evolution file carries ``_FIRST_ROW_ID`` (assigned at commit); a file without it
    stores its row ids physically (row-tracking compaction output), which is refused.
    """
    ordered = []
    for i, f in enumerate(files):
        if f.first_row_id is None:
            raise NotYetSupported(f"data evolution: file {f.file_name} has no _FIRST_ROW_ID (row ids stored in the "
                                  "file); reading such files is not supported yet")
        ordered.append((f.first_row_id, i, f))
    ordered.sort(key=lambda t: (t[0], t[1]))
    groups: list[list[tuple[int, DataFileMeta]]] = []
    end = -1
    for first, i, f in ordered:
        last = first + f.row_count - 1
        if groups and first <= end:
            groups[-1].append((i, f))
            end = max(end, last)
        else:
            groups.append([(i, f)])
            end = last
    return [[f for _, f in sorted(g, key=lambda t: t[0])] for g in groups]


def logical_row_count(files: Iterable[DataFileMeta]) -> int:
    """Rows a read returns before deletion vectors: the largest file of each row-id range
    (partial-column files repeat their range's rows), summed as Java's ``DataSplit`` does."""
    return sum(max(f.row_count for f in g) for g in row_range_groups(files))
