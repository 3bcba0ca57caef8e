"""The ``file-index.*`` table options (Java ``FileIndexOptions`` and
``SchemaValidation.validateFileIndex``): which indexes a table declares, their settings, and
whether the schema can carry them.

``file-index.<type>.columns = a,b`` declares indexes; ``file-index.<type>.<col>.<key>``
configures one (bloom-filter ``items`` / ``fpp``, bitmap ``version`` / ``index-block-size``);
``file-index.in-manifest-threshold`` and ``file-index.read.enabled`` are table-wide.

The schema room owns this so that create and alter refuse bad options before a schema file is
written; ``core.fileindex`` builds, reads and evaluates the indexes these options describe.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..data.types import (
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)
from ..errors import InvalidInput, NotYetSupported
from .options import parse_bool, parse_memory_bytes

if TYPE_CHECKING:
    from ..data.types import DataField

# index type names, as Java's FileIndexerFactory identifiers
BLOOM_FILTER = "bloom-filter"
BITMAP = "bitmap"
BSI = "bsi"
RANGE_BITMAP = "range-bitmap"
SUPPORTED_TYPES = (BLOOM_FILTER, BITMAP, BSI)

IN_MANIFEST_THRESHOLD = "file-index.in-manifest-threshold"
READ_ENABLED = "file-index.read.enabled"
_PREFIX = "file-index."
_NON_INDEX_KEYS = (IN_MANIFEST_THRESHOLD, READ_ENABLED)

BLOOM_DEFAULT_ITEMS = 1_000_000
BLOOM_DEFAULT_FPP = 0.1
BITMAP_VERSION_1 = 1
BITMAP_VERSION_2 = 2
BITMAP_DEFAULT_VERSION = BITMAP_VERSION_2
BITMAP_DEFAULT_BLOCK_SIZE = 16 * 1024

_INTEGERS = (TinyIntType, SmallIntType, IntType, BigIntType)
_TIMES = (DateType, TimeType, TimestampType, LocalZonedTimestampType)
_STRINGS = (CharType, VarCharType)
_BINARIES = (BinaryType, VarBinaryType)
_FLOATS = (FloatType, DoubleType)
# column types each index can index (Java: what each FileIndexer's value visitor accepts)
_INDEXABLE: dict[str, tuple[type[DataType], ...]] = {
    BLOOM_FILTER: (*_STRINGS, *_BINARIES, *_INTEGERS, *_TIMES, *_FLOATS),
    BITMAP: (*_STRINGS, *_INTEGERS, *_TIMES, *_FLOATS, BooleanType),
    BSI: (*_INTEGERS, *_TIMES),
}
BSI_MAX_DECIMAL_PRECISION = 18  # BSI indexes a DECIMAL by its unscaled long


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


# -- per-index settings ----------------------------------------------------------------------


def java_round(x: float) -> int:
    """``Math.round(double)``: floor(x + 0.5)."""
    return int(math.floor(x + 0.5))


def bloom_size(items: int, fpp: float) -> tuple[int, int]:
    """(numBits, numHashFunctions) that ``items`` / ``fpp`` ask for, as Java's BloomFilter64(items, fpp)."""
    nb = int(-items * math.log(fpp) / (math.log(2) * math.log(2)))
    nb = nb + (8 - nb % 8)
    k = max(1, java_round(nb / items * math.log(2)))
    return nb, k


def bloom_filter_options(column: str, opts: Mapping[str, str]) -> tuple[int, float]:
    """``items`` / ``fpp`` of one bloom-filter column, validated (InvalidInput naming the option)."""
    raw_items = opts.get("items")
    raw_fpp = opts.get("fpp")
    try:
        items = int(raw_items) if raw_items is not None else BLOOM_DEFAULT_ITEMS
    except ValueError:
        raise InvalidInput(f"file-index.bloom-filter.{column}.items: not an integer: {raw_items!r}") from None
    try:
        fpp = float(raw_fpp) if raw_fpp is not None else BLOOM_DEFAULT_FPP
    except ValueError:
        raise InvalidInput(f"file-index.bloom-filter.{column}.fpp: not a number: {raw_fpp!r}") from None
    if not 0 < items <= 2**31 - 1:
        raise InvalidInput(f"file-index.bloom-filter.{column}.items must be in 1..2147483647, got {raw_items}")
    if not 0.0 < fpp < 1.0:
        raise InvalidInput(f"file-index.bloom-filter.{column}.fpp must be in (0, 1), got {raw_fpp}")
    nb, _ = bloom_size(items, fpp)
    if nb >= 2**31:
        raise InvalidInput(f"file-index.bloom-filter.{column}: items={items} fpp={fpp} needs {nb} bits "
                           "(Java's limit is 2^31)")
    return items, fpp


def bitmap_options(column: str, opts: Mapping[str, str]) -> tuple[int, int]:
    """``version`` / ``index-block-size`` of one bitmap column, validated."""
    raw = opts.get("version")
    try:
        version = int(raw) if raw is not None else BITMAP_DEFAULT_VERSION
    except ValueError:
        raise InvalidInput(f"file-index.bitmap.{column}.version: not an integer: {raw!r}") from None
    if version not in (BITMAP_VERSION_1, BITMAP_VERSION_2):
        raise InvalidInput(f"file-index.bitmap.{column}.version must be 1 or 2, got {raw}")
    raw_bs = opts.get("index-block-size")
    block = BITMAP_DEFAULT_BLOCK_SIZE
    if raw_bs is not None:
        block = parse_memory_bytes(raw_bs, f"file-index.bitmap.{column}.index-block-size")
        if block <= 0:
            raise InvalidInput(f"file-index.bitmap.{column}.index-block-size must be > 0, got {raw_bs}")
    return version, block


def index_supports(index_type: str, t: DataType) -> bool:
    """Whether an index of ``index_type`` can index a column of type ``t``."""
    if isinstance(t, DecimalType):
        return index_type == BSI and t.precision <= BSI_MAX_DECIMAL_PRECISION
    return isinstance(t, _INDEXABLE.get(index_type, ()))


# -- validation ------------------------------------------------------------------------------


def check_index_spec(spec: IndexSpec, fields_by_name: Mapping[str, DataField]) -> None:
    """Refuse an index whose type, column or settings a writer could not honour."""
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
    if not index_supports(spec.index_type, f.type):
        raise InvalidInput(
            f"file-index.{spec.index_type}.columns: column {spec.column!r} has type {f.type.as_sql()}, "
            f"which a {spec.index_type} index does not support"
        )
    if spec.index_type == BLOOM_FILTER:
        bloom_filter_options(spec.column, spec.opts)
    elif spec.index_type == BITMAP:
        bitmap_options(spec.column, spec.opts)


def validate_file_index_options(fields: Sequence[DataField], options: Mapping[str, str]) -> None:
    """Refuse bad ``file-index.*`` options (InvalidInput, exit 4) before anything is written."""
    specs = configured_indexes(options)
    by_name = {f.name: f for f in fields}
    for spec in specs:
        check_index_spec(spec, by_name)
    raw = options.get(IN_MANIFEST_THRESHOLD)
    if raw is not None:
        parse_memory_bytes(raw, IN_MANIFEST_THRESHOLD)
    raw = options.get(READ_ENABLED)
    if raw is not None:
        parse_bool(raw, READ_ENABLED)
