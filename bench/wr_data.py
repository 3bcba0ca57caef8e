"""Deterministic input data and the expected merged result for ``bench_write_read.py``.

Imported by the driver and by both worker scripts, so it must depend on numpy/pyarrow only
(never on paimon-cli or pypaimon). Values are a pure function of ``(id, batch)`` and only the
row order is random (seeded), so any reader's result can be checked in full against
:func:`check_merged` without keeping a reference copy around.

Batch ``k`` holds ids ``[k * step, k * step + rows)`` in shuffled order, ``step = rows / 2``
(50 % key overlap with the next batch). After merging, key ``id`` carries the values of the
last batch that contains it.
"""

from __future__ import annotations

from typing import Any

PARTITIONS = ("2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04")
COLUMNS = "id BIGINT NOT NULL, dt STRING NOT NULL, qty INT, amount DOUBLE, name STRING"
PRIMARY_KEYS = ("dt", "id")
PARTITION_KEYS = ("dt",)


def arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        pa.field("dt", pa.string(), nullable=False),
        pa.field("qty", pa.int32()),
        pa.field("amount", pa.float64()),
        pa.field("name", pa.string()),
    ])


def _values(ids: Any, batch: int) -> Any:
    """The columns for ``ids`` as written by batch ``batch`` (vectorised)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = np.asarray(ids, dtype=np.int64)
    dt = pa.DictionaryArray.from_arrays(pa.array(ids % len(PARTITIONS), pa.int8()),
                                        pa.array(PARTITIONS)).cast(pa.string())
    qty = ((ids * 31 + batch) % 1_000_000).astype(np.int32)
    amount = ids.astype(np.float64) * 0.5 + batch
    name = pc.binary_join_element_wise(pa.scalar(f"v{batch}-"), pc.cast(pa.array(ids), pa.string()), "")
    return pa.Table.from_arrays([pa.array(ids), dt, pa.array(qty), pa.array(amount), name],
                                schema=arrow_schema())


def batch_table(batch: int, rows: int, seed: int = 42, first_id: int | None = None) -> Any:
    """Batch ``batch`` (ids from ``first_id``, default ``batch * rows // 2``), rows shuffled."""
    import numpy as np

    start = batch * (rows // 2) if first_id is None else first_id
    rng = np.random.default_rng(seed + batch)
    ids = start + rng.permutation(rows).astype(np.int64)
    return _values(ids, batch)


def write_parquet(table: Any, path: str, row_group: int = 131_072) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, path, row_group_size=row_group, compression="snappy")


def write_big_parquet(path: str, rows: int, seed: int = 7, chunk: int = 1_000_000) -> None:
    """``rows`` distinct keys (one batch's values) written chunk by chunk to bound memory."""
    import pyarrow.parquet as pq

    with pq.ParquetWriter(path, arrow_schema(), compression="snappy") as w:
        for i, start in enumerate(range(0, rows, chunk)):
            n = min(chunk, rows - start)
            w.write_table(batch_table(0, n, seed + i, first_id=start), row_group_size=131_072)


def expected_keys(rows: int, batches: int) -> int:
    step = rows // 2
    return (batches - 1) * step + rows


def check_merged(table: Any, rows: int, batches: int) -> dict[str, Any]:
    """Full check of a merged read: every key once, with the last batch's values.

    Returns ``{"rows": n, "mismatches": m, "digest": hex}``; ``digest`` hashes the sorted
    columns so two readers can also be compared with each other directly.
    """
    import hashlib

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = table.num_rows
    t = table.select(["id", "dt", "qty", "amount", "name"])
    t = t.take(pc.sort_indices(t, [("id", "ascending")]))
    ids = t.column("id").to_numpy()
    step = rows // 2
    want_ids = np.arange(expected_keys(rows, batches), dtype=np.int64)
    mismatches = 0
    if len(ids) != len(want_ids) or not np.array_equal(ids, want_ids):
        mismatches = max(1, abs(len(ids) - len(want_ids)))
        return {"rows": n, "mismatches": mismatches, "digest": None}
    last = np.minimum(ids // step, batches - 1)
    # the expected table, built per last-batch group (3 groups), in id order
    parts = [_values(ids[last == k], int(k)) for k in range(batches) if (last == k).any()]
    want = pa.concat_tables(parts)
    digest = hashlib.sha256()
    for name in ("dt", "qty", "amount", "name"):
        got_col = t.column(name).cast(want.schema.field(name).type)
        eq = pc.equal(got_col, want.column(name))
        bad = len(eq) - pc.sum(pc.fill_null(eq, False)).as_py()
        mismatches += int(bad)
    for name in ("id", "qty", "amount"):  # in the schema's types (Java's JSON gives 489 for 489.0)
        col = t.column(name).cast(arrow_schema().field(name).type)
        digest.update(np.ascontiguousarray(col.to_numpy()).tobytes())
    for name in ("dt", "name"):
        col = t.column(name).cast(pa.large_string()).combine_chunks()
        offs = np.frombuffer(col.buffers()[1], dtype=np.int64)[col.offset: col.offset + len(col) + 1]
        digest.update(np.diff(offs).tobytes())
        digest.update(col.buffers()[2].to_pybytes()[offs[0]: offs[-1]])
    return {"rows": n, "mismatches": mismatches, "digest": digest.hexdigest()[:16]}
