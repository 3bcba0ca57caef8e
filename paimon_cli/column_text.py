"""Columns of values turned into output text a column at a time (numpy and Arrow kernels), with
the same bytes the per-value conventions of :mod:`.output` give: Python's ``repr`` of floats,
lowercase hex of binary, JSON string literals, and csv fields quoted as Python's ``csv``
module quotes them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def float_reprs(col: pa.Array) -> pa.Array:
    """Python's ``repr`` of each value of a float column without NULL, NaN or infinity, as a
    string array.

    Arrow's float-to-string cast gives the same shortest round-trip digits as ``repr`` (both
    the shortest digits that read back to the double, the nearest of them; checked over
    millions of random, whole, subnormal and extreme doubles in the tests) but lays them out
    otherwise: positional for 1e-6 <= |x| < 1e10 without ``.0`` (``489``, ``0.00001``), and
    ``1e-7`` / ``1.5e+15`` beyond, where ``repr`` is positional for 1e-4 <= |x| < 1e16 with
    ``.0`` on whole numbers and has two exponent digits at least. Arrow's text is rewritten
    by regex kernels into ``repr``'s layout; whole numbers of 1e10..1e16 are their exact
    int64 text (a double below 1e16 that is whole is its own shortest decimal)."""
    x = col.cast(pa.float64())
    if isinstance(x, pa.ChunkedArray):
        x = x.combine_chunks()
    text = x.cast(pa.string())
    v = x.to_numpy(zero_copy_only=False)
    a = np.abs(v)
    whole = (np.floor(v) == v) & (a < 1e16)
    if whole.any():
        ints = pa.array(v[whole].astype(np.int64)).cast(pa.string())
        text = pc.replace_with_mask(text, pa.array(whole), pc.binary_join_element_wise(ints, ".0", ""))
        negative_zero = (v == 0) & np.signbit(v)
        if negative_zero.any():
            text = pc.replace_with_mask(text, pa.array(negative_zero), pa.array(["-0.0"] * int(negative_zero.sum())))
    small = (a < 1e-4) & (v != 0)  # repr: d.ddde-XX (Arrow: positional down to 1e-6, one exponent digit)
    if small.any():
        t = text.filter(pa.array(small))
        t = pc.replace_substring_regex(t, r"e-(\d)$", r"e-0\1")
        t = pc.replace_substring_regex(t, r"^(-?)0\.0000([1-9])(\d*)$", r"\1\2.\3e-05")
        t = pc.replace_substring_regex(t, r"^(-?)0\.00000([1-9])(\d*)$", r"\1\2.\3e-06")
        t = pc.replace_substring_regex(t, r"^(-?\d)\.e", r"\1e")
        text = pc.replace_with_mask(text, pa.array(small), t)
    big = ~whole & (a >= 1e10) & (a < 1e16)  # repr: positional (Arrow: d.ddde+1X)
    if big.any():
        t = text.filter(pa.array(big))
        for e in range(10, 16):
            t = pc.replace_substring_regex(t, rf"^(-?\d)\.(\d{{{e}}})(\d+)e\+{e}$", r"\1\2.\3")
        text = pc.replace_with_mask(text, pa.array(big), t)
    return text


def float_texts(col: pa.Array, nan: str, inf: str, ninf: str, null: str) -> pa.Array:
    """:func:`float_reprs` of a float column that may hold NULL, NaN and infinities, those
    written as the given texts."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    x = col.cast(pa.float64())
    finite = pc.fill_null(pc.is_finite(x), False)
    texts = float_reprs(pc.if_else(finite, x, 0.0))
    if not pc.all(finite).as_py():
        texts = pc.if_else(pc.is_nan(x), nan, pc.if_else(pc.is_inf(x), pc.if_else(pc.greater(x, 0), inf, ninf), texts))
    return pc.fill_null(texts, null) if x.null_count else texts


