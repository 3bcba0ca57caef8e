"""The columnar manifest path gives exactly what the object path gives (rows, order, refusals)."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_cli.core.errors import CorruptMetadata, MissingMetadata, NotYetSupported, PaimonError
from paimon_cli.core.io.fileio import FileIO, join
from paimon_cli.core.manifest import columnar
from paimon_cli.core.manifest.avro import write_avro
from paimon_cli.core.manifest.avro_blocks import container_info
from paimon_cli.core.manifest.columnar import (
    ENTRY_SCHEMA,
    entries_from_table,
    iter_manifest_tables,
    manifest_tables_from_bytes,
    merge_live,
    read_manifest_table,
)
from paimon_cli.core.manifest.expire_file_entry import merge_entries
from paimon_cli.core.manifest.manifest import (
    MANIFEST_SCHEMA,
    FileKind,
    FileSource,
    ManifestEntry,
    ManifestFile,
    ManifestFileMeta,
    SimpleStats,
    entry_to_record,
)
from tests.core.test_manifest import PART_TYPE, _entry, _file, _old_record, _schema_with_file_fields


@pytest.fixture()
def fio(tmp_path: Path) -> FileIO:
    return FileIO(str(tmp_path))


@pytest.fixture(autouse=True)
def polars_avro_for_small_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """These manifests are small (some empty): without this they would all take the object path."""
    monkeypatch.setattr(columnar, "_OBJECTS_UP_TO", -1)


def test_small_runs_take_the_object_path_with_the_same_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [e for e in _varied_entries() if e.kind == FileKind.ADD]
    raws = [write_avro(MANIFEST_SCHEMA, [entry_to_record(e) for e in entries] * n) for n in (1, 20)]
    paths = ["m-1", "m-20"]
    by_polars = manifest_tables_from_bytes(raws, paths)
    monkeypatch.setattr(columnar, "_OBJECTS_UP_TO", 64)
    monkeypatch.setattr(columnar, "_decode", lambda raws: pytest.fail("polars-avro called for a small run"))
    by_objects = manifest_tables_from_bytes(raws, paths)
    assert [t.num_rows for t in by_objects] == [3, 60]
    assert all(a.equals(b) and a.schema == b.schema for a, b in zip(by_objects, by_polars, strict=True))


def _both(fio: FileIO, d: str, name: str) -> tuple[list[ManifestEntry], pa.Table]:
    return ManifestFile(fio, d).read(name), read_manifest_table(fio, d, name)


def _varied_entries() -> list[ManifestEntry]:
    return [
        _entry(FileKind.ADD, ["2024-01-01", 1], 0, _file("data-a.parquet")),
        _entry(FileKind.ADD, ["2024-01-01", 2], 3, _file(
            "data-b.orc", extra_files=("data-b.orc.index", "x"), creation_time=1_700_000_000_123,
            delete_row_count=2, embedded_index=b"\x00\x01", file_source=FileSource.COMPACT,
            value_stats_cols=("a", "b"), external_path="s3://bucket/ext/data-b.orc", first_row_id=10,
            write_cols=("a",), write_cols_sequences=(4,), level=5,
            value_stats=SimpleStats(b"\x01" * 16, b"\x02" * 16, [None, 3, 0]))),
        _entry(FileKind.DELETE, ["2024-01-01", 1], 0, _file("data-a.parquet")),
        _entry(FileKind.ADD, [None, None], -2, _file("data-c.avro", creation_time=-5, extra_files=())),
    ]


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard"])
def test_same_entries_as_object_path_every_codec(fio: FileIO, tmp_path: Path, codec: str) -> None:
    meta = ManifestFile(fio, str(tmp_path), PART_TYPE, codec=codec).write(_varied_entries(), schema_id=0)
    objects, table = _both(fio, str(tmp_path), meta.file_name)
    assert table.schema == ENTRY_SCHEMA
    assert entries_from_table(table) == objects == _varied_entries()
    assert table.column("_CREATION_TIME").to_pylist() == [None, 1_700_000_000_123, None, -5]


@pytest.mark.parametrize(("n_fields", "codec"), [(13, "snappy"), (15, "snappy"), (16, "zstandard"),
                                                 (18, "zstandard"), (21, "deflate")])
def test_old_layouts_normalised(fio: FileIO, tmp_path: Path, n_fields: int, codec: str) -> None:
    data = write_avro(_schema_with_file_fields(n_fields), [_old_record(n_fields)] * 3, codec=codec)
    fio.write_bytes(join(str(tmp_path), "m"), data)
    objects, table = _both(fio, str(tmp_path), "m")
    assert table.schema == ENTRY_SCHEMA and table.num_rows == 3
    assert entries_from_table(table) == objects


def test_02_era_nullable_records(fio: FileIO, tmp_path: Path) -> None:
    s = _schema_with_file_fields(13)
    s["fields"][5]["type"] = ["null", s["fields"][5]["type"]]
    for f in s["fields"][5]["type"][1]["fields"]:
        if f["name"] in ("_KEY_STATS", "_VALUE_STATS"):
            f["type"] = ["null", f["type"]]
    rec = _old_record(13)
    rec["_FILE"]["_KEY_STATS"] = None
    fio.write_bytes(join(str(tmp_path), "m"), write_avro(s, [rec, _old_record(13)], codec="snappy"))
    objects, table = _both(fio, str(tmp_path), "m")
    assert entries_from_table(table) == objects
    # a top-level ["null", record] union (0.2) reads too
    fio.write_bytes(join(str(tmp_path), "u"), write_avro(["null", _schema_with_file_fields(13)],
                                                         [_old_record(13)], codec="snappy"))
    objects, table = _both(fio, str(tmp_path), "u")
    assert entries_from_table(table) == objects


def _refusal(fio: FileIO, d: str, name: str) -> tuple[type, str]:
    with pytest.raises(PaimonError) as obj:
        ManifestFile(fio, d).read(name)
    with pytest.raises(PaimonError) as col:
        read_manifest_table(fio, d, name)
    assert (type(col.value), str(col.value)) == (type(obj.value), str(obj.value))
    return type(obj.value), str(obj.value)


def _write_records(fio: FileIO, tmp_path: Path, records: list[dict], schema: object = MANIFEST_SCHEMA) -> str:
    fio.write_bytes(join(str(tmp_path), "m"), write_avro(schema, records, codec="null"))
    return "m"


def _records() -> list[dict]:
    return [entry_to_record(e) for e in _varied_entries()]


@pytest.mark.parametrize(("mutate", "kind", "match"), [
    (lambda r: r.update(_VERSION=3), NotYetSupported, "_VERSION 3"),
    (lambda r: r.update(_VERSION=1), CorruptMetadata, "_VERSION 1"),
    (lambda r: r.update(_KIND=7), CorruptMetadata, "malformed record"),
    (lambda r: r["_FILE"].update(_FILE_NAME="../snapshot/snapshot-1"), CorruptMetadata, "is a path"),
    (lambda r: r["_FILE"].update(_FILE_NAME=""), CorruptMetadata, "is empty"),
    (lambda r: r["_FILE"].update(_FILE_NAME="a\x01b"), CorruptMetadata, "control characters"),
    (lambda r: r["_FILE"].update(_FILE_NAME="x" * 300), CorruptMetadata, "longer than"),
    (lambda r: r["_FILE"].update(_EXTRA_FILES=["ok", "..\\evil"]), CorruptMetadata, "_EXTRA_FILES entry"),
    (lambda r: r["_FILE"].update(_EXTRA_FILES=[".."]), CorruptMetadata, "_EXTRA_FILES entry"),
])
def test_refusals_match_object_path(fio: FileIO, tmp_path: Path, mutate, kind: type, match: str) -> None:
    records = _records()
    mutate(records[2])
    got = _refusal(fio, str(tmp_path), _write_records(fio, tmp_path, records))
    assert got[0] is kind and match in got[1]


def test_unknown_field_refused_by_name_or_read_when_null(fio: FileIO, tmp_path: Path) -> None:
    s = copy.deepcopy(MANIFEST_SCHEMA)
    s["fields"][5]["type"]["fields"].append({"name": "_NEWER_FIELD", "type": ["null", "long"], "default": None})
    records = _records()
    records[1]["_FILE"]["_NEWER_FIELD"] = 5
    name = _write_records(fio, tmp_path, records, s)
    assert _refusal(fio, str(tmp_path), name) == (
        NotYetSupported, f"{join(str(tmp_path), 'm')}: manifest field _FILE._NEWER_FIELD (written by a newer Paimon) "
                         "is not supported")
    records[1]["_FILE"]["_NEWER_FIELD"] = None
    objects, table = _both(fio, str(tmp_path), _write_records(fio, tmp_path, records, s))
    assert entries_from_table(table) == objects


def test_garbage_truncated_and_missing(fio: FileIO, tmp_path: Path) -> None:
    fio.write_bytes(join(str(tmp_path), "junk"), b"PAR1 not avro")
    assert _refusal(fio, str(tmp_path), "junk")[0] is CorruptMetadata
    data = write_avro(MANIFEST_SCHEMA, _records() * 50, codec="zstandard")
    fio.write_bytes(join(str(tmp_path), "cut"), data[: len(data) // 2])
    assert _refusal(fio, str(tmp_path), "cut")[0] is CorruptMetadata
    with pytest.raises(MissingMetadata):
        read_manifest_table(fio, str(tmp_path), "absent")


def test_projection_and_iteration_order(fio: FileIO, tmp_path: Path) -> None:
    mf = ManifestFile(fio, str(tmp_path), PART_TYPE)
    metas = [mf.write(_varied_entries()[i:i + 2], schema_id=0) for i in (0, 2)]
    tables = list(iter_manifest_tables(fio, str(tmp_path), metas, columns=["_KIND", "_FILE_NAME"]))
    assert [t.column_names for t in tables] == [["_KIND", "_FILE_NAME"]] * 2
    assert [n for t in tables for n in t.column("_FILE_NAME").to_pylist()] == [
        e.file.file_name for e in _varied_entries()]


# --- merge --------------------------------------------------------------------------------

_NAMES = st.sampled_from(["a", "b", "c"])


@st.composite
def _event(draw: st.DrawFn) -> ManifestEntry:
    f = _file(draw(_NAMES), level=draw(st.sampled_from([0, 5])), extra_files=draw(st.sampled_from([(), ("i",)])),
              embedded_index=draw(st.sampled_from([None, b"x"])), external_path=draw(st.sampled_from([None, "s3://e"])),
              file_size=draw(st.integers(0, 3)))
    return _entry(draw(st.sampled_from([FileKind.ADD, FileKind.DELETE])), [draw(st.sampled_from(["p", "q"])), 1],
                  draw(st.sampled_from([0, 1])), f)


def _table(entries: list[ManifestEntry], fio: FileIO, d: str) -> pa.Table:
    meta = ManifestFile(fio, d, PART_TYPE, codec="null").write(entries, schema_id=0)
    return read_manifest_table(fio, d, meta.file_name)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_event(), max_size=12), max_size=4))
def test_merge_live_is_merge_entries(manifests: list) -> None:
    raws = [write_avro(MANIFEST_SCHEMA, [entry_to_record(e) for e in m], codec="null") for m in manifests]
    tables = manifest_tables_from_bytes(raws, [f"m{i}" for i in range(len(raws))])  # one decode call
    expected = merge_entries([e for m in manifests for e in m])
    assert entries_from_table(merge_live(tables)) == expected


def test_merge_level_upgrade_and_readd(fio: FileIO, tmp_path: Path) -> None:
    a0, a5 = _file("data-a.orc", level=0), _file("data-a.orc", level=5)
    b = _file("data-b.orc")
    first = [_entry(FileKind.ADD, ["d", 1], 0, a0), _entry(FileKind.ADD, ["d", 1], 0, b)]
    second = [_entry(FileKind.DELETE, ["d", 1], 0, a0), _entry(FileKind.ADD, ["d", 1], 0, a5),
              _entry(FileKind.DELETE, ["d", 1], 0, b), _entry(FileKind.ADD, ["d", 1], 0, b),
              _entry(FileKind.DELETE, ["d", 1], 1, _file("never-added.orc"))]
    live = entries_from_table(merge_live([_table(first, fio, str(tmp_path)), _table(second, fio, str(tmp_path))]))
    assert live == merge_entries(first + second)
    assert [(e.file.file_name, e.file.level) for e in live] == [("data-a.orc", 5), ("data-b.orc", 0)]
    assert merge_live([]).num_rows == 0


# --- batches: several manifests per polars-avro call -----------------------------------------


def _metas(fio: FileIO, tmp_path: Path, files: dict[str, bytes]) -> list[ManifestFileMeta]:
    for name, data in files.items():
        fio.write_bytes(join(str(tmp_path), name), data)
    return [ManifestFileMeta(name, len(data), 0, 0, SimpleStats.empty(), 0) for name, data in files.items()]


def _mixed_files() -> dict[str, bytes]:
    entries = _varied_entries()
    return {
        "m-zstd": write_avro(MANIFEST_SCHEMA, [entry_to_record(e) for e in entries]),
        "m-old": write_avro(_schema_with_file_fields(15), [_old_record(15)] * 2, codec="snappy"),
        "m-empty": write_avro(MANIFEST_SCHEMA, []),
        "m-null": write_avro(MANIFEST_SCHEMA, [entry_to_record(e) for e in entries[1:]] * 7, codec="null"),
        "m-union": write_avro(["null", _schema_with_file_fields(13)], [_old_record(13)], codec="snappy"),
        "m-again": write_avro(MANIFEST_SCHEMA, [entry_to_record(e) for e in entries[:2]], codec="deflate"),
    }


def test_batched_decode_equals_file_by_file(fio: FileIO, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _mixed_files()
    files["m-zstd2"] = files["m-zstd"]  # two runs of the current layout: m-null .. m-zstd2
    files["m-zstd3"] = files["m-again"]
    metas = _metas(fio, tmp_path, files)
    expected = [ManifestFile(fio, str(tmp_path)).read(m.file_name) for m in metas]
    decode = columnar._decode
    calls: list[int] = []
    monkeypatch.setattr(columnar, "_decode", lambda raws: calls.append(len(raws)) or decode(raws))
    for batch in (1, 2, 4, 16):
        monkeypatch.setattr(columnar, "_BATCH", batch)
        calls.clear()
        tables = list(iter_manifest_tables(fio, str(tmp_path), metas))
        assert [entries_from_table(t) for t in tables] == expected
        assert all(t.schema == ENTRY_SCHEMA for t in tables)
    # batches of 1, 2, 4, then 16 files, each cut into runs of one layout:
    # [m-zstd] [m-old (15 fields) | m-empty] [m-null | m-union (0.2: object path) | m-again, m-zstd2] [m-zstd3]
    assert calls == [1, 1, 1, 1, 2, 1]


def test_batch_with_a_bad_file_refuses_as_the_object_path(fio: FileIO, tmp_path: Path) -> None:
    records = _records()
    records[1]["_FILE"]["_FILE_NAME"] = "../../snapshot/snapshot-1"
    files = _mixed_files()
    files["m-bad"] = write_avro(MANIFEST_SCHEMA, records)
    files["m-last"] = files["m-zstd"]
    metas = _metas(fio, tmp_path, files)
    want = _refusal(fio, str(tmp_path), "m-bad")
    with pytest.raises(PaimonError) as got:
        list(iter_manifest_tables(fio, str(tmp_path), metas))
    assert (type(got.value), str(got.value)) == want


def test_batch_with_a_truncated_file(fio: FileIO, tmp_path: Path) -> None:
    files = _mixed_files()
    data = write_avro(MANIFEST_SCHEMA, _records() * 40)
    files["m-cut"] = data[: len(data) - 20]
    metas = _metas(fio, tmp_path, files)
    want = _refusal(fio, str(tmp_path), "m-cut")
    with pytest.raises(CorruptMetadata) as got:
        list(iter_manifest_tables(fio, str(tmp_path), metas))
    assert str(got.value) == want[1]


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard"])
def test_container_info_counts_records(codec: str) -> None:
    records = _records() * 300  # several blocks
    data = write_avro(MANIFEST_SCHEMA, records, codec=codec)
    info = container_info(data)
    assert info is not None and info.records == len(records) and info.schema == MANIFEST_SCHEMA
    assert container_info(write_avro(MANIFEST_SCHEMA, [], codec=codec)).records == 0  # type: ignore[union-attr]
    for cut in (0, 3, 4, 30, len(data) // 2, len(data) - 1):
        assert container_info(data[:cut]) is None
    assert container_info(data + b"\x00") is None


def test_repeated_names_arrow_and_polars_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small inputs count duplicate names with Arrow, large ones with polars: same answer."""
    import numpy as np
    import pyarrow as pa

    from paimon_cli.core.manifest import columnar

    names = pa.chunked_array([pa.array(["a", "b", "a"], pa.large_string()),
                              pa.array(["c", "b", "d", "e"], pa.large_string()), pa.array([], pa.large_string())])
    small = columnar._repeated(names)
    monkeypatch.setattr(columnar, "_ARROW_DUPLICATES_UP_TO", 0)
    assert small.tolist() == columnar._repeated(names).tolist() == [True, True, True, False, True, False, False]
    assert isinstance(small, np.ndarray)


