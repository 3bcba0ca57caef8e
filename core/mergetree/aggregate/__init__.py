"""Field aggregators of the ``aggregation`` merge engine (and of partial-update sequence groups).

Why this module exists: Java Paimon folds every record of a key into an accumulator, field
by field (``mergetree/compact/aggregate/Field*Agg.java``). Folding row by row in Python is far
too slow, so each aggregator here computes the SAME result for all keys at once from the
records sorted in merge order: ``values`` (one column, merge order), ``gid`` (the key-group id
of every record, non-decreasing), ``retract`` (True for -U/-D records) and the number of
groups. Simple functions map onto numpy ``reduceat`` / pyarrow hash aggregations; order-
sensitive numeric folds (float sums, products with retraction) run one vectorised step per
record POSITION inside a group (a loop over the longest group, never over rows).

Functions whose values are opaque blobs or nested collections (rbm32/rbm64 bitmaps, collect,
merge_map, nested_update, distinct listagg) fold per key group in Python: their values must be
decoded element by element anyway and Java's semantics (set/map union with retraction) have
no columnar equivalent. That is the only per-record Python on a data path and it only touches
those columns.

Known, documented differences from Java: Java collects ``distinct`` / ``merge_map`` /
keyed ``nested_update`` results through a HashSet/HashMap, so its element order is a hash
order; ours is first-insertion order (same elements). Decimal sums that overflow in an
intermediate step but not at the end are not nulled (Java nulls them and restarts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import InvalidInput, NotYetSupported
from .base import FieldAggregator
from .collection import CollectAgg, MergeMapAgg, NestedUpdateAgg
from .numeric import BoolAndAgg, BoolOrAgg, MaxAgg, MinAgg, ProductAgg, SumAgg
from .sketches import Rbm32Agg, Rbm64Agg, ThetaSketchAgg
from .values import (
    FirstNonNullValueAgg,
    FirstValueAgg,
    LastNonNullValueAgg,
    LastValueAgg,
    ListaggAgg,
    PrimaryKeyAgg,
)

if TYPE_CHECKING:
    from ...data.types import DataField
    from ...schema.options import CoreOptions


_AGGREGATORS: dict[str, type[FieldAggregator]] = {
    "sum": SumAgg,
    "product": ProductAgg,
    "max": MaxAgg,
    "min": MinAgg,
    "last_value": LastValueAgg,
    "last_non_null_value": LastNonNullValueAgg,
    "listagg": ListaggAgg,
    "bool_and": BoolAndAgg,
    "bool_or": BoolOrAgg,
    "first_value": FirstValueAgg,
    "first_non_null_value": FirstNonNullValueAgg,
    "first_not_null_value": FirstNonNullValueAgg,  # Java's legacy name
    "rbm32": Rbm32Agg,
    "rbm64": Rbm64Agg,
    "theta_sketch": ThetaSketchAgg,
    "collect": CollectAgg,
    "merge_map": MergeMapAgg,
    "nested_update": NestedUpdateAgg,
}
_SKETCHES = ("hll_sketch", "nested_partial_update", "merge_map_with_keytime")
AGGREGATE_FUNCTIONS = tuple(_AGGREGATORS)


def create_aggregator(field: DataField, func: str | None, options: CoreOptions,
                      is_primary_key: bool = False) -> FieldAggregator:
    """Java's FieldAggregator factory: PK -> primary-key, None -> last_non_null_value, + ignore-retract."""
    ignore_retract = (options.get(f"fields.{field.name}.ignore-retract") or "false").lower() == "true"
    if is_primary_key:
        return PrimaryKeyAgg(field, options, ignore_retract)
    name = (func or "last_non_null_value").strip()
    cls = _AGGREGATORS.get(name)
    if cls is None:
        if name in _SKETCHES:
            raise NotYetSupported(
                f"aggregate function '{name}' of field '{field.name}' is not supported by paimon-cli yet"
            )
        raise InvalidInput(
            f"Use unsupported aggregation: '{name}' for field '{field.name}' or spell aggregate function "
            f"incorrectly (known: {', '.join(sorted(_AGGREGATORS))})"
        )
    return cls(field, options, ignore_retract)
