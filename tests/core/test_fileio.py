"""core/io/fileio.py on the local disk: path helpers, storage options, write-if-absent."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from paimon_cli.core.errors import CorruptMetadata, InvalidInput, NotFound, PaimonError
from paimon_cli.core.io.fileio import (
    FileIO,
    basename,
    join,
    load_file_io,
    parent,
    parse_storage_options,
)

# -- path helpers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "parts", "expected"),
    [
        ("/a/b", ("c", "d"), "/a/b/c/d"),
        ("/a/b/", ("/c/", "d/"), "/a/b/c/d"),
        ("/", ("a",), "/a"),
        ("", ("a", "b"), "a/b"),
        ("/a", ("", "b"), "/a/b"),
        ("s3://bucket/wh", ("db.db", "t"), "s3://bucket/wh/db.db/t"),
        ("s3://bucket/wh/", ("snapshot/",), "s3://bucket/wh/snapshot"),
        ("file:///tmp/wh", ("x",), "file:///tmp/wh/x"),
    ],
)
def test_join(base: str, parts: tuple[str, ...], expected: str) -> None:
    assert join(base, *parts) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/a/b/c", "/a/b"),
        ("/a/b/c/", "/a/b"),
        ("s3://bucket/wh/t", "s3://bucket/wh"),
        ("file:///tmp/wh/t", "file:///tmp/wh"),
    ],
)
def test_parent(path: str, expected: str) -> None:
    assert parent(path) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/a/b/snapshot-3", "snapshot-3"), ("s3://bucket/wh/t/", "t"), ("name", "name")],
)
def test_basename(path: str, expected: str) -> None:
    assert basename(path) == expected


# -- storage options ------------------------------------------------------------------------


def test_parse_storage_options_nests_dotted_keys_and_reads_booleans() -> None:
    opts = parse_storage_options([
        "key=AK",
        "secret=a=b==",  # only the first '=' splits
        "client_kwargs.endpoint_url=http://127.0.0.1:9000",
        "client_kwargs.region_name=us-east-1",
        "config_kwargs.s3.addressing_style=path",
        "anon=false",
        "use_ssl=TRUE",
    ])
    assert opts == {
        "key": "AK",
        "secret": "a=b==",
        "client_kwargs": {"endpoint_url": "http://127.0.0.1:9000", "region_name": "us-east-1"},
        "config_kwargs": {"s3": {"addressing_style": "path"}},
        "anon": False,
        "use_ssl": True,
    }


@pytest.mark.parametrize("bad", [["novalue"], ["=x"], ["a=1", "a.b=2"]])
def test_parse_storage_options_rejects_bad_pairs(bad: list[str]) -> None:
    with pytest.raises(InvalidInput) as info:
        parse_storage_options(bad)
    assert "--fs-option" in str(info.value)
    assert "\n" not in str(info.value)


def test_parse_storage_options_rejects_scalar_over_group() -> None:
    with pytest.raises(InvalidInput):
        parse_storage_options(["a.b=2", "a=1"])


def test_load_file_io_merges_env_options_explicit_win(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    monkeypatch.setenv("PAIMON_FS_OPTIONS", "auto_mkdir=true,x.y=env\nx.z=env")
    io = load_file_io(str(tmp_path), {"x": {"y": "explicit"}})
    assert io.storage_options == {"auto_mkdir": True, "x": {"y": "explicit", "z": "env"}}
    assert io.is_local and not io.is_object_store


def test_unknown_scheme_is_invalid_input() -> None:
    with pytest.raises(InvalidInput):
        FileIO("nosuchproto://bucket/wh")


# -- reads ----------------------------------------------------------------------------------


@pytest.fixture(params=["plain", "file-uri"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same directory as a plain path and as a file:// URI."""
    return str(tmp_path) if request.param == "plain" else f"file://{tmp_path}"


def test_read_bytes_missing_is_not_found(root: str) -> None:
    io = FileIO(root)
    missing = join(root, "snapshot", "snapshot-9")
    with pytest.raises(NotFound) as info:
        io.read_bytes(missing)
    assert missing in str(info.value)
    assert info.value.exit_code == 3
    with pytest.raises(NotFound):
        io.file_size(missing)
    with pytest.raises(NotFound):
        io.open_input(missing)


@pytest.mark.parametrize("form", ["plain", "file:/", "file://"])
def test_open_arrow_input_takes_every_local_path_form(tmp_path: Path, form: str) -> None:
    """Java records external data files as `file:/x` URIs; pyarrow opens the local file."""
    (tmp_path / "f.bin").write_bytes(b"abc")
    plain = str(tmp_path / "f.bin")
    path = plain if form == "plain" else f"{form.rstrip('/')}{plain}" if form == "file:/" else f"file://{plain}"
    with FileIO(str(tmp_path)).open_arrow_input(path) as f:
        assert f.read() == b"abc"


