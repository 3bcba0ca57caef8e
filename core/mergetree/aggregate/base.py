"""The field aggregator contract (Java ``FieldAggregator``): one field's aggregate function,
folding every key group at once, with Java's retraction rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...data.types import (
    BigIntType,
    DataField,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    SmallIntType,
    TinyIntType,
)
from ...errors import InvalidInput

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ...schema.options import CoreOptions

INTEGER_TYPES = (TinyIntType, SmallIntType, IntType, BigIntType)
NUMERIC_TYPES = (*INTEGER_TYPES, FloatType, DoubleType, DecimalType)


class FieldAggregator:
    """One field's aggregate function; ``aggregate`` computes the fold of every group at once."""

    name = ""
    supports_retract = False
    # agg(acc, x) == aggReversed(acc, x) and order-free: usable inside partial-update sequence groups.
    commutative = False

    def __init__(self, field: DataField, options: CoreOptions, ignore_retract: bool = False) -> None:
        self.field = field
        self.dtype = field.type
        self.options = options
        self.ignore_retract = ignore_retract
        self.check_type()

    def check_type(self) -> None:
        """Refuse column types Java refuses for this function (at table-read time in Java)."""

    def _bad_type(self) -> InvalidInput:
        return InvalidInput(
            f"aggregate function '{self.name}' does not support column '{self.field.name}' "
            f"of type {self.dtype.as_sql()}"
        )

    def aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray,
                  n_groups: int) -> pa.Array:
        """Merged value per group (length n_groups) of records already in merge order."""
        import numpy as np

        if retract.any():
            if self.ignore_retract:
                keep = ~retract
                values = values.filter(keep)
                gid = gid[keep]
                retract = np.zeros(int(keep.sum()), dtype=bool)
            elif not self.supports_retract:
                raise InvalidInput(
                    f"aggregate function '{self.name}' of field '{self.field.name}' does not support "
                    f"retraction (-U/-D records); set 'fields.{self.field.name}.ignore-retract'='true' "
                    "to ignore them"
                )
        return self._aggregate(values, gid, retract, n_groups)

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray,
                   n_groups: int) -> pa.Array:
        raise NotImplementedError
