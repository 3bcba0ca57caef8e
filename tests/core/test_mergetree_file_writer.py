"""core/mergetree/file_writer.py: streaming RollingFileWriter (KV and append), stats, rolling, abort."""

from __future__ import annotations

import math
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data import binary_row
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.format.arrow_schema import key_value_file_fields
from paimon_cli.core.format.data_file import read_data_file
from paimon_cli.core.manifest.stats import collect_key_stats, collect_value_stats, decode_stats
from paimon_cli.core.mergetree.file_writer import RollingFileWriter
from paimon_cli.core.schema.table_schema import Schema


@pytest.fixture
def cat(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


def make(cat: FileSystemCatalog, name: str, columns: str, pk: tuple[str, ...] = (), part: tuple[str, ...] = (),
         **options: str) -> Any:
    cat.create_table(f"db.{name}", Schema.of(parse_columns(columns), partition_keys=part, primary_keys=pk,
                                             options=dict(options)))
    return cat.get_table(f"db.{name}")


def kv_records(n: int, start_seq: int = 0, seed: int = 1) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = np.arange(n, dtype=np.int32) * 2
    v = rng.normal(size=n)
    v[::17] = np.nan if n > 20 else v[::17]
    v[5 % max(n, 1)] = -0.0
    s = pa.array([None if i % 7 == 0 else f"name-{i:06d}" for i in range(n)])
    kinds = np.zeros(n, dtype=np.int8)
    kinds[3::50] = 3
    return pa.table({
        "_SEQUENCE_NUMBER": pa.array(np.arange(start_seq, start_seq + n, dtype=np.int64)),
        "_VALUE_KIND": pa.array(kinds, pa.int8()),
        "id": pa.array(ids, pa.int32()),
        "v": pa.array(v, pa.float64()),
        "s": s,
        "b": pa.array([bytes([i % 256]) for i in range(n)], pa.binary()),
    })


def file_path(t: Any, name: str) -> str:
    return f"{t.path}/bucket-0/{name}"


@pytest.mark.parametrize("fmt", ["parquet", "orc", "avro"])
def test_kv_single_file_matches_whole_table_stats(cat: FileSystemCatalog, fmt: str) -> None:
    t = make(cat, "t", "id INT NOT NULL, v DOUBLE, s STRING, b BYTES", ("id",), bucket="1", **{"file.format": fmt})
    rec = kv_records(5000)
    w = RollingFileWriter(t, binary_row.EMPTY_ROW, 0, level=3)
    for b in rec.to_batches(max_chunksize=700):  # many small batches
        w.write(b)
    metas = w.close()
    assert len(metas) == 1
    m = metas[0]
    assert (m.level, m.file_source, m.row_count, m.schema_id) == (3, 1, 5000, 0)
    assert (m.min_sequence_number, m.max_sequence_number) == (0, 4999)
    assert m.delete_row_count == int((rec.column("_VALUE_KIND").to_numpy() == 3).sum())
    assert m.file_name.startswith("data-") and m.file_name.endswith("-0." + fmt)
    assert w.written == [file_path(t, m.file_name)]
    # identical stats bytes to the whole-table collectors
    vs, cols = collect_value_stats(rec, list(t.schema.fields), t.options, fmt)
    assert (m.value_stats, m.value_stats_cols) == (vs, cols)
    key_table = pa.table({"_KEY_id": rec.column("id")})
    from paimon_cli.core.format.arrow_schema import key_fields

    assert m.key_stats == collect_key_stats(key_table, key_fields(t.schema), t.options, fmt)
    assert binary_row.deserialize(m.min_key, [t.schema.field("id").type]) == [0]
    assert binary_row.deserialize(m.max_key, [t.schema.field("id").type]) == [9998]
    back = read_data_file(t.file_io, file_path(t, m.file_name), key_value_file_fields(t.schema))
    assert back.column_names == ["_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND", "id", "v", "s", "b"]
    assert back.column("_KEY_id").to_pylist() == rec.column("id").to_pylist()
    assert back.column("s").to_pylist() == rec.column("s").to_pylist()
    assert m.file_size == t.file_io.file_size(file_path(t, m.file_name))


def test_float_zero_and_nan_rules_across_batches(cat: FileSystemCatalog) -> None:
    for fmt in ("parquet", "orc", "avro"):
        t = make(cat, f"f_{fmt}", "id INT NOT NULL, v DOUBLE", ("id",), bucket="1", **{"file.format": fmt})
        vals = [0.0, 1.5, -0.0, float("nan"), -3.0, 0.0, None]
        rec = pa.table({"_SEQUENCE_NUMBER": pa.array(range(7), pa.int64()), "_VALUE_KIND": pa.array([0] * 7, pa.int8()),
                        "id": pa.array(range(7), pa.int32()), "v": pa.array(vals, pa.float64())})
        w = RollingFileWriter(t, binary_row.EMPTY_ROW, 0)
        for i in range(7):
            w.write(rec.slice(i, 1))
        m = w.close()[0]
        vs, _ = collect_value_stats(rec, list(t.schema.fields), t.options, fmt)
        got = decode_stats(m.value_stats, [f.type for f in t.schema.fields])
        want = decode_stats(vs, [f.type for f in t.schema.fields])
        for g, x in zip(got, want, strict=True):
            assert repr(g) == repr(x), fmt


def test_rolls_at_target_file_size(cat: FileSystemCatalog) -> None:
    t = make(cat, "roll", "id INT NOT NULL, v DOUBLE, s STRING, b BYTES", ("id",), bucket="1",
             **{"target-file-size": "256 kb"})
    rec = kv_records(60_000)
    w = RollingFileWriter(t, binary_row.EMPTY_ROW, 0, level=5)
    for b in rec.to_batches(max_chunksize=8192):
        w.write(b)
    metas = w.close()
    assert len(metas) >= 4
    assert sum(m.row_count for m in metas) == 60_000
    # every file but the last reaches about the target (Java rolls once it is reached)
    for m in metas[:-1]:
        assert 0.6 * (256 << 10) <= m.file_size <= 1.6 * (256 << 10), m.file_size
    # key ranges are consecutive and non-overlapping, seq ranges follow the rows
    keys = [(binary_row.deserialize(m.min_key, [t.schema.field("id").type])[0],
             binary_row.deserialize(m.max_key, [t.schema.field("id").type])[0]) for m in metas]
    for (_a_lo, a_hi), (b_lo, _b_hi) in pairwise(keys):
        assert a_hi < b_lo
    assert len({m.file_name for m in metas}) == len(metas)
    assert [m.file_name.rsplit("-", 1)[1] for m in metas] == [f"{i}.parquet" for i in range(len(metas))]
    total = pa.concat_tables(read_data_file(t.file_io, file_path(t, m.file_name), key_value_file_fields(t.schema))
                             for m in metas)
    assert total.column("id").to_pylist() == rec.column("id").to_pylist()


def test_append_files_number_sequences_and_abort(cat: FileSystemCatalog) -> None:
    t = make(cat, "app", "a INT, s STRING", (), **{"target-file-size": "64 kb"})
    rows = 40_000
    data = pa.table({"a": pa.array(range(rows), pa.int32()), "s": [f"x{i}" for i in range(rows)]})
    w = RollingFileWriter(t, binary_row.EMPTY_ROW, 0, kind="append", sequence_start=100)
    for b in data.to_batches(max_chunksize=5000):
        w.write(b)
    metas = w.close()
    assert len(metas) > 1
    assert metas[0].min_sequence_number == 100
    for a, b in pairwise(metas):
        assert b.min_sequence_number == a.max_sequence_number + 1
    assert metas[-1].max_sequence_number == 100 + rows - 1
    for m in metas:
        assert m.min_key == binary_row.EMPTY_ROW and m.delete_row_count == 0 and m.file_source == 1
        back = read_data_file(t.file_io, file_path(t, m.file_name), list(t.schema.fields))
        assert back.column_names == ["a", "s"] and back.num_rows == m.row_count
    # abort removes everything
    w2 = RollingFileWriter(t, binary_row.EMPTY_ROW, 0, kind="append")
    w2.write(data)
    assert len(w2.written) > 1 and t.file_io.exists(w2.written[0])  # the open one may still be buffered
    w2.abort()
    assert not any(t.file_io.exists(p) for p in w2.written)


def test_index_builder_hook_and_partition_dir(cat: FileSystemCatalog) -> None:
    t = make(cat, "idx", "id INT NOT NULL, dt STRING NOT NULL, v STRING", ("id", "dt"), ("dt",), bucket="2")
    calls: list[Any] = []

    class Builder:
        def __init__(self, path: str) -> None:
            self.path = path
            self.rows = 0

        def write_batch(self, tbl: pa.Table) -> None:
            assert tbl.column_names == ["id", "dt", "v"]
            self.rows += tbl.num_rows

        def finish(self) -> tuple[bytes | None, tuple[str, ...]]:
            calls.append((self.path, self.rows))
            return b"\x01\x02", ()

    part = binary_row.serialize(["2024-01-01"], [t.schema.field("dt").type])
    rec = pa.table({"_SEQUENCE_NUMBER": pa.array([5, 6], pa.int64()), "_VALUE_KIND": pa.array([0, 0], pa.int8()),
                    "id": pa.array([1, 2], pa.int32()), "dt": ["2024-01-01"] * 2, "v": ["a", "b"]})
    w = RollingFileWriter(t, part, 1, level=1, index_builder_factory=Builder)
    w.write(rec)
    m = w.close()[0]
    assert m.embedded_index == b"\x01\x02"
    assert calls == [(w.written[0], 2)]
    assert "/dt=2024-01-01/bucket-1/" in w.written[0]
    assert math.isclose(m.row_count, 2)


def test_table_file_index_options_build_an_index_per_file(cat: FileSystemCatalog) -> None:
    t = make(cat, "fi", "id INT NOT NULL, v STRING", ("id",), bucket="1", **{"file-index.bloom-filter.columns": "v"})
    rec = pa.table({"_SEQUENCE_NUMBER": pa.array([1, 2], pa.int64()), "_VALUE_KIND": pa.array([0, 0], pa.int8()),
                    "id": pa.array([1, 2], pa.int32()), "v": ["a", "b"]})
    w = RollingFileWriter(t, binary_row.EMPTY_ROW, 0, level=2)
    assert w.index_builder_factory is not None
    w.write(rec)
    m = w.close()[0]
    assert m.embedded_index or m.extra_files  # built by core.fileindex for the compaction output
    w2 = RollingFileWriter(t, binary_row.EMPTY_ROW, 0, level=2, index_builder_factory=None)
    w2.write(rec)
    m2 = w2.close()[0]
    assert m2.embedded_index is None and m2.extra_files == ()


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from paimon_cli.core.data.types import DataField, DoubleType, IntType, VarCharType  # noqa: E402
from paimon_cli.core.manifest.stats import StatsAccumulator, raw_col_stats  # noqa: E402

_FLOATS = st.one_of(st.none(), st.sampled_from([0.0, -0.0, float("nan"), 1.5, -2.25, 3.0]))


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.tuples(_FLOATS, st.one_of(st.none(), st.integers(-9, 9)),
                              st.one_of(st.none(), st.text(max_size=4))), min_size=0, max_size=40),
    cuts=st.lists(st.integers(0, 40), max_size=6),
    fmt=st.sampled_from(["parquet", "orc", "avro"]),
)
def test_stats_accumulator_equals_whole_column(values: list[Any], cuts: list[int], fmt: str) -> None:
    fields = [DataField(0, "f", DoubleType()), DataField(1, "i", IntType()), DataField(2, "s", VarCharType(100))]
    table = pa.table({"f": pa.array([v[0] for v in values], pa.float64()),
                      "i": pa.array([v[1] for v in values], pa.int32()),
                      "s": pa.array([v[2] for v in values], pa.string())})
    acc = StatsAccumulator(fields, fmt)
    bounds = sorted({0, len(values), *[c for c in cuts if c <= len(values)]})
    for a, b in pairwise(bounds):
        acc.update(table.slice(a, b - a))
    for f in fields:
        want = raw_col_stats(table.column(f.name), f.type, fmt)
        assert repr(acc.raw(f)) == repr(want), (f.name, fmt)


