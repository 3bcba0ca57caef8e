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