def test_read_bytes_of_directory_is_not_found(root: str) -> None:
    io = FileIO(root)
    io.mkdirs(join(root, "d"))
    with pytest.raises(NotFound):
        io.read_bytes(join(root, "d"))


def test_read_text_rejects_non_utf8(root: str) -> None:
    io = FileIO(root)
    p = join(root, "bad.json")
    io.write_bytes(p, b'{"a": "\xff"}')
    with pytest.raises(CorruptMetadata) as info:
        io.read_text(p)
    assert info.value.path == p


def test_write_read_exists_size_delete(root: str) -> None:
    io = FileIO(root)
    p = join(root, "a", "b", "file.bin")  # parents are created
    io.write_bytes(p, b"hello")
    assert io.exists(p) and not io.is_dir(p) and io.is_dir(join(root, "a", "b"))
    assert io.read_bytes(p) == b"hello"
    assert io.read_text(p) == "hello"
    assert io.file_size(p) == 5
    with io.open_input(p) as f:
        f.seek(1)
        assert f.read(3) == b"ell"
    io.write_bytes(p, b"bye")  # overwrite=True replaces
    assert io.read_bytes(p) == b"bye"
    assert io.list_names(join(root, "a", "b")) == ["file.bin"]  # no temp file left behind
    io.delete(p)
    assert not io.exists(p)
    io.delete(p)  # deleting a missing file is fine
    io.delete_dir(join(root, "a"))
    assert not io.exists(join(root, "a"))
    io.delete_dir(join(root, "a"))


def test_write_bytes_without_overwrite_refuses_existing(root: str) -> None:
    io = FileIO(root)
    p = join(root, "tag", "tag-t1")
    io.write_bytes(p, b"1", overwrite=False)
    with pytest.raises(PaimonError) as info:
        io.write_bytes(p, b"2", overwrite=False)
    assert p in str(info.value)
    assert io.read_bytes(p) == b"1"


def test_list_status_missing_directory_is_empty(root: str) -> None:
    io = FileIO(root)
    assert io.list_status(join(root, "no", "such", "dir")) == []
    assert io.list_names(join(root, "no")) == []


def test_list_status_reports_entries(root: str) -> None:
    io = FileIO(root)
    d = join(root, "snapshot")
    io.write_bytes(join(d, "snapshot-1"), b"abc")
    io.write_bytes(join(d, "LATEST"), b"1")
    io.mkdirs(join(d, "sub"))
    st = {s.name: s for s in io.list_status(d)}
    assert set(st) == {"snapshot-1", "LATEST", "sub"}
    assert st["snapshot-1"].path == join(d, "snapshot-1")  # keeps the caller's path form
    assert st["snapshot-1"].size == 3 and not st["snapshot-1"].is_dir
    assert st["sub"].is_dir
    assert st["LATEST"].mtime_millis is not None and st["LATEST"].mtime_millis > 1_500_000_000_000


# -- write-if-absent ------------------------------------------------------------------------


def test_try_write_atomic_second_writer_loses(root: str) -> None:
    io = FileIO(root)
    p = join(root, "snapshot", "snapshot-1")
    assert io.try_write_atomic(p, b"first") is True
    assert io.try_write_atomic(p, b"second") is False
    assert io.read_bytes(p) == b"first"
    assert io.list_names(join(root, "snapshot")) == ["snapshot-1"]  # no *.tmp left


def test_try_write_atomic_empty_payload(root: str) -> None:
    io = FileIO(root)
    p = join(root, "EMPTY")
    assert io.try_write_atomic(p, b"") is True
    assert io.try_write_atomic(p, b"x") is False
    assert io.read_bytes(p) == b""


def test_try_write_atomic_race_has_one_winner(tmp_path: Path) -> None:
    io = FileIO(str(tmp_path))
    n = 16
    for attempt in range(5):
        p = join(str(tmp_path), "race", f"snapshot-{attempt}")
        barrier = threading.Barrier(n)
        results: dict[int, bool] = {}

        def writer(i: int, barrier: threading.Barrier = barrier, results: dict[int, bool] = results,
                   p: str = p) -> None:
            barrier.wait()
            results[i] = io.try_write_atomic(p, f"writer-{i}".encode() * 1000)

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [i for i, ok in results.items() if ok]
        assert len(winners) == 1, results
        assert io.read_bytes(p) == f"writer-{winners[0]}".encode() * 1000  # whole, never mixed
    assert sorted(io.list_names(join(str(tmp_path), "race"))) == [f"snapshot-{i}" for i in range(5)]