def _changelog_rec() -> pa.Table:
    return pa.table({"_SEQUENCE_NUMBER": pa.array([1, 2, 3], pa.int64()), "_VALUE_KIND": pa.array([0, 1, 2], pa.int8()),
                     "id": pa.array([1, 2, 3], pa.int32()), "v": ["a", "b", "c"]})


def _codec(t: Any, name: str) -> str:
    import pyarrow.parquet as pq

    with t.file_io.open_input(file_path(t, name)) as fh:
        return pq.ParquetFile(fh).metadata.row_group(0).column(0).compression.lower()


def test_changelog_files_take_changelog_file_options(cat: FileSystemCatalog) -> None:
    """Java 1.1+ KeyValueFileWriterFactory: changelog-file.{format,compression,stats-mode} for
    changelog files only; data files of the same level keep the table's settings."""
    from paimon_cli.core.schema.options import CoreOptions

    t = make(cat, "cl", "id INT NOT NULL, v STRING", ("id",), bucket="1",
             **{"metadata.stats-mode": "full", "changelog-file.stats-mode": "none",
                "changelog-file.compression": "snappy", "file-index.bloom-filter.columns": "v"})
    rec = _changelog_rec()
    log = RollingFileWriter(t, binary_row.EMPTY_ROW, 0, level=5, changelog=True, file_source=0)
    assert log.index_builder_factory is None  # changelog files get no file index
    log.write(rec)
    [c] = log.close()
    data = RollingFileWriter(t, binary_row.EMPTY_ROW, 0, level=5)
    data.write(rec)
    [d] = data.close()
    assert c.file_name.startswith("changelog-") and c.level == 5 and c.file_source == 0
    assert c.embedded_index is None and c.extra_files == ()
    assert d.embedded_index or d.extra_files
    assert (_codec(t, c.file_name), _codec(t, d.file_name)) == ("snappy", "zstd")
    fields = list(t.schema.fields)
    none_opts = CoreOptions({**t.options.options, "metadata.stats-mode": "none"})
    assert (c.value_stats, c.value_stats_cols) == collect_value_stats(rec, fields, none_opts, "parquet")
    assert (d.value_stats, d.value_stats_cols) == collect_value_stats(rec, fields, t.options, "parquet")
    assert c.value_stats != d.value_stats
    assert [s.min for s in decode_stats(d.value_stats, [f.type for f in fields])] == [1, "a"]


