"""Build a data file's file indexes from the table's ``file-index.*`` options (Java
``DataFileIndexWriter``), and decide where they go.

Options: ``file-index.<type>.columns = a,b`` declares indexes; ``file-index.<type>.<col>.<key>``
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

from ..errors import InvalidInput, NotYetSupported
from .format import BITMAP, BLOOM_FILTER, BSI, RANGE_BITMAP, write_container

if TYPE_CHECKING:
    import pyarrow as pa

    from ..data.types import DataField
    from ..io.fileio import FileIO

SUPPORTED_TYPES = (BLOOM_FILTER, BITMAP, BSI)
_PREFIX = "file-index."
_NON_INDEX_KEYS = ("file-index.in-manifest-threshold", "file-index.read.enabled")


@dataclass(frozen=True)
class IndexSpec:
    """One configured index: column name (as in the schema it is resolved against), type, options."""

    column: str
    index_type: str
    options: tuple[tuple[str, str], ...] = ()

    @property
    def opts(self) -> dict[str, str]:
        return dict(self.options)


def configured_indexes(options: Mapping[str, str]) -> list[IndexSpec]:
    """Every ``file-index.<type>.columns`` entry with its per-column options (no validation of
    columns against a schema; see :func:`validate_file_index_options`)."""
    declared: dict[tuple[str, str], dict[str, str]] = {}
    for key, value in options.items():
        if key.startswith(_PREFIX) and key.endswith(".columns"):
            index_type = key[len(_PREFIX):-len(".columns")]
            for name in value.split(","):
                if not name.strip():
                    raise InvalidInput(f"option {key}={value!r}: empty column name")
                declared.setdefault((name.strip(), index_type), {})
    for key, value in options.items():
        if not key.startswith(_PREFIX) or key.endswith(".columns") or key in _NON_INDEX_KEYS:
            continue
        parts = key[len(_PREFIX):].split(".")
        if len(parts) != 3:
            continue  # Java ignores keys of other shapes
        index_type, column, opt = parts
        if (column, index_type) not in declared:
            raise InvalidInput(
                f"option {key}: column {column!r} is not declared in 'file-index.{index_type}.columns'"
            )
        declared[(column, index_type)][opt] = value
    return [IndexSpec(c, t, tuple(sorted(o.items()))) for (c, t), o in declared.items()]


def _check_spec(spec: IndexSpec, fields_by_name: Mapping[str, DataField]) -> None:
    if spec.index_type not in SUPPORTED_TYPES:
        if spec.index_type == RANGE_BITMAP:
            raise NotYetSupported(f"file-index.{RANGE_BITMAP}.columns: range-bitmap indexes are not supported yet")
        raise InvalidInput(
            f"file-index.{spec.index_type}.columns: unknown index type {spec.index_type!r}; "
            f"use {', '.join(SUPPORTED_TYPES)}"
        )
    if "[" in spec.column:
        raise NotYetSupported(f"file-index.{spec.index_type}.columns: map key index {spec.column!r} is not supported yet")
    f = fields_by_name.get(spec.column)
    if f is None:
        raise InvalidInput(
            f"file-index.{spec.index_type}.columns: column {spec.column!r} does not exist; "
            f"columns: {', '.join(fields_by_name)}"
        )
    if spec.index_type == BLOOM_FILTER:
        from . import bloom

        ok = bloom.supports(f.type)
        if ok:
            bloom.parse_options(spec.column, spec.opts)
    elif spec.index_type == BITMAP:
        from . import bitmap

        ok = bitmap.supports(f.type)
        if ok:
            bitmap.parse_options(spec.column, spec.opts)
    else:
        from . import bsi

        ok = bsi.supports(f.type)
    if not ok:
        raise InvalidInput(
            f"file-index.{spec.index_type}.columns: column {spec.column!r} has type {f.type.as_sql()}, "
            f"which a {spec.index_type} index does not support"
        )


def validate_file_index_options(fields: Sequence[DataField], options: Mapping[str, str]) -> None:
    """Refuse bad ``file-index.*`` options (InvalidInput, exit 4) before anything is written."""
    from ..schema.options import parse_bool, parse_memory_bytes

    specs = configured_indexes(options)
    by_name = {f.name: f for f in fields}
    for spec in specs:
        _check_spec(spec, by_name)
    raw = options.get("file-index.in-manifest-threshold")
    if raw is not None:
        parse_memory_bytes(raw, "file-index.in-manifest-threshold")
    raw = options.get("file-index.read.enabled")
    if raw is not None:
        parse_bool(raw, "file-index.read.enabled")


def _builder(spec: IndexSpec, f: DataField) -> Any:
    if spec.index_type == BLOOM_FILTER:
        from .bloom import BloomFilterBuilder, parse_options

        return BloomFilterBuilder(*parse_options(spec.column, spec.opts))
    if spec.index_type == BITMAP:
        from .bitmap import BitmapBuilder
        from .bitmap import parse_options as bitmap_options

        version, block = bitmap_options(spec.column, spec.opts)
        return BitmapBuilder(f.type, version, block)
    from .bsi import BsiBuilder

    return BsiBuilder()


@dataclass
class _Column:
    field: DataField
    builders: list[Any] = field(default_factory=list)


class DataFileIndexWriter:
    """Indexes of one data file, fed batch by batch (columns looked up by field name)."""

    def __init__(self, specs: Sequence[IndexSpec], fields: Sequence[DataField]) -> None:
        by_name = {f.name: f for f in fields}
        self.columns: dict[str, _Column] = {}
        for spec in specs:
            _check_spec(spec, by_name)
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
        from .values import to_column

        for name, col in self.columns.items():
            c = to_column(data.column(name), col.field.type)
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
    from ..io.fileio import join

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
    from ..schema.options import CoreOptions

    opts = options if options is not None else schema.options
    raw = opts.options if isinstance(opts, CoreOptions) else dict(opts)
    specs = configured_indexes(raw)
    if not specs:
        return None
    fields = list(schema.fields)
    by_name = {f.name: f for f in fields}
    for spec in specs:  # refuse bad options before the first data file is written
        _check_spec(spec, by_name)
    threshold = CoreOptions(raw).file_index_in_manifest_threshold

    def factory(data_file_path: str) -> PlacedIndexBuilder:
        return PlacedIndexBuilder(DataFileIndexWriter(specs, fields), file_io, data_file_path, threshold)

    return factory


def rename_file_index_options(options: Mapping[str, str], renames: Mapping[str, str]) -> dict[str, str]:
    """``file-index.<type>.columns`` entries and ``file-index.<type>.<col>.<key>`` keys after
    column renames (old name -> final name), so an index stays on the renamed column."""
    out: dict[str, str] = {}
    for key, value in options.items():
        if key.startswith(_PREFIX) and key.endswith(".columns"):
            names = [n.strip() for n in value.split(",")]
            out[key] = ",".join(renames.get(n, n) for n in names)
            continue
        if key.startswith(_PREFIX) and key not in _NON_INDEX_KEYS:
            parts = key[len(_PREFIX):].split(".")
            if len(parts) == 3 and parts[1] in renames:
                out[f"{_PREFIX}{parts[0]}.{renames[parts[1]]}.{parts[2]}"] = value
                continue
        out[key] = value
    return out
