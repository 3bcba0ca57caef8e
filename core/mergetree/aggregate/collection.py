"""Aggregators over nested collections: collect (ARRAY), merge_map (MAP) and nested_update
(ARRAY<ROW> keyed by ``nested-key``), folded per key group over decoded Python values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...data.types import ArrayType, DataField, MapType, RowType
from ...errors import InvalidInput
from .base import FieldAggregator
from .groups import fold_groups, pa_array

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ...schema.options import CoreOptions


def _hashable(x: Any) -> Any:
    if isinstance(x, dict):
        return tuple((k, _hashable(v)) for k, v in x.items())
    if isinstance(x, list):
        return ("__list__", tuple(_hashable(v) for v in x))
    if isinstance(x, tuple):
        return tuple(_hashable(v) for v in x)
    return x


class CollectAgg(FieldAggregator):
    """ARRAY concatenation (``fields.<f>.distinct`` de-duplicates); retraction removes one match per element."""

    name = "collect"
    supports_retract = True
    commutative = True  # Java: aggReversed == agg

    def __init__(self, field: DataField, options: CoreOptions, ignore_retract: bool = False) -> None:
        super().__init__(field, options, ignore_retract)
        self.distinct = (options.get(f"fields.{field.name}.distinct") or "false").lower() == "true"

    def check_type(self) -> None:
        if not isinstance(self.dtype, ArrayType):
            raise InvalidInput(
                f"Data type for collect column '{self.field.name}' must be 'Array' but was '{self.dtype.as_sql()}'"
            )

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        distinct = self.distinct

        def agg(acc: Any, x: Any) -> Any:
            if acc is None and not distinct:
                return list(x)
            items = list(acc or [])
            if not distinct:
                return items + list(x)
            seen = {_hashable(e) for e in items}
            for e in x:
                h = _hashable(e)
                if h not in seen:
                    seen.add(h)
                    items.append(e)
            return items

        def ret(acc: Any, x: Any) -> Any:
            if acc is None or x is None:
                return acc
            pending = [_hashable(e) for e in x]
            out = []
            for e in acc:
                h = _hashable(e)
                if h in pending:
                    pending.remove(h)
                else:
                    out.append(e)
            return out

        return pa_array(fold_groups(values.to_pylist(), gid, retract, n_groups, agg, ret), values.type)


class MergeMapAgg(FieldAggregator):
    """MAP union, later keys win; retraction removes the retracted keys."""

    name = "merge_map"
    supports_retract = True

    def check_type(self) -> None:
        if not isinstance(self.dtype, MapType):
            raise InvalidInput(
                f"Data type of merge map column '{self.field.name}' must be 'MAP' but was '{self.dtype.as_sql()}'"
            )

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        def agg(acc: Any, x: Any) -> Any:
            if acc is None:
                return list(x)
            d = {_hashable(k): (k, v) for k, v in acc}
            for k, v in x:
                d[_hashable(k)] = (k, v)
            return list(d.values())

        def ret(acc: Any, x: Any) -> Any:
            if acc is None:
                return None
            gone = {_hashable(k) for k, _ in (x or [])}
            return [(k, v) for k, v in acc if _hashable(k) not in gone]

        return pa_array(fold_groups(values.to_pylist(), gid, retract, n_groups, agg, ret), values.type)


class NestedUpdateAgg(FieldAggregator):
    """ARRAY<ROW> as a nested table keyed by ``fields.<f>.nested-key`` (no key: append rows)."""

    name = "nested_update"
    supports_retract = True

    def __init__(self, field: DataField, options: CoreOptions, ignore_retract: bool = False) -> None:
        super().__init__(field, options, ignore_retract)
        raw = options.get(f"fields.{field.name}.nested-key") or ""
        self.nested_key = [k.strip() for k in raw.split(",") if k.strip()]
        assert isinstance(self.dtype, ArrayType) and isinstance(self.dtype.element, RowType)
        names = [f.name for f in self.dtype.element.fields]
        for k in self.nested_key:
            if k not in names:
                raise InvalidInput(f"nested-key '{k}' of field '{field.name}' is not a field of {names}")

    def check_type(self) -> None:
        if not (isinstance(self.dtype, ArrayType) and isinstance(self.dtype.element, RowType)):
            raise InvalidInput(
                f"Data type of nested table column '{self.field.name}' must be 'Array<Row>' "
                f"but was '{self.dtype.as_sql()}'"
            )

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        keys = self.nested_key

        def key_of(row: Any) -> Any:
            return tuple(_hashable(row.get(k)) for k in keys)

        def agg(acc: Any, x: Any) -> Any:
            if acc is None:
                rows = list(x)
            else:
                rows = list(acc) + list(x)
            if keys:
                d: dict[Any, Any] = {}
                for r in rows:
                    k = key_of(r)
                    d[k] = r
                rows = list(d.values())
            return rows

        def ret(acc: Any, x: Any) -> Any:
            if acc is None or x is None:
                return acc
            if keys:
                gone = {key_of(r) for r in x}
                return [r for r in acc if key_of(r) not in gone]
            gone_rows = {_hashable(r) for r in x}
            return [r for r in acc if _hashable(r) not in gone_rows]

        return pa_array(fold_groups(values.to_pylist(), gid, retract, n_groups, agg, ret), values.type)
