"""core/operation/write.py: file layout, sequence numbers, DataFileMeta fields, rolling, flushes, failure cleanup."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.write_job import write_table, write_table_result
from paimon_cli.core.data import binary_row
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.errors import InvalidInput, NotYetSupported
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.format.data_file import read_data_file
from paimon_cli.core.manifest.manifest import EMPTY_STATS
from paimon_cli.core.manifest.stats import decode_stats
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.table_schema import Schema


@pytest.fixture
def cat(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


def make(cat: FileSystemCatalog, name: str, columns: str, pk: tuple[str, ...] = (), part: tuple[str, ...] = (),
         **options: str) -> Any:
    cat.create_table(f"db.{name}", Schema.of(parse_columns(columns), partition_keys=part, primary_keys=pk,
                                             options=dict(options)))
    return cat.get_table(f"db.{name}")


def csv(tmp_path: Path, text: str, name: str = "in.csv") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def live(table: Any) -> list[Any]:
    return FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())


def file_rows(table: Any, entry: Any) -> list[dict[str, Any]]:
    from paimon_cli.core.format.arrow_schema import key_value_file_fields
    from paimon_cli.core.io import paths

    part = paths.partition_path_for(table.schema, binary_row.deserialize(entry.partition, table.schema.partition_types))
    path = paths.data_file_path(table.path, part, entry.bucket, entry.file.file_name)
    fields = key_value_file_fields(table.schema) if table.schema.primary_keys else list(table.schema.fields)
    return read_data_file(table.file_io, path, fields).to_pylist()


def test_pk_file_layout_and_meta(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "pk", "id INT NOT NULL, dt STRING NOT NULL, v STRING", ("id", "dt"), ("dt",), bucket="2")
    snap = write_table(t, [csv(tmp_path, "id,dt,v\n3,a,x\n1,a,y\n3,a,z\n2,b,w\n")])
    assert snap is not None and snap.id == 1 and snap.commit_kind == "APPEND"
    entries = sorted(live(t), key=lambda e: (e.partition, e.bucket))
    assert {e.total_buckets for e in entries} == {2}
    names = [e.file.file_name for e in entries]
    assert all(n.startswith("data-") and n.endswith("-0.parquet") for n in names)
    for e in entries:
        f = e.file
        assert (f.level, f.file_source, f.schema_id, f.extra_files, f.embedded_index) == (0, 0, 0, (), None)
        assert f.value_stats_cols is None and f.external_path is None
        now_as_utc = (dt.datetime.now() - dt.datetime(1970, 1, 1)).total_seconds() * 1000
        assert abs(f.creation_time - now_as_utc) < 60_000  # local wall clock stored as if UTC
        rows = file_rows(t, e)
        assert list(rows[0]) == ["_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND", "id", "dt", "v"]
        keys = [r["id"] for r in rows]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
        assert binary_row.deserialize(f.min_key, [t.schema.field("id").type]) == [keys[0]]
        assert binary_row.deserialize(f.max_key, [t.schema.field("id").type]) == [keys[-1]]
        kstats = decode_stats(f.key_stats, [t.schema.field("id").type])
        assert (kstats[0].min, kstats[0].max, kstats[0].null_count) == (keys[0], keys[-1], 0)
        assert f.row_count == len(rows) and f.delete_row_count == 0
        assert f.min_sequence_number == min(r["_SEQUENCE_NUMBER"] for r in rows)
        assert f.max_sequence_number == max(r["_SEQUENCE_NUMBER"] for r in rows)
    # duplicate id 3 merged inside the write: the later row (seq 2) wins, seq 1 is gone
    all_rows = [r for e in entries for r in file_rows(t, e)]
    three = [r for r in all_rows if r["id"] == 3]
    assert len(three) == 1 and three[0]["v"] == "z"


def test_sequence_numbers_follow_input_order_and_continue(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "seq", "id INT NOT NULL, v STRING", ("id",), bucket="1")
    write_table(t, [csv(tmp_path, "id,v\n5,a\n4,b\n3,c\n")])
    (e,) = live(t)
    assert {r["id"]: r["_SEQUENCE_NUMBER"] for r in file_rows(t, e)} == {5: 0, 4: 1, 3: 2}
    write_table(t, [csv(tmp_path, "id,v\n9,x\n", "b.csv")])
    second = max(live(t), key=lambda x: x.file.max_sequence_number)
    assert (second.file.min_sequence_number, second.file.max_sequence_number) == (3, 3)
    # overwrite starts writers empty, as Java's ignorePreviousFiles: back to 0
    write_table(t, [csv(tmp_path, "id,v\n1,o\n", "c.csv")], overwrite=True)
    (e,) = live(t)
    assert (e.file.min_sequence_number, e.file.row_count) == (0, 1)


def test_row_kinds_delete_count_and_ignore_delete(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "rk", "id INT NOT NULL, v STRING", ("id",), bucket="1")
    write_table(t, [csv(tmp_path, "id,v,op\n1,a,+I\n2,b,-D\n3,c,-U\n4,d,+U\n")], row_kind_column="op")
    (e,) = live(t)
    assert e.file.delete_row_count == 2 and e.file.row_count == 4
    assert [r["_VALUE_KIND"] for r in file_rows(t, e)] == [0, 3, 1, 2]
    t2 = make(cat, "rk2", "id INT NOT NULL, v STRING", ("id",), bucket="1", **{"ignore-delete": "true"})
    res = write_table_result(t2, [csv(tmp_path, "id,v,op\n1,a,+I\n2,b,-D\n", "b.csv")], row_kind_column="op")
    (e,) = live(t2)
    assert res.summary.rows == 1 and e.file.row_count == 1 and e.file.max_sequence_number == 0


def test_append_tables(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "app", "id INT, s STRING", (), ("s",))
    write_table(t, [csv(tmp_path, "id,s\n1,x\n2,y\n3,x\n")])
    write_table(t, [csv(tmp_path, "id,s\n4,x\n", "b.csv")])
    entries = live(t)
    assert {e.bucket for e in entries} == {0} and {e.total_buckets for e in entries} == {-1}
    for e in entries:
        f = e.file
        assert f.min_key == binary_row.EMPTY_ROW and f.key_stats == EMPTY_STATS and f.delete_row_count == 0
        assert f.min_sequence_number == 0  # bucket-unaware writers start empty (Java)
        assert list(file_rows(t, e)[0]) == ["id", "s"]
    with pytest.raises(InvalidInput, match="row 2: an append table takes only \\+I/\\+U rows, got -D"):
        write_table(t, [csv(tmp_path, "id,s,op\n1,x,+I\n2,x,-D\n", "c.csv")], row_kind_column="op")
    fixed = make(cat, "appf", "id INT, s STRING", (), bucket="2", **{"bucket-key": "id"})
    write_table(fixed, [csv(tmp_path, "id,s\n" + "".join(f"{i},v\n" for i in range(20)), "d.csv")])
    write_table(fixed, [csv(tmp_path, "id,s\n1,w\n", "e.csv")])
    id_type = [fixed.schema.field("id").type]
    first_counts: dict[int, int] = {}
    entries = sorted(live(fixed), key=lambda e: e.file.max_sequence_number)
    for e in entries:
        rows = file_rows(fixed, e)
        assert all(binary_row.bucket_of([r["id"]], id_type, 2) == e.bucket for r in rows)
        if e.file.row_count > 1:
            first_counts[e.bucket] = e.file.row_count
            assert e.file.min_sequence_number == 0
    (second,) = [e for e in entries if e.file.row_count == 1]
    # fixed-bucket writers continue the bucket's sequence (the first write numbered 0..n-1)
    assert second.file.min_sequence_number == first_counts[second.bucket]


def test_rolling_and_buffer_flushes(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "roll", "id INT NOT NULL, v STRING", ("id",), bucket="1",
             **{"target-file-size": "4 kb", "write-buffer-size": "32 kb", "write-only": "true"})
    # 500 keys written 12 times: every flush holds each key once at most, so a run has
    # <= 500 rows; distinct rows per run must still roll (Java checks the size every 1000
    # records, so use keys enough for runs of several thousand rows as well)
    body = "".join(f"{i % 500},{'x' * 30}{i}\n" for i in range(3000))
    body += "".join(f"{1000 + i},{'y' * 30}{i}\n" for i in range(6000))
    res = write_table_result(t, [csv(tmp_path, "id,v\n" + body)])
    entries = live(t)
    assert len(entries) == res.summary.files > 5
    # several sorted runs (flushes); within each, files do not overlap and sizes stay near the target
    assert all(e.file.file_size < 3 * 4096 for e in entries)
    latest: dict[int, tuple[int, str]] = {}
    for e in entries:
        for r in file_rows(t, e):
            if r["id"] not in latest or r["_SEQUENCE_NUMBER"] > latest[r["id"]][0]:
                latest[r["id"]] = (r["_SEQUENCE_NUMBER"], r["v"])
    assert len(latest) == 6500
    assert all(v.endswith(str(seq if seq < 3000 else seq - 3000)) for seq, v in latest.values())  # seq = row index


def test_changelog_input_and_thin_mode_and_formats(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "cl", "id INT NOT NULL, v STRING", ("id",), bucket="1",
             **{"changelog-producer": "input", "file.format": "avro", "data-file.thin-mode": "true"})
    snap = write_table(t, [csv(tmp_path, "id,v\n1,a\n1,b\n")])
    assert snap.changelog_record_count == 2
    clog = FileStoreScan(t).changelog(snap)
    assert len(clog) == 1 and clog[0].file.file_name.startswith("changelog-")
    assert clog[0].file.file_name.endswith(".avro") and clog[0].file.row_count == 2
    (e,) = live(t)
    assert list(file_rows(t, e)[0]) == ["_SEQUENCE_NUMBER", "_VALUE_KIND", "id", "v"]


def test_dynamic_bucket_writes_hash_index(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "dyn", "id INT NOT NULL, v STRING", ("id",), bucket="-1",
             **{"dynamic-bucket.target-row-num": "2"})
    snap = write_table(t, [csv(tmp_path, "id,v\n1,a\n2,b\n3,c\n1,d\n")])
    assert {e.bucket for e in live(t)} == {0, 1}
    idx = FileStoreScan(t).index_entries(snap)
    assert sorted((i.bucket, i.index_file.row_count) for i in idx) == [(0, 2), (1, 1)]


def test_dv_and_first_row_tables_are_visible_after_write(cat: FileSystemCatalog, tmp_path: Path) -> None:
    """Formerly refused: the write now compacts level 0 up in the same job (APPEND + COMPACT)."""
    from paimon_cli.core.operation.read import TableRead

    for i, opts in enumerate(({"merge-engine": "first-row"}, {"deletion-vectors.enabled": "true"})):
        t = make(cat, f"vis{i}", "id INT NOT NULL, v STRING", ("id",), bucket="1", **opts)
        res = write_table_result(t, [csv(tmp_path, "id,v\n1,a\n2,b\n1,c\n", f"v{i}.csv")])
        assert [s.commit_kind for s in res.snapshots] == ["APPEND", "COMPACT"] and res.snapshot.id == 2
        want = {1: "a" if "merge-engine" in opts else "c", 2: "b"}
        assert {r["id"]: r["v"] for r in TableRead(t).to_arrow().to_pylist()} == want
        assert all(e.file.level == t.options.num_levels - 1 for e in live(t))


def test_refusals_happen_before_reading_input(cat: FileSystemCatalog, tmp_path: Path) -> None:
    missing = str(tmp_path / "does-not-exist.csv")
    cross = make(cat, "cross", "id INT NOT NULL, dt STRING", ("id",), ("dt",), bucket="-1")
    with pytest.raises(NotYetSupported, match="cross-partition"):
        write_table(cross, [missing])
    app = make(cat, "appd", "id INT")
    with pytest.raises(InvalidInput, match="append table"):
        write_table(app, [missing], delete=True)


def test_failure_removes_written_files(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "fail", "id INT NOT NULL, dt STRING NOT NULL, v TINYINT", ("id", "dt"), ("dt",), bucket="1",
             **{"write-buffer-size": "1 kb"})
    good = "".join(f"{i},a,1\n" for i in range(200))
    with pytest.raises(InvalidInput, match="row 201, column 'v'"):
        write_table(t, [csv(tmp_path, "id,dt,v\n" + good + "999,a,300\n")])
    assert not list((Path(t.path)).rglob("data-*")) and t.snapshot_manager.latest_snapshot() is None
    # static overwrite with rows outside the partition: refused by the commit, files removed
    write_table(t, [csv(tmp_path, "id,dt,v\n1,a,1\n", "ok.csv")])
    before = sorted(p.name for p in Path(t.path).rglob("data-*"))
    with pytest.raises(InvalidInput, match="outside the overwritten partition"):
        write_table(t, [csv(tmp_path, "id,dt,v\n2,b,1\n", "b.csv")], overwrite=True, overwrite_partition={"dt": "a"})
    assert sorted(p.name for p in Path(t.path).rglob("data-*")) == before


def test_table_write_api_with_arrow_batches(cat: FileSystemCatalog) -> None:
    import numpy as np

    from paimon_cli.core.operation.commit import FileStoreCommit

    t = make(cat, "api", "id BIGINT NOT NULL, v DOUBLE", ("id",), bucket="4")
    tw = TableWrite(t)
    schema = arrow_schema(list(t.schema.fields))
    batch = pa.table({"id": pa.array(range(100), pa.int64()), "v": pa.array([1.0] * 100)}, schema=schema)
    tw.write_arrow(batch)
    tw.write_arrow(batch.slice(0, 10), np.full(10, 3, dtype=np.int8))
    msgs = tw.prepare_commit()
    assert {m.bucket for m in msgs} == {0, 1, 2, 3}
    for m in msgs:
        for f in m.new_files:
            ids = [r["id"] for r in file_rows(t, type("E", (), {"partition": m.partition, "bucket": m.bucket,
                                                                  "file": f})())]
            assert all(binary_row.bucket_of([i], [t.schema.field("id").type], 4) == m.bucket for i in ids)
    assert sum(f.delete_row_count for m in msgs for f in m.new_files) == 10
    snap = FileStoreCommit(t).commit(msgs)
    assert snap.total_record_count == 100
    with pytest.raises(InvalidInput, match="already committed"):
        tw.write_arrow(batch)


def test_stdin_end_to_end(cat: FileSystemCatalog) -> None:
    t = make(cat, "sin", "id INT NOT NULL, v STRING", ("id",), bucket="1")
    snap = write_table(t, ["-"], stdin=io.BufferedReader(io.BytesIO(b'{"id": 1, "v": "a"}\n')))
    assert snap.delta_record_count == 1


def test_cli_command_prints_a_summary_and_maps_errors(cat: FileSystemCatalog, tmp_path: Path) -> None:
    """commands/write.py through a throw-away typer app (app.py wiring is the lead's)."""
    import json

    import typer
    from typer.testing import CliRunner

    from paimon_cli.commands.write import write
    from paimon_cli.errors import CliCommand

    app = typer.Typer()
    app.command(name="write", cls=CliCommand)(write)
    app.command(name="noop")(lambda: None)  # keeps typer in multi-command mode
    make(cat, "cli", "id INT NOT NULL, dt STRING NOT NULL, v STRING", ("id", "dt"), ("dt",), bucket="2")
    wh = str(tmp_path / "wh")
    src = csv(tmp_path, "id,dt,v\n1,a,x\n2,b,y\n")
    res = CliRunner().invoke(app, ["write", "db.cli", src, "-w", wh, "-o", "json"])
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert row["snapshot_id"] == 1 and row["commit_kind"] == "APPEND" and row["rows"] == 2 and row["files"] == 2
    src2 = csv(tmp_path, "id,v\n3,z\n", "p.csv")
    res = CliRunner().invoke(app, ["write", "db.cli", src2, "--overwrite", "--partition", "dt=a", "-w", wh,
                                   "-o", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)[0]["commit_kind"] == "OVERWRITE"
    bad = csv(tmp_path, "id,dt,v\n1,a,x\n,a,y\n", "bad.csv")
    res = CliRunner().invoke(app, ["write", "db.cli", bad, "-w", wh])
    assert res.exit_code == 4
    assert "row 2, column 'id': NULL in primary-key column" in res.output
    res = CliRunner().invoke(app, ["write", "db.cli", src, "--partition", "dt=a", "-w", wh])
    assert res.exit_code == 4 and "only valid with --overwrite" in res.output


@pytest.mark.s3
def test_write_to_s3_from_an_s3_glob(s3_server: Any, s3_warehouse: str) -> None:
    from paimon_cli.core.io.fileio import FileIO

    cat = FileSystemCatalog(s3_warehouse, s3_server.storage_options)
    t = make(cat, "s3t", "id INT NOT NULL, v STRING", ("id",), bucket="2")
    fio = FileIO(s3_warehouse, s3_server.storage_options)
    for i in (1, 2):
        fio.write_bytes(f"{s3_warehouse}/input/part-{i}.csv", f"id,v\n{i},x{i}\n{i + 10},y\n".encode())
    snap = write_table(t, [f"{s3_warehouse}/input/part-*.csv"], storage_options=s3_server.storage_options)
    assert snap is not None and snap.delta_record_count == 4
    assert sum(e.file.row_count for e in live(t)) == 4


def test_dynamic_options_apply_to_one_write_but_not_layout(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "dynopt", "id INT NOT NULL, v STRING", ("id",), bucket="1")
    write_table(t, [csv(tmp_path, "id,v\n1,a\n")], options={"file.format": "orc"})
    (e,) = live(t)
    assert e.file.file_name.endswith(".orc")
    with pytest.raises(InvalidInput, match="'bucket' is part of the table's layout"):
        write_table(t, [csv(tmp_path, "id,v\n1,a\n")], options={"bucket": "3"})
    with pytest.raises(InvalidInput, match="did you mean 'write-buffer-size'"):
        write_table(t, [csv(tmp_path, "id,v\n1,a\n")], options={"write-bufer-size": "3 mb"})