# -- a local warehouse answers through os until fsspec is needed (start-up, issue 28) --------


def test_local_reads_answer_as_fsspec_without_building_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fsspec

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.json").write_bytes(b'{"a": 1}')
    (tmp_path / "link").symlink_to(tmp_path / "d" / "f.json")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    fio = FileIO(str(tmp_path))
    ref = fsspec.filesystem("file")
    paths = [str(tmp_path / p) for p in ("d", "d/", "d/f.json", "d/f.json/", "link", "dangling", "missing",
                                          "d/missing/x")]
    paths += ["d", "./d/f.json", "~/d/f.json", "~/missing", f"file://{tmp_path}/d/f.json", f"file:{tmp_path}/d"]
    for p in paths:
        assert fio.exists(p) == ref.exists(fio._p(p)), p
        assert fio.is_dir(p) == ref.isdir(fio._p(p)), p
    assert fio.read_bytes(f"{tmp_path}/d/f.json") == fio.read_bytes("~/link") == b'{"a": 1}'
    with pytest.raises(NotFound, match="no such file"):
        fio.read_bytes(str(tmp_path / "missing"))
    with pytest.raises(NotFound, match="is a directory"):
        fio.read_bytes(str(tmp_path / "d"))
    assert fio._fs is None  # none of the above built fsspec's filesystem
    assert fio.list_names(str(tmp_path / "d")) == ["f.json"]
    assert sorted(fio.glob(f"{tmp_path}/d/*.json")) == [str(tmp_path / "d" / "f.json")]  # fsspec, built now
    assert fio._fs is not None


def test_local_with_options_or_a_replaced_fs_goes_through_fsspec(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x")
    assert FileIO(str(tmp_path), {"auto_mkdir": True})._fs is not None  # options are checked at once
    fio = FileIO(str(tmp_path))

    class Failing:
        def exists(self, path: str) -> bool:
            raise PermissionError(path)

        def isdir(self, path: str) -> bool:
            raise FileNotFoundError(path)

        def open(self, path: str, mode: str) -> object:
            raise PermissionError(path)

    fio.fs = Failing()  # a test double or another backend: its answers, not os's
    assert fio.exists(str(tmp_path / "f")) is False
    assert fio.is_dir(str(tmp_path)) is False
    with pytest.raises(PaimonError, match="permission denied"):
        fio.read_bytes(str(tmp_path / "f"))


# -- data file output -------------------------------------------------------------------------


def test_open_arrow_output_local_is_native_and_builds_no_fsspec(tmp_path: Path) -> None:
    """Data files (Parquet/ORC) are encoded into a native stream: no GIL per page, no fsspec."""
    import pyarrow as pa

    fio = FileIO(str(tmp_path))
    p = join(str(tmp_path), "bucket-0", "sub", "data-1.parquet")  # parents are created
    out = fio.open_arrow_output(p)
    assert isinstance(out, pa.NativeFile)
    out.write(b"abc")
    assert out.tell() == 3
    out.close()
    assert (tmp_path / "bucket-0" / "sub" / "data-1.parquet").read_bytes() == b"abc"
    fio.mkdirs(join(str(tmp_path), "index"))
    assert (tmp_path / "index").is_dir()
    assert fio._fs is None  # neither call built fsspec's filesystem


def test_open_arrow_output_errors_are_open_outputs(tmp_path: Path) -> None:
    """A path the native open refuses gets open_output's one-line error (exit 4), not pyarrow's."""
    fio = FileIO(str(tmp_path))
    (tmp_path / "d").mkdir()
    for p in (str(tmp_path / "d"), join(str(tmp_path), "x" * 300 + ".parquet")):
        with pytest.raises(InvalidInput) as native:
            fio.open_arrow_output(p)
        with pytest.raises(InvalidInput) as plain:
            fio.open_output(p)
        assert str(native.value) == str(plain.value)


def test_open_arrow_output_with_a_replaced_fs_uses_it(tmp_path: Path) -> None:
    fio = FileIO(str(tmp_path))
    opened: list[tuple[str, str]] = []

    class Recording:
        def makedirs(self, path: str, exist_ok: bool = False) -> None:
            opened.append(("mkdir", path))

        def open(self, path: str, mode: str) -> object:
            opened.append((mode, path))
            return object()

    fio.fs = Recording()
    p = join(str(tmp_path), "b", "f.parquet")
    fio.open_arrow_output(p)
    assert ("wb", p) in opened