def hex_texts(col: pa.Array) -> pa.Array:
    """Lowercase hex of each value of a binary column (NULL stays NULL): each byte becomes
    its two digits through a table lookup, the offsets doubled."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    col = col.cast(pa.large_binary())
    n = len(col)
    offsets = np.frombuffer(col.buffers()[1], dtype=np.int64)[col.offset: col.offset + n + 1]
    data = col.buffers()[2]
    raw = (np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8))[offsets[0]: offsets[-1]]
    digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    out = np.empty(2 * len(raw), dtype=np.uint8)
    out[0::2] = digits[raw >> 4]
    out[1::2] = digits[raw & 15]
    new_offsets = (offsets - offsets[0]) * 2
    validity = col.buffers()[0] if col.null_count else None
    if validity is not None and col.offset:
        validity = pa.array(pc.is_valid(col)).buffers()[1]
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(new_offsets), pa.py_buffer(out), validity,
                                            col.null_count).cast(pa.string())


_QUOTED: str | None = None


def _csv_quoted_chars() -> str:
    """A regex class of the characters that make Python's ``csv`` writer (the dialect
    ``-o csv`` uses: excel, ``lineterminator="\\n"``) quote a field, asked of the running
    Python once (3.11 quotes ``\\n`` but not a lone ``\\r``; other versions differ)."""
    global _QUOTED
    if _QUOTED is None:
        import csv
        import io
        import re

        chars = []
        for code in list(range(1, 128)) + [0x85, 0x2028, 0x2029]:
            out = io.StringIO()
            csv.writer(out, lineterminator="\n").writerow(["a" + chr(code) + "b", "c"])
            if out.getvalue().startswith('"'):
                chars.append(re.escape(chr(code)))
        _QUOTED = "[" + "".join(chars) + "]"
    return _QUOTED


def csv_fields(texts: pa.Array, alone: bool) -> pa.Array:
    """Text fields (no NULL) as Python's ``csv`` writer writes them (QUOTE_MINIMAL): quoted,
    inner quotes doubled, where a field holds a character that needs it; ``alone``: the row
    has only this field, so an empty one is written ``""`` (an empty line would be no row)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    texts = texts.cast(pa.string())
    needs = pc.match_substring_regex(texts, _csv_quoted_chars())
    if alone:
        needs = pc.or_(needs, pc.equal(pc.utf8_length(texts), 0))
    if not pc.any(needs).as_py():
        return texts
    quoted = pc.binary_join_element_wise('"', pc.replace_substring(texts, '"', '""'), '"', "")
    return pc.if_else(needs, quoted, texts)


def csv_lines(columns: list[pa.Array]) -> Any:
    """Rows of csv fields (:func:`csv_fields`), one string array per column, as a buffer of
    UTF-8 text: fields joined by ``,``, each row ended by ``\\n``."""
    rows = pc.binary_join_element_wise(*columns, ",") if len(columns) > 1 else columns[0]
    rows = pc.binary_join_element_wise(rows, pa.scalar("\n"), "")
    if isinstance(rows, pa.ChunkedArray):
        rows = rows.combine_chunks()
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int32)[rows.offset: rows.offset + len(rows) + 1]
    return rows.buffers()[2][int(offsets[0]): int(offsets[-1])]