def test_changelog_files_fall_back_to_level_settings(cat: FileSystemCatalog) -> None:
    """Without changelog-file.* a changelog file is written like a data file of its level
    (file.format/compression/stats-mode per level); changelog-file.format wins when set."""
    from paimon_cli.core.mergetree.file_writer import output_format, output_options
    from paimon_cli.core.schema.options import CoreOptions

    t = make(cat, "lv", "id INT NOT NULL, v STRING", ("id",), bucket="1",
             **{"file.format.per.level": "0:avro,5:orc", "file.compression.per.level": "5:snappy",
                "metadata.stats-mode.per.level": "5:counts"})
    log = RollingFileWriter(t, binary_row.EMPTY_ROW, 0, level=5, changelog=True)
    log.write(_changelog_rec())
    [c] = log.close()
    assert c.file_name.startswith("changelog-") and c.file_name.endswith(".orc")
    assert (output_options(t.options, 5, True).file_compression, output_format(t.options, 5, True)) == ("snappy", "orc")
    assert output_options(t.options, 5, True).metadata_stats_mode == "counts"
    counts = CoreOptions({**t.options.options, "metadata.stats-mode": "counts"})
    assert (c.value_stats, c.value_stats_cols) == collect_value_stats(_changelog_rec(), list(t.schema.fields),
                                                                      counts, "orc")
    assert output_format(t.options, 0, True) == "avro" and output_format(t.options, 3, True) == "parquet"
    opts = CoreOptions({**t.options.options, "changelog-file.format": "AVRO", "changelog-file.compression": "zstd",
                        "changelog-file.stats-mode": "truncate(8)"})
    assert output_format(opts, 5, True) == "avro" and output_format(opts, 5, False) == "orc"
    assert output_options(opts, 5, True).file_compression == "zstd"
    assert output_options(opts, 5, False).file_compression == "snappy"
    assert output_options(opts, 5, True).metadata_stats_mode == "truncate(8)"
    assert output_options(opts, 5, False).metadata_stats_mode == "counts"
