"""Aggregators over serialized sketches: roaring bitmaps (rbm32, rbm64) and theta sketches,
byte for byte like Java; each value is an opaque blob folded per key group."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...data.roaring64 import Roaring64Layout
from ...data.types import BinaryType, VarBinaryType
from ...errors import InvalidInput
from .base import FieldAggregator
from .groups import pa_array

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa


class _BitmapAgg(FieldAggregator):
    commutative = True
    bits = 32

    def check_type(self) -> None:
        if not isinstance(self.dtype, (VarBinaryType, BinaryType)):
            raise self._bad_type()

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        # Serialized roaring bitmaps are opaque: each must be decoded, so the union is a per-group fold.
        import pyroaring

        cls = pyroaring.BitMap if self.bits == 32 else pyroaring.BitMap64
        acc: list[Any] = [None] * n_groups
        for g, blob in zip(gid.tolist(), values.to_pylist(), strict=True):
            if blob is None:
                continue
            bm = cls.deserialize(blob)
            acc[g] = bm if acc[g] is None else acc[g] | bm
        return pa_array([None if b is None else b.serialize() for b in acc], values.type)


class Rbm32Agg(_BitmapAgg):
    name = "rbm32"
    bits = 32


class Rbm64Agg(_BitmapAgg):
    """Union of Java ``Roaring64Bitmap`` values (core/data/roaring64.py), byte for byte like Java.

    Java's bytes depend on the merge history, so this replays FieldRoaringBitmap64Agg.agg per
    key group in merge order: a null leaves the accumulator alone, the first value is kept
    verbatim (Java returns the input object), every further value is ``or``-ed into the
    accumulator's structure. Not ``commutative``: aggReversed would produce other bytes.
    """

    name = "rbm64"
    bits = 64
    commutative = False

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        acc: list[Any] = [None] * n_groups
        merged: list[Any] = [None] * n_groups  # parsed accumulator once a group has 2+ values
        for g, blob in zip(gid.tolist(), values.to_pylist(), strict=True):
            if blob is None:
                continue
            if acc[g] is None:
                acc[g] = blob
                continue
            if merged[g] is None:
                merged[g] = Roaring64Layout.parse(acc[g])
            merged[g].or_(Roaring64Layout.parse(blob))
            merged[g].run_optimize()  # RoaringBitmap64.serialize() runs it before every write
        out = [m.to_bytes() if m is not None else a for a, m in zip(acc, merged, strict=True)]
        return pa_array(out, values.type)


# Java 4.2 compact-sketch preamble bytes that the C++ serializer writes differently.
_THETA_EMPTY_JAVA = bytes([1, 3, 3, 0, 0, 0x1E, 0, 0])  # EmptyCompactSketch: seed hash left 0
_THETA_FLAG_EMPTY = 0x04
_THETA_FLAG_SINGLE_ITEM = 0x20
_THETA_P_ONE = b"\x00\x00\x80\x3f"  # float32 LE 1.0f, Java's PreambleUtil.insertP(mem, 1.0f)


def _java_theta_bytes(data: bytes) -> bytes:
    """C++ ``compact_theta_sketch.serialize()`` rewritten to Java datasketches 4.2's ``toByteArray()``.

    Why: Paimon 0.9 stores ``Union.getResult().toByteArray()`` (ordered compact, serial version 3).
    The C++ library computes the same hashes and theta but fills three preamble fields differently:
    Java's empty sketch carries seed hash 0, its single-item sketch sets the SINGLE_ITEM flag, and
    it writes p=1.0f where C++ writes 0 (bytes 12..15 whenever there are 2+ preamble longs).
    """
    pre_longs = data[0] & 0x3F
    if data[5] & _THETA_FLAG_EMPTY:
        return _THETA_EMPTY_JAVA
    out = bytearray(data)
    if pre_longs == 1:
        out[5] |= _THETA_FLAG_SINGLE_ITEM
    else:
        out[12:16] = _THETA_P_ONE
    return bytes(out)


def _theta_sketch(blob: bytes, field: str) -> Any:
    import datasketches

    try:
        return datasketches.compact_theta_sketch.deserialize(blob)
    except Exception as exc:  # the C++ binding raises RuntimeError/ValueError on a bad layout
        raise InvalidInput(
            f"theta_sketch value of field '{field}' is not a serialized compact theta sketch: {exc}"
        ) from None


def theta_union(acc: bytes, x: bytes, field: str = "?") -> bytes:
    """Java's ``ThetaSketch.union(acc, x)``: fresh default union (lg_k 12, default seed) of both."""
    import datasketches

    union = datasketches.theta_union()
    union.update(_theta_sketch(acc, field))
    union.update(_theta_sketch(x, field))
    return _java_theta_bytes(union.get_result(True).serialize())


class ThetaSketchAgg(FieldAggregator):
    """Union of Apache DataSketches theta sketches, byte for byte like Java's FieldThetaSketchAgg.

    Java folds pairwise: a null is skipped, the first value is kept verbatim (Java returns the
    input array), and each further value goes through a fresh ``Union`` of (accumulator, value)
    whose ordered compact result becomes the accumulator. The C++ ``datasketches`` binding yields
    the same hashes and theta; ``_java_theta_bytes`` fixes the preamble fields it writes otherwise.
    Not ``commutative``: re-associating a fold in estimation mode is not guaranteed to keep bytes.
    """

    name = "theta_sketch"
    commutative = False

    def check_type(self) -> None:
        if not isinstance(self.dtype, VarBinaryType):  # Java's factory casts to VarBinaryType
            raise self._bad_type()

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        acc: list[Any] = [None] * n_groups
        for g, blob in zip(gid.tolist(), values.to_pylist(), strict=True):
            if blob is None:
                continue
            acc[g] = blob if acc[g] is None else theta_union(acc[g], blob, self.field.name)
        return pa_array(acc, values.type)