def test_native_decode_is_what_polars_avro_read_avro_decodes() -> None:
    """The Rust decoder called without polars (``utils.avro_native``) gives, normalised, the
    table ``polars_avro.read_avro`` gives: every codec, old layouts, 0.2-era NULL stats
    records, several files in one call, several record batches."""
    import io

    from paimon_cli.core.utils.avro_native import read_avro_arrow
    from paimon_cli.core.utils.native import polars_avro

    s = _schema_with_file_fields(13)
    s["fields"][5]["type"] = ["null", s["fields"][5]["type"]]
    for f in s["fields"][5]["type"][1]["fields"]:
        if f["name"] in ("_KEY_STATS", "_VALUE_STATS"):
            f["type"] = ["null", f["type"]]
    nullable = _old_record(13)
    nullable["_FILE"]["_KEY_STATS"] = None
    runs = [[write_avro(MANIFEST_SCHEMA, _records() * n, codec=codec) for n in (1, 40, 9000)]
            for codec in ("null", "deflate", "snappy", "zstandard")]
    runs += [[write_avro(_schema_with_file_fields(n), [_old_record(n)] * 3, codec="snappy")] for n in (13, 15, 18, 21)]
    runs.append([write_avro(s, [nullable, _old_record(13)], codec="snappy")])
    for raws in runs:
        direct = read_avro_arrow(raws)
        via_polars = polars_avro.read_avro([io.BytesIO(r) for r in raws]).to_arrow()
        assert direct is not None and direct.num_rows == via_polars.num_rows
        normalised = columnar._normalise(direct)
        assert normalised.equals(columnar._normalise(via_polars)) and normalised.schema == ENTRY_SCHEMA
    assert read_avro_arrow([write_avro(MANIFEST_SCHEMA, [])]).num_rows == 0  # type: ignore[union-attr]


