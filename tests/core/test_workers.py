"""Row filters whose work ends with the call (issue 29): ``Predicate.filter``."""

from __future__ import annotations

import threading
import weakref

import numpy as np
import pyarrow as pa

from paimon_cli.core.data.predicate_parser import parse_predicate
from paimon_cli.core.data.types import BigIntType, DataField, VarCharType

RUNS = 400  # Table.filter(expression) freed late in 3 to 8 of 200 runs here


def test_predicate_filter_is_table_filter() -> None:
    """Same rows in the same order as pyarrow's own expression filter, over several chunks
    and NULLs."""
    n = 200_000
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 1000, n)
    s = pa.array([None if i % 11 == 0 else f"s{i % 13}" for i in range(n)])
    t = pa.concat_tables([pa.table({"id": ids[:70_000], "s": s[:70_000]}),
                          pa.table({"id": ids[70_000:], "s": s[70_000:]})])
    fields = [DataField(0, "id", BigIntType()), DataField(1, "s", VarCharType(10))]
    for where in ("id >= 500", "s = 's3' OR s IS NULL", "id < 0", "id IN (1, 2, 3) OR s = 's1' AND id > 900"):
        pred = parse_predicate(where, fields)
        assert pred.filter(t).equals(t.filter(pred.to_arrow_expression())), where


def _note_thread(into: list[bool]) -> None:
    into.append(threading.current_thread() is threading.main_thread())


def test_predicate_filter_releases_its_input_before_it_returns() -> None:
    """The input's numpy-owned memory is freed on the calling thread when the caller drops it.

    ``Table.filter(expression)`` leaves that to Arrow's pool threads, some time after the call
    returned: taking the GIL for it while the interpreter exits after an
    early stop aborted ``read --where --limit`` (exit 134).
    """
    pred = parse_predicate("y = 3", [DataField(0, "x", BigIntType()), DataField(1, "y", BigIntType())])
    late = 0
    for _ in range(RUNS):
        arr = np.arange(300_000)
        freed: list[bool] = []  # on the main thread?
        weakref.finalize(arr, _note_thread, freed)
        t = pa.table({"x": pa.array(arr), "y": pa.array(np.arange(300_000) % 7)})  # "x" holds arr, no copy
        del arr
        out = pred.filter(t)
        del t
        late += freed != [True]
        assert out.num_rows == 300_000 // 7
    assert late == 0, f"{late}/{RUNS} inputs were freed later or on another thread"
