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
    bloom_size,
    check_index_spec,
    configured_indexes,
)
from ..schema.options import CoreOptions, memory_text
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
        self.file_bytes: int | None = None  # the `.index` file's size once written

    def write_batch(self, data: pa.Table | pa.RecordBatch) -> None:
        self.writer.write_batch(data)

    def finish(self) -> tuple[bytes | None, tuple[str, ...]]:
        container = self.writer.finish()
        embedded, extra = place_index(self.file_io, self.path, container, self.threshold)
        self.file_bytes = len(container) if extra and container else None
        return embedded, extra


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


# An index file is worth its bytes while reading it costs less than reading the data file it
# may let a read skip; past that (index bytes > data bytes) pruning saves no I/O and the table
# stores more index than data. Java's default bloom filter (1,000,000 items at fpp 0.1: 585 KiB
# whatever the file holds) crosses it for every data file under ~600 KB.
INDEX_OVER_DATA_RATIO = 1.0


def index_size_note(options: Mapping[str, str], sizes: Sequence[tuple[int, int, int]]) -> str | None:
    """One line when `.index` files written by a job outweigh their data files, naming the
    options that shrink them; ``sizes``: (data file bytes, `.index` file bytes, rows) of each
    data file written with an `.index` file. None when every index is smaller."""
    big = [s for s in sizes if s[1] > s[0] * INDEX_OVER_DATA_RATIO]
    if not big:
        return None
    data, index, _ = max(big, key=lambda s: s[1] / max(s[0], 1))
    rows = max(s[2] for s in sizes)
    head = (f"file index: {len(big)} of {len(sizes)} .index file(s) written are larger than their data file "
            f"(up to {memory_text(index)} beside {memory_text(data)}); a read that consults such an index moves "
            "more bytes than the file it may skip")
    advice = []
    for spec in configured_indexes(options):
        if spec.index_type != BLOOM_FILTER:
            continue
        items, fpp = bloom_filter_options(spec.column, spec.opts)
        if items > 2 * rows:
            nb, _ = bloom_size(items, fpp)
            advice.append(
                f"the bloom filter on {spec.column!r} is sized for {items:,} items at fpp {fpp:g} "
                f"({memory_text(nb // 8)} per file, however few rows it holds; these files hold up to {rows:,} "
                f"rows): set file-index.bloom-filter.{spec.column}.items to about the rows of a full data file "
                f"or raise file-index.bloom-filter.{spec.column}.fpp")
    if not advice:
        advice.append("index fewer columns (file-index.<type>.columns) or write larger files (target-file-size)")
    return head + "; " + "; ".join(advice)
