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
from dataclasses import replace

from ..data.types import BlobType
from ..errors import NotYetSupported
from ..manifest.manifest import DataFileMeta, FileKind, ManifestEntry
from ..schema.options import CoreOptions
from ..schema.table_schema import TableSchema

ROW_ID = "_ROW_ID"  # system column: _FIRST_ROW_ID + position in the range
ROW_ID_FIELD_ID = 2147483642  # SpecialFields.ROW_ID (Integer.MAX_VALUE - 5)


def is_data_evolution(options: CoreOptions) -> bool:
    return options.get_bool("data-evolution.enabled")


def check_no_blob(schema: TableSchema, what: str) -> None:
    """BLOB columns live in ``.blob`` files that join a range's group; not supported yet."""
    blobs = [f.name for f in schema.fields if isinstance(f.type, BlobType)]
    declared = schema.options.get("blob-field")
    if declared:
        blobs += [c.strip() for c in declared.split(",") if c.strip() and c.strip() not in blobs]
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


def check_row_ids_assigned(entries: Iterable[ManifestEntry]) -> None:
    """New files must carry their ``_FIRST_ROW_ID``: assigning ids at commit is not supported yet."""
    for e in entries:
        if e.kind == FileKind.ADD and e.file.first_row_id is None:
            raise NotYetSupported(f"row-tracking / data-evolution tables: file {e.file.file_name} has no row ids; "
                                  "assigning row ids at commit is not supported yet")


def stamp_sequence_numbers(entries: list[ManifestEntry], snapshot_id: int) -> list[ManifestEntry]:
    """Java's commit on row-tracking tables (1.4+): a new file (min sequence number 0) gets the
    snapshot id as min and max; one with max 0 gets it as max; others keep their range."""
    out = []
    for e in entries:
        f = e.file
        if f.min_sequence_number == 0:
            f = replace(f, min_sequence_number=snapshot_id, max_sequence_number=snapshot_id)
        elif f.max_sequence_number == 0:
            f = replace(f, max_sequence_number=snapshot_id)
        out.append(e if f is e.file else replace(e, file=f))
    return out