def test_without_the_native_decoder_polars_avro_decodes(fio: FileIO, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Should polars-avro's private classes move (the direct call raises or finds nothing),
    manifests decode through ``polars_avro.read_avro`` into the same tables."""
    from paimon_cli.core.utils import avro_native

    metas = _metas(fio, tmp_path, _mixed_files())
    expected = list(iter_manifest_tables(fio, str(tmp_path), metas))
    used: list[int] = []

    def moved(raws: list[bytes]) -> None:
        used.append(len(raws))
        raise TypeError("AvroSource() takes 2 arguments")

    for broken in (moved, lambda raws: used.append(len(raws))):
        used.clear()
        monkeypatch.setattr(avro_native, "read_avro_arrow", broken)
        tables = list(iter_manifest_tables(fio, str(tmp_path), metas))
        assert used and all(a.equals(b) for a, b in zip(tables, expected, strict=True))
        assert len(tables) == len(expected)


def test_decoding_manifests_does_not_import_polars(tmp_path: Path) -> None:
    """polars (~0.2 s of start-up) is not imported to decode manifests columnar."""
    code = (
        "import sys\n"
        "from paimon_cli.core.manifest import columnar\n"
        "from paimon_cli.core.manifest.avro import write_avro\n"
        "from paimon_cli.core.manifest.manifest import MANIFEST_SCHEMA, entry_to_record\n"
        "from tests.core.test_manifest_columnar import _varied_entries\n"
        "raw = write_avro(MANIFEST_SCHEMA, [entry_to_record(e) for e in _varied_entries()] * 100)\n"
        "calls = []\n"
        "decode = columnar._decode\n"
        "columnar._decode = lambda raws: calls.append(1) or decode(raws)\n"
        "[table] = columnar.manifest_tables_from_bytes([raw], ['m'])\n"
        "print(table.num_rows, len(calls), 'polars' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root).stdout
    assert out.split() == ["400", "1", "False"]
