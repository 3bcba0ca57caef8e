"""Float input lands in DECIMAL columns exactly as Java Paimon 0.9 casts DOUBLE to DECIMAL.

Why: Paimon's cast (``CastExecutors`` DOUBLE -> DECIMAL(p, s)) takes a double's shortest
decimal text (``BigDecimal.valueOf``), rounds it half-up to the scale and gives null when the
precision overflows. ``write`` of Parquet/Arrow doubles must store the same decimals (and
refuse where Java's cast has no value), or the same number loaded by us and by a Java job
would differ by a cent. Java side: tests/interop/java/DecimalCastHelper.java.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_cli.core.data.types import DecimalType
from paimon_cli.core.format.input_convert import BadValue, convert_column

from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

SHAPES = [(12, 2), (5, 2), (18, 0), (10, 8), (38, 10), (38, 38), (20, 6)]


def _values(p: int, s: int, rng: np.random.Generator) -> np.ndarray:
    """Values around what a column of DECIMAL(p, s) holds: exact cents, halves at the scale,
    many-digit doubles, values at the overflow edge, tiny and huge ones."""
    top = 10.0 ** (p - s)
    n = 4000
    digits = rng.integers(-(10 ** min(15, p)), 10 ** min(15, p), n) / 10.0 ** min(15, s + 1)
    half = (rng.integers(-10**6, 10**6, n) * 10 + 5) / 10.0 ** (s + 1)
    wide = rng.uniform(-1, 1, n) * 10.0 ** rng.integers(-s - 3, p - s + 1, n)
    edge = np.array([top - 10.0 ** -s, top - 0.5 * 10.0 ** -s, top, -top, top * (1 - 1e-16), 0.0, -0.0,
                     5e-324, -5e-324, 1e-300, 1e300, 2e23, 0.1 + 0.2, 1.005, 2.675, 994.29])
    return np.concatenate([digits, half, wide, edge])


def _java(helper: Any, values: np.ndarray, p: int, s: int) -> list[tuple[str, Decimal | None]]:
    bits = values.astype(np.float64).view(np.int64)
    out = []
    for line in str(helper.castDoubles(",".join(map(str, bits.tolist())), p, s)).splitlines():
        text, _, dec = line.partition(" ")
        out.append((text, None if dec == "null" else Decimal(dec)))
    return out


def _ours(v: float, p: int, s: int) -> Decimal | None:
    try:
        return convert_column(pa.array([v]), DecimalType(p, s)).to_pylist()[0]
    except BadValue:
        return None


def _java_text_differs(v: float, java_text: str) -> bool:
    """Java before 19 prints some doubles with other digits than the shortest, closest text
    that reads back the same (JDK-4511638: 2.0000000000000002E23 for 2e23, 2.0288864243690495E25
    for 2.0288864243690496e25); JDK 19+ and we use that text, so only there may the casts differ."""
    return Decimal(java_text) != Decimal(repr(v)) and float(Decimal(java_text)) == v


def _half_up(v: float, p: int, s: int) -> Decimal | None:
    """The cast of JDK 19+ (shortest text, HALF_UP), to check the values where Java 17 differs."""
    with localcontext(prec=400):
        d = Decimal(repr(v)).quantize(Decimal(1).scaleb(-s), rounding=ROUND_HALF_UP)
    return d if len(d.as_tuple().digits) <= p else None


@pytest.mark.parametrize("p,s", SHAPES, ids=[f"{p}_{s}" for p, s in SHAPES])
def test_double_to_decimal_matches_java_cast(java_paimon: JavaPaimon, p: int, s: int) -> None:
    helper = java_paimon._gateway.jvm.DecimalCastHelper
    values = _values(p, s, np.random.default_rng(p * 100 + s))
    java = _java(helper, values, p, s)
    fits = np.array([d is not None for _, d in java])
    assert fits.any() and not fits.all()  # both outcomes are exercised
    # every value Java's cast keeps: one vectorised conversion, compared value for value
    ours = convert_column(pa.array(values[fits]), DecimalType(p, s)).to_pylist()
    kept = [(v, t, d) for v, (t, d) in zip(values.tolist(), java, strict=True) if d is not None]
    differ = [(v, t, d, o) for (v, t, d), o in zip(kept, ours, strict=True) if o != d]
    assert [x for x in differ if not _java_text_differs(x[0], x[1])] == []
    assert all(o == _half_up(v, p, s) for v, _, _, o in differ)
    # every value Java's cast turns into null (overflow) is refused, one by one
    for v, (t, d) in zip(values.tolist(), java, strict=True):
        if d is None:
            assert _ours(v, p, s) is None or _java_text_differs(v, t), (v, t)

