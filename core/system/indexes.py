"""``$table_indexes`` and ``$statistics``: the index files (hash, deletion vectors) and the
statistics file a snapshot references."""

from __future__ import annotations

from ..manifest.entry_decoder import EntryDecoder
from ..operation.scan import FileStoreScan
from ..refs.statistics import read_statistics
from ..table.file_store_table import FileStoreTable, TimeTravel
from ..utils.rows import JavaText, Rows


def table_indexes(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    cols = ["partition", "bucket", "index_type", "file_name", "file_size", "row_count", "dv_ranges"]
    snap = table.resolve_snapshot(at)
    dec = EntryDecoder(table)
    rows = []
    for e in FileStoreScan(table).index_entries(snap):
        f = e.index_file
        rows.append({
            "partition": dec.partition_string(e.partition),
            "bucket": e.bucket,
            "index_type": f.index_type,
            "file_name": f.file_name,
            "file_size": f.file_size,
            "row_count": f.row_count,
            "dv_ranges": None if f.dv_ranges is None else [
                {"f0": d.data_file_name, "f1": d.offset, "f2": d.length, "_CARDINALITY": d.cardinality}
                for d in f.dv_ranges
            ],
        })
    return Rows(cols, rows)


def statistics(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    cols = ["snapshot_id", "schema_id", "mergedRecordCount", "mergedRecordSize", "colstat"]
    snap = table.resolve_snapshot(at)
    if snap is None or not snap.statistics:
        return Rows(cols, [])
    st = read_statistics(table.file_io, table.path, snap.statistics)
    return Rows(cols, [{
        "snapshot_id": st.snapshot_id,
        "schema_id": st.schema_id,
        "mergedRecordCount": st.merged_record_count,
        "mergedRecordSize": st.merged_record_size,
        "colstat": JavaText(st.col_stats_json(), st.col_stats_dict()),
    }])
