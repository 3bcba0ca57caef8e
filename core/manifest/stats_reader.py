"""Decode a data file's value and key stats into the table's *current* columns.

A file keeps the stats of the schema it was written with (``schema_id``), possibly only for
some columns (``value_stats_cols``). Columns are matched by field id, so renamed columns keep
their stats; a column the file's schema did not have counts all its rows as null (Java's
``SimpleStatsEvolution``). A file with ``_WRITE_COLS`` holds and has stats over only those
columns (a data-evolution partial-column file; a row-tracking compaction adds ``_ROW_ID`` and
``_SEQUENCE_NUMBER``; Java's ``EvolutionStatsCache``: schema projected to the write columns,
then to the stats columns). Used by ``inspect files`` and by the reader's stats pruning.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..data.binary_row import deserialize
from ..data.types import DataField
from ..format.arrow_schema import row_tracking_fields
from ..schema.table_schema import TableSchema
from .manifest import DataFileMeta

# (min, max, null_count, row_count) of one column, as core.data.predicate's might_match takes it
ColumnStats = tuple[Any, Any, "int | None", int]


class SchemaHistory(Protocol):
    def schema(self, schema_id: int) -> TableSchema: ...


class TableSchemas(Protocol):
    """What decoding a file's metadata needs of a table: its current schema, and the schema
    each file was written with (a ``FileStoreTable`` is one)."""

    @property
    def schema(self) -> TableSchema: ...

    @property
    def schema_manager(self) -> SchemaHistory: ...


class StatsReader:
    """Per-table decoder; layouts derived from a (schema id, stats columns) pair are cached."""

    def __init__(self, table: TableSchemas) -> None:
        self.table = table
        self._schemas: dict[int, TableSchema] = {}
        self._stats_layouts: dict[tuple[int, Any, Any], tuple[list[Any], list[tuple[str, int | None, bool]]]] = {}
        self._key_layouts: dict[int, tuple[list[Any], list[tuple[str, int | None]]]] = {}

    def schema(self, schema_id: int) -> TableSchema:
        s = self._schemas.get(schema_id)
        if s is None:
            s = self.table.schema if schema_id == self.table.schema.id else self.table.schema_manager.schema(schema_id)
            self._schemas[schema_id] = s
        return s

    def file_fields(self, meta: DataFileMeta) -> list[DataField]:
        """The columns ``meta`` holds: its schema's, or its ``_WRITE_COLS`` in their order
        (``_ROW_ID`` / ``_SEQUENCE_NUMBER`` included), as Java's ``TableSchema.project``."""
        fields = list(self.schema(meta.schema_id).fields)
        if meta.write_cols is None:
            return fields
        by_name = {f.name: f for f in [*fields, *row_tracking_fields()]}
        return [by_name[n] for n in meta.write_cols if n in by_name]

    # -- value stats --------------------------------------------------------------------

    def _stats_layout(self, meta: DataFileMeta) -> tuple[list[Any], list[tuple[str, int | None, bool]]]:
        """(stats row types, per current column: (name, index in the stats row, column in file))."""
        key = (meta.schema_id, meta.value_stats_cols, meta.write_cols)
        hit = self._stats_layouts.get(key)
        if hit is None:
            file_fields = self.file_fields(meta)
            stats_fields = file_fields
            if meta.value_stats_cols is not None:
                by_name = {f.name: f for f in file_fields}
                stats_fields = [by_name[n] for n in meta.value_stats_cols if n in by_name]
            by_id = {f.id: i for i, f in enumerate(stats_fields)}
            in_file = {f.id for f in file_fields}  # a column the file does not hold: all its rows null
            hit = (
                [f.type.copy(nullable=True) for f in stats_fields],
                [(f.name, by_id.get(f.id), f.id in in_file) for f in self.table.schema.fields],
            )
            self._stats_layouts[key] = hit
        return hit

    def value_stats(self, meta: DataFileMeta) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """(null counts, mins, maxes) keyed by *current* column name, evolved by field id."""
        types, layout = self._stats_layout(meta)
        vs = meta.value_stats
        mins = deserialize(vs.min_values, types) if types else []
        maxs = deserialize(vs.max_values, types) if types else []
        nulls = list(vs.null_counts or [])
        nc: dict[str, Any] = {}
        lo: dict[str, Any] = {}
        hi: dict[str, Any] = {}
        for name, i, in_file in layout:
            if i is None:
                nc[name] = None if in_file else meta.row_count
                lo[name] = hi[name] = None
            else:
                nc[name] = nulls[i] if i < len(nulls) else None
                lo[name] = mins[i] if i < len(mins) else None
                hi[name] = maxs[i] if i < len(maxs) else None
        return nc, lo, hi

    def value_column_stats(self, meta: DataFileMeta) -> dict[str, ColumnStats]:
        """Value stats per current column as ``(min, max, null_count, row_count)``."""
        nc, lo, hi = self.value_stats(meta)
        return {name: (lo[name], hi[name], nc[name], meta.row_count) for name in nc}

    # -- key stats (primary-key files) ----------------------------------------------------

    def key_column_stats(self, meta: DataFileMeta) -> dict[str, ColumnStats]:
        """Stats of the ``_KEY_`` columns, keyed by the current name of each trimmed key column."""
        layout = self._key_layouts.get(meta.schema_id)
        if layout is None:
            fs = self.schema(meta.schema_id)
            file_keys = [fs.field(n) for n in fs.trimmed_primary_keys]
            pos = {f.id: i for i, f in enumerate(file_keys)}
            cur = self.table.schema
            layout = (
                [f.type.copy(nullable=True) for f in file_keys],
                [(n, pos.get(cur.field(n).id)) for n in cur.trimmed_primary_keys],
            )
            self._key_layouts[meta.schema_id] = layout
        types, names = layout
        ks = meta.key_stats
        if ks is None or not types:
            return {}
        mins = deserialize(ks.min_values, types)
        maxs = deserialize(ks.max_values, types)
        nulls = list(ks.null_counts or [])
        out: dict[str, ColumnStats] = {}
        for name, i in names:
            if i is not None:
                out[name] = (
                    mins[i] if i < len(mins) else None,
                    maxs[i] if i < len(maxs) else None,
                    nulls[i] if i < len(nulls) else None,
                    meta.row_count,
                )
        return out
