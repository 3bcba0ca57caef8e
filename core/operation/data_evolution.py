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

from ..errors import InvalidInput, NotYetSupported
from ..manifest.manifest import DataFileMeta
from ..schema.table_schema import TableSchema
from .blob_read import blob_columns, check_blob_read
from .row_tracking import is_data_evolution


def check_blob_writable(schema: TableSchema, what: str) -> list[str]:
    """The columns a write puts in ``.blob`` files; refuses the BLOB layouts it does not write.

    As Java 1.4+: BLOB columns live in ``.blob`` files of data-evolution append tables. Blob
    descriptors or views stored inline, BLOBs nested in ARRAY / MAP (2.0+), primary-key blob
    packs (2.0+) and descriptor input (``blob-as-descriptor``) are refused by name.
    """
    check_blob_read(schema, what)
    blobs = blob_columns(schema)
    if not blobs:
        return []
    if schema.primary_keys or not is_data_evolution(schema.core_options):
        raise NotYetSupported(f"{what}: BLOB columns ({', '.join(blobs)}) are written only to data-evolution "
                              "append tables (data-evolution.enabled); primary-key blob packs (Paimon 2.0+) are "
                              "not supported")
    if schema.options.get("blob-as-descriptor", "false").strip().lower() == "true":
        raise NotYetSupported(f"{what}: blob-as-descriptor=true (BLOB input given as descriptors to fetch) is not "
                              "supported; give the blob bytes")
    parts = [c for c in blobs if c in schema.partition_keys]
    if parts:
        raise InvalidInput(f"{what}: BLOB column(s) {', '.join(parts)} cannot be partition keys (Java refuses "
                           "this table)")
    return blobs


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
