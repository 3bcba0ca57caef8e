"""Build a data file's file indexes from the table's ``file-index.*`` options (Java
``DataFileIndexWriter``), and decide where they go.

Options (parsed and validated in :mod:`core.schema.file_index_options`):
``file-index.<type>.columns = a,b`` declares indexes; ``file-index.<type>.<col>.<key>``
configures one (bloom-filter ``items`` / ``fpp``, bitmap ``version`` / ``index-block-size``).
Placement: the container goes into the manifest (``_EMBEDDED_FILE_INDEX``) when it is at
most ``file-index.in-manifest-threshold`` (500 bytes) long, else into ``<data file>.index``
next to the data file, named in ``_EXTRA_FILES``.

Java 0.9 kept ONE index per column (a second type on the same column was silently
dropped); 1.x builds each. We build each, as 1.x.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..io.fileio import FileIO, join
from ..schema.file_index_options import (
    BITMAP,
    BLOOM_FILTER,
    IndexSpec,
    bitmap_options,
    bloom_filter_options,
    check_index_spec,
    configured_indexes,
)
from ..schema.options import CoreOptions
from .bitmap import BitmapBuilder
from .bloom import BloomFilterBuilder
from .bsi import BsiBuilder
from .format import write_container
from .values import to_column

if TYPE_CHECKING:
    import pyarrow as pa

    from ..data.types import DataField


def _builder(spec: IndexSpec, f: DataField) -> Any:
    if spec.index_type == BLOOM_FILTER:
        return BloomFilterBuilder(*bloom_filter_options(spec.column, spec.opts))
    if spec.index_type == BITMAP:
        version, block = bitmap_options(spec.column, spec.opts)
        return BitmapBuilder(f.type, version, block)
    return BsiBuilder()


@dataclass
class _Column:
    data_field: DataField
    builders: list[Any] = field(default_factory=list)


class DataFileIndexWriter:
    """Indexes of one data file, fed batch by batch (columns looked up by field name)."""

    def __init__(self, specs: Sequence[IndexSpec], fields: Sequence[DataField]) -> None:
        by_name = {f.name: f for f in fields}
        self.columns: dict[str, _Column] = {}
        for spec in specs:
            check_index_spec(spec, by_name)
            col = self.columns.setdefault(spec.column, _Column(by_name[spec.column]))
            if any(b.index_type == spec.index_type for b in col.builders):
                continue
            col.builders.append(_builder(spec, by_name[spec.column]))
        self.rows = 0

    @staticmethod
    def create(fields_or_schema: Any, options: Mapping[str, str] | Any) -> DataFileIndexWriter | None:
        """A writer for the table's configured indexes, or None when none are configured.

        ``fields_or_schema``: a TableSchema or a list of DataFields (the names the batches use);
        ``options``: a dict or CoreOptions.
        """
        opts = options.options if hasattr(options, "options") and not isinstance(options, Mapping) else options
        specs = configured_indexes(opts)
        if not specs:
            return None
        fields = list(getattr(fields_or_schema, "fields", fields_or_schema))
        return DataFileIndexWriter(specs, fields)

    @property
    def column_names(self) -> list[str]:
        return list(self.columns)

    def write_batch(self, data: pa.Table | pa.RecordBatch) -> None:
        for name, col in self.columns.items():
            c = to_column(data.column(name), col.data_field.type)
            for b in col.builders:
                b.add(c)
        self.rows += data.num_rows

    def serialized(self) -> dict[str, dict[str, bytes | None]]:
        """``{column: {type: payload}}`` in declared order (write_container orders them)."""
        out: dict[str, dict[str, bytes | None]] = {}
        for name, col in self.columns.items():
            for b in col.builders:
                payload = b.serialize()
                if payload is None:  # e.g. BSI over Long.MIN_VALUE: no index rather than a wrong one
                    continue
                out.setdefault(name, {})[b.index_type] = payload
        return out

    def finish(self) -> bytes | None:
        """The container bytes (None if nothing was indexed)."""
        data = write_container(self.serialized())
        return data or None


def place_index(
    file_io: FileIO, data_file_path: str, container: bytes | None, threshold: int, index_file_name: str | None = None,
) -> tuple[bytes | None, tuple[str, ...]]:
    """(embedded bytes, extra file names): embed up to ``threshold`` bytes, else write a file."""
    if not container:
        return None, ()
    if len(container) <= threshold:
        return container, ()
    parent, _, name = data_file_path.rpartition("/")
    index_name = index_file_name or name + ".index"
    file_io.write_bytes(join(parent, index_name), container, overwrite=True)
    return None, (index_name,)


def index_file_for_data_file(file_io: FileIO, data_file_path: str, writer: DataFileIndexWriter | None,
                             threshold: int) -> tuple[bytes | None, tuple[str, ...]]:
    """Finish ``writer`` and place its result next to ``data_file_path`` (the write-path hook)."""
    if writer is None:
        return None, ()
    return place_index(file_io, data_file_path, writer.finish(), threshold)


class PlacedIndexBuilder:
    """The per-data-file builder the rolling writers call (``write_batch`` / ``finish``):
    ``finish()`` returns ``(embedded bytes | None, extra file names)`` with the ``.index``
    file already written next to the data file when the container is over the threshold."""

    def __init__(self, writer: DataFileIndexWriter, file_io: FileIO, data_file_path: str, threshold: int) -> None:
        self.writer = writer
        self.file_io = file_io
        self.path = data_file_path
        self.threshold = threshold

    def write_batch(self, data: pa.Table | pa.RecordBatch) -> None:
        self.writer.write_batch(data)

    def finish(self) -> tuple[bytes | None, tuple[str, ...]]:
        return place_index(self.file_io, self.path, self.writer.finish(), self.threshold)


def index_builder_factory(file_io: FileIO, schema: Any, options: Mapping[str, str] | Any | None = None) -> Any:
    """``factory(data_file_path) -> PlacedIndexBuilder`` for ``schema``'s configured indexes,
    or None when the table configures none (``RollingFileWriter.index_builder_factory``)."""
    opts = options if options is not None else schema.options
    raw = opts.options if isinstance(opts, CoreOptions) else dict(opts)
    specs = configured_indexes(raw)
    if not specs:
        return None
    fields = list(schema.fields)
    by_name = {f.name: f for f in fields}
    for spec in specs:  # refuse bad options before the first data file is written
        check_index_spec(spec, by_name)
    threshold = CoreOptions(raw).file_index_in_manifest_threshold

    def factory(data_file_path: str) -> PlacedIndexBuilder:
        return PlacedIndexBuilder(DataFileIndexWriter(specs, fields), file_io, data_file_path, threshold)

    return factory