_JSON_ESCAPES = [("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("\b", "\\b"), ("\f", "\\f")]


def json_strings(texts: pa.Array) -> pa.Array:
    """Each string as a JSON string literal, as ``json`` writes it with ``ensure_ascii=False``
    (``json.encoder.encode_basestring``): quoted, backslash and quote escaped, the control
    characters as ``\\n``-style or ``\\u00XX`` escapes, everything else as it is. NULL stays NULL."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    texts = texts.cast(pa.string())
    if pc.any(pc.match_substring_regex(texts, r'[\x00-\x1f"\\]')).as_py():
        for raw, escaped in _JSON_ESCAPES:
            texts = pc.replace_substring(texts, raw, escaped)
        if pc.any(pc.match_substring_regex(texts, r"[\x00-\x1f]")).as_py():
            for code in range(0x20):
                if chr(code) not in "\n\r\t\b\f":
                    texts = pc.replace_substring(texts, chr(code), f"\\u{code:04x}")
    return pc.binary_join_element_wise('"', texts, '"', "")


def json_texts(col: pa.Array, indent: str | None = None) -> pa.Array:
    """Each value's compact JSON text as the per-value path writes it,
    ``json.dumps(to_json_value(v), ensure_ascii=False, separators=(",", ":"))`` (NULL stays
    NULL), built a column at a time for nested values too: a list's child values are
    rendered once and joined per row along the list's offsets (``binary_join``), a row's
    fields are joined element-wise behind their quoted names, a map is the list of its
    ``[key,value]`` pairs (pyarrow hands a map to Python as a list of pairs).

    ``indent``: the layout of ``json.dumps(record, indent=2)`` (``-o json``) for a value whose
    key line is indented by ``indent``: a non-empty list or row opens a line per item, two
    spaces deeper a level, and closes on a line of its own; empty ones stay ``[]`` / ``{}``."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    texts = json_value_texts(col, indent)
    return pc.if_else(pc.is_valid(col), texts, pa.scalar(None, pa.string())) if col.null_count else texts


_LIMITS = {"s": 1, "ms": 1_000, "us": 1_000_000}  # units per second; ns: per value (see _per_value)
_MIN_MS = -30_610_224_000_000  # 1000-01-01T00:00:00: four-digit years both in Arrow's text and strftime's
_MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999
_MIN_ISO_MS = -62_135_596_800_000  # 0001-01-01T00:00:00


def json_value_texts(col: pa.Array, indent: str | None = None) -> pa.Array:
    """:func:`json_texts` with NULL written ``null`` (as inside a list or row)."""
    t = col.type
    null = pa.scalar("null")
    if pa.types.is_dictionary(t):
        return json_value_texts(col.dictionary_decode(), indent)
    if pa.types.is_null(t):
        return pa.array(np.full(len(col), "null", dtype=object), pa.string())
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return pc.fill_null(col.cast(pa.string()), null)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pc.fill_null(json_strings(col), null)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return pc.fill_null(pc.binary_join_element_wise('"', hex_texts(col), '"', ""), null)
    if pa.types.is_floating(t):
        return float_texts(col, '"NaN"', '"Infinity"', '"-Infinity"', "null")
    if pa.types.is_decimal(t) and t.scale >= 0:
        # Arrow's decimal text is str(Decimal) (exponent form when the adjusted exponent is
        # below -6, 1E-10, 0E-10), checked against it in the tests; a negative scale is
        # positional in Arrow (100) and 1E+2 in Python: those keep the per-value path
        return _quoted(col.cast(pa.string()))
    if pa.types.is_date(t) and _whole_days(col) and _in_range(col.cast(pa.date32()).cast(pa.int32()),
                                                                -719_162, 2_932_896):
        return _quoted(col.cast(pa.date32()).cast(pa.string()))  # isoformat: four-digit years, as Arrow
    if pa.types.is_timestamp(t) and t.unit in _LIMITS:
        ms = _floor_ms(col, _LIMITS[t.unit])
        # a wall clock is strftime's text, which writes a year below 1000 without zeros; an
        # instant is isoformat's, four digits always (as Arrow's)
        if _in_range(ms, _MIN_MS if t.tz is None else _MIN_ISO_MS, _MAX_MS):
            text = ms.cast(pa.timestamp("ms")).cast(pa.string())
            if t.tz is not None:  # an instant: isoformat in UTC
                text = pc.binary_join_element_wise(pc.replace_substring(text, " ", "T"), "+00:00", "")
            return _quoted(text)
    if pa.types.is_time(t) and t.unit in _LIMITS:
        ms = _floor_ms(col, _LIMITS[t.unit])
        if _in_range(ms, 0, 86_399_999):  # a time past a day: Python wraps it, Arrow's text does not
            return _quoted(ms.cast(pa.int32()).cast(pa.time32("ms")).cast(pa.string()))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_map(t):
        return _list_texts(col, indent)
    if pa.types.is_struct(t) and len({t.field(i).name for i in range(t.num_fields)}) == t.num_fields:
        inner = None if indent is None else indent + "  "
        first, sep, key_sep, last = ("{", ",", ":", "}") if inner is None else (
            "{\n" + inner, ",\n" + inner, ": ", "\n" + str(indent) + "}")
        pieces: list[Any] = []
        for i in range(t.num_fields):
            key = json_strings(pa.array([t.field(i).name])).to_pylist()[0]
            pieces.append(pa.scalar((first if i == 0 else sep) + key + key_sep))
            pieces.append(json_value_texts(pc.struct_field(col, [i]), inner))
        if not pieces:
            return _nulls_as(col, pa.array(np.full(len(col), "{}", dtype=object), pa.string()))
        return _nulls_as(col, pc.binary_join_element_wise(*pieces, pa.scalar(last), ""))
    return _per_value(col, indent)


def _per_value(col: pa.Array, indent: str | None) -> pa.Array:
    """The exact per-value path, for one leaf column whose values Arrow's text would write
    otherwise than Python (or where Python fails, which must fail the same way): ``ns``
    units (Python's datetime has microseconds), wall-clock years outside 1000..9999,
    timestamps beyond Python's datetime, times past a day, date64 values holding a time of
    day, negative decimal scales, a row with two fields of one name (pyarrow gives Python no
    value for it), and types without a kernel path here (unions, durations, intervals)."""
    import json

    from .output import to_json_value

    compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    def dumps(j: Any) -> str:
        if indent is not None and isinstance(j, (dict, list)) and j:
            return json.dumps(j, ensure_ascii=False, indent=2).replace("\n", "\n" + indent)
        return compact(j)

    return pa.array(["null" if v is None else dumps(to_json_value(v)) for v in col.to_pylist()], pa.string())


def _quoted(texts: pa.Array) -> pa.Array:
    return pc.fill_null(pc.binary_join_element_wise('"', texts, '"', ""), pa.scalar("null"))


def _nulls_as(col: pa.Array, texts: pa.Array) -> pa.Array:
    return pc.if_else(pc.is_valid(col), texts, pa.scalar("null")) if col.null_count else texts


def _in_range(values: pa.Array, lo: int, hi: int) -> bool:
    low, high = pc.min_max(values).values()
    return low.as_py() is None or (lo <= low.as_py() and high.as_py() <= hi)


def _whole_days(col: pa.Array) -> bool:
    """Whether a date column's values are whole days (a date64 may hold a time of day, which
    Arrow's cast and Python's date would round differently)."""
    if not pa.types.is_date64(col.type):
        return True
    ms = col.cast(pa.int64()).fill_null(0).to_numpy()
    return bool((ms % 86_400_000 == 0).all())


def _floor_ms(col: pa.Array, per_second: int) -> pa.Array:
    """Whole milliseconds of a timestamp or time column, rounded down (Python's
    ``microsecond // 1000`` of a datetime, whose microsecond is never negative). Seconds too
    large to be milliseconds in an int64 (no Python datetime either) become the int64 maximum,
    outside every range checked."""
    v = (col.cast(pa.int32()) if pa.types.is_time32(col.type) else col).cast(pa.int64())
    mask = None if not col.null_count else pc.is_null(col)
    x = v.fill_null(0).to_numpy()
    if per_second == 1:
        ms = np.where(np.abs(x) < 2**52, x * 1000, np.iinfo(np.int64).max)
    else:
        ms = x * (1000 // per_second) if per_second <= 1000 else np.floor_divide(x, per_second // 1000)
    return pa.array(ms, pa.int64(), mask=None if mask is None else mask.to_numpy(zero_copy_only=False))


def _list_texts(col: pa.Array, indent: str | None) -> pa.Array:
    """``[a,b,..]`` of each list (a map: ``[[k,v],..]``): the child values rendered once, only
    those the slice spans, and joined along the offsets (``indent``: see :func:`json_texts`)."""
    t = col.type
    n = len(col)
    if pa.types.is_fixed_size_list(t):
        size = t.list_size
        offsets = np.arange(n + 1, dtype=np.int64) * size
        child = col.values.slice(col.offset * size, n * size)
    else:
        offsets = col.offsets.to_numpy().astype(np.int64)
        child = col.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
        offsets = offsets - offsets[0]
    inner = None if indent is None else indent + "  "
    first, sep, last = ("[", ",", "]") if inner is None else ("[\n" + inner, ",\n" + inner, "\n" + str(indent) + "]")
    if pa.types.is_map(t):
        pair = None if inner is None else inner + "  "
        p_first, p_sep, p_last = ("[", ",", "]") if pair is None else ("[\n" + pair, ",\n" + pair, "\n" + str(inner) + "]")
        texts = pc.binary_join_element_wise(pa.scalar(p_first), json_value_texts(pc.struct_field(child, [0]), pair),
                                            pa.scalar(p_sep), json_value_texts(pc.struct_field(child, [1]), pair),
                                            pa.scalar(p_last), "")
    else:
        texts = json_value_texts(child, inner)
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    lists = pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), texts.cast(pa.large_string()))
    joined = pc.binary_join(lists, pa.scalar(sep, pa.large_string())).cast(pa.string())
    texts = pc.binary_join_element_wise(pa.scalar(first), joined, pa.scalar(last), "")
    if inner is not None:
        empty = np.diff(offsets) == 0
        if empty.any():
            texts = pc.if_else(pa.array(empty), pa.scalar("[]"), texts)
    return _nulls_as(col, texts)
