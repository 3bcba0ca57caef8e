"""Decode what a manifest entry stores as bytes: partition, min/max key, and value stats.

Everything derived from a partition or a schema is computed once: a table has few of those
and may have hundreds of thousands of files. Values are rendered as Java's system tables
render them (partitions as ``[v1, v2]``).
"""

from __future__ import annotations

from typing import Any

from ..data.binary_row import deserialize, serialized_arity
from ..data.java_format import java_array_string
from ..io import paths
from ..utils.rows import JavaText
from .stats_reader import StatsReader, TableSchemas


class EntryDecoder(StatsReader):
    """Partitions, keys and stats of files written under any schema of the table."""

    def __init__(self, table: TableSchemas) -> None:
        super().__init__(table)
        self.partition_types = [f.type for f in table.schema.logical_partition_type.fields]
        self.partition_names = [f.name for f in table.schema.logical_partition_type.fields]
        self._values: dict[bytes, list[Any]] = {}
        self._strings: dict[bytes, JavaText] = {}
        self._dirs: dict[bytes, str] = {}
        self._key_types: dict[int, list[Any]] = {}

    def partition_values(self, partition: bytes) -> list[Any]:
        hit = self._values.get(partition)
        if hit is None:
            hit = deserialize(partition, self.partition_types) if self.partition_types else []
            self._values[partition] = hit
        return hit

    def partition_string(self, partition: bytes) -> JavaText:
        """``[v1, v2]``, as Java's ``$files`` / ``$partitions`` print a partition; typed
        ``{column: value}``."""
        hit = self._strings.get(partition)
        if hit is None:
            values = self.partition_values(partition)
            hit = self._strings[partition] = JavaText(java_array_string(values, self.partition_types),
                                                      dict(zip(self.partition_names, values, strict=True)))
        return hit

    def partition_dir(self, partition: bytes) -> str:
        """The partition's folder under the table (``dt=2024-05-01/``; empty if unpartitioned)."""
        hit = self._dirs.get(partition)
        if hit is None:
            hit = self._dirs[partition] = paths.partition_path_for(self.table.schema, self.partition_values(partition))
        return hit

    def key_string(self, key: bytes, schema_id: int) -> JavaText | None:
        """A file's min/max key as ``[k1, k2]`` in its own schema (typed: the list of
        values); None for an empty key."""
        values = self.key_values(key, schema_id)
        return None if values is None else JavaText(java_array_string(values, self.key_types(schema_id)), values)

    def key_values(self, key: bytes, schema_id: int) -> list[Any] | None:
        """A file's min/max key values in its own schema; None for an empty key."""
        if serialized_arity(key) <= 0:
            return None
        return deserialize(key, self.key_types(schema_id))

    def key_types(self, schema_id: int) -> list[Any]:
        """The types of a file's min/max key in its own schema (the trimmed primary key)."""
        types = self._key_types.get(schema_id)
        if types is None:
            s = self.schema(schema_id)
            types = self._key_types[schema_id] = [s.field(n).type for n in s.trimmed_primary_keys]
        return types
