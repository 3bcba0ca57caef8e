"""Value-picking aggregators: primary-key, last/first (non-null) value and listagg."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...data.types import CharType, DataField, VarCharType
from .base import FieldAggregator
from .groups import first_index, fold_groups, hash_aggregate, last_index, pa_array, take_or_null, valid_mask

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ...schema.options import CoreOptions


class PrimaryKeyAgg(FieldAggregator):
    """Primary-key columns are never aggregated: the value of the last record (Java FieldPrimaryKeyAgg)."""

    name = "primary-key"
    supports_retract = True

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        import numpy as np

        return take_or_null(values, last_index(np.ones(len(values), dtype=bool), gid, n_groups))


class LastValueAgg(FieldAggregator):
    """Last record's value, null included; a retraction sets null."""

    name = "last_value"
    supports_retract = True

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        import numpy as np

        idx = last_index(np.ones(len(values), dtype=bool), gid, n_groups)
        idx = np.where((idx >= 0) & retract[np.maximum(idx, 0)], -1, idx)
        return take_or_null(values, idx)


class LastNonNullValueAgg(FieldAggregator):
    """Last non-null value; a retraction carrying a non-null value sets null."""

    name = "last_non_null_value"
    supports_retract = True

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        import numpy as np

        idx = last_index(valid_mask(values), gid, n_groups)
        idx = np.where((idx >= 0) & retract[np.maximum(idx, 0)], -1, idx)
        return take_or_null(values, idx)


class FirstValueAgg(FieldAggregator):
    name = "first_value"

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        import numpy as np

        return take_or_null(values, first_index(np.ones(len(values), dtype=bool), gid, n_groups))


class FirstNonNullValueAgg(FieldAggregator):
    name = "first_non_null_value"

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        return take_or_null(values, first_index(valid_mask(values), gid, n_groups))


class ListaggAgg(FieldAggregator):
    """Strings joined by ``fields.<f>.list-agg-delimiter`` (default ","); blank strings are skipped (1.x)."""

    name = "listagg"

    def __init__(self, field: DataField, options: CoreOptions, ignore_retract: bool = False) -> None:
        super().__init__(field, options, ignore_retract)
        self.delimiter = options.get(f"fields.{field.name}.list-agg-delimiter") or ","
        self.distinct = (options.get(f"fields.{field.name}.distinct") or "false").lower() == "true"

    def check_type(self) -> None:
        if not isinstance(self.dtype, (VarCharType, CharType)):
            raise self._bad_type()

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        import pyarrow.compute as pc

        blank = pc.fill_null(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(values)), 0), True)
        keep = pc.invert(blank).to_numpy(zero_copy_only=False)
        vals, g = values.filter(keep), gid[keep]
        if self.distinct:
            delim = self.delimiter

            def agg(acc: Any, x: Any) -> Any:
                if acc is None:
                    return x
                tokens = acc.split(delim)
                seen = set(tokens)
                out = [acc]
                for tok in x.split(delim):
                    if tok.strip() and tok not in seen:
                        seen.add(tok)
                        out.append(tok)
                return delim.join(out)

            return pa_array(fold_groups(vals.to_pylist(), g, retract[keep], n_groups, agg, None), values.type)
        lists = hash_aggregate(vals, g, n_groups, "list")
        return pc.binary_join(lists, self.delimiter).cast(values.type)
