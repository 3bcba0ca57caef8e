"""FileIO: every byte the library reads or writes goes through here (fsspec underneath).

Paths are plain strings in the form the user gave the warehouse (``/abs/path``,
``file:///abs/path``, ``s3://bucket/key``); :func:`join` extends them. Nothing else in the
library calls ``open()``, ``os.*`` or fsspec.
"""

from __future__ import annotations

import copy
import errno
import os
import posixpath
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import IO, TYPE_CHECKING, Any

from ..errors import CorruptMetadata, InvalidInput, NotFound, OutcomeUnknown, PaimonError, UnsafeRefused
from ..utils.values import FrozenValue, set_field

if TYPE_CHECKING:
    import pyarrow as pa

_LOCAL_PROTOCOLS = {"file", "local"}
# waits (ms) between the rounds of a write-if-absent whose outcome is still open
PUBLISH_RETRY_WAITS_MS: tuple[float, ...] = (50, 100, 200, 400, 800, 1600)


# schemes whose write-if-absent is verified (server-side precondition): commits go only there
_S3_SCHEMES = ("s3", "s3a", "s3n")
_GCS_SCHEMES = ("gs", "gcs")
_AZURE_SCHEMES = ("az", "abfs", "abfss")
COMMIT_FILESYSTEMS = "local disks, S3 (s3://), GCS (gs://, gcs://) and Azure Blob (az://, abfs://, abfss://)"


class ConditionalRequestConflict(OSError):
    """S3 409: a concurrent conditional put of the same key is in progress (outcome open)."""


class FileStatus(FrozenValue):
    """One directory entry, as :meth:`FileIO.list_status` reports it."""

    path: str
    name: str
    size: int
    is_dir: bool
    mtime_millis: int | None
    FIELDS = __match_args__ = ("path", "name", "size", "is_dir", "mtime_millis")

    def __init__(self, path: str, name: str, size: int, is_dir: bool, mtime_millis: int | None) -> None:
        set_field(self, "path", path)
        set_field(self, "name", name)
        set_field(self, "size", size)
        set_field(self, "is_dir", is_dir)
        set_field(self, "mtime_millis", mtime_millis)


def join(base: str, *parts: str) -> str:
    """Join path segments with ``/`` (URIs keep their scheme)."""
    out = base.rstrip("/") if base not in ("/", "") else base
    for p in parts:
        p = p.strip("/")
        if not p:
            continue
        out = p if out == "" else (out + p if out.endswith("/") else out + "/" + p)
    return out


def parent(path: str) -> str:
    scheme, rest = _split_scheme(path)
    head = posixpath.dirname(rest.rstrip("/"))
    return f"{scheme}://{head}" if scheme else head


def basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _split_scheme(path: str) -> tuple[str, str]:
    if "://" in path:
        scheme, rest = path.split("://", 1)
        return scheme, rest
    return "", path


def parse_storage_options(pairs: Iterable[str]) -> dict[str, Any]:
    """``k=v`` strings (from ``--fs-option``) to a storage-options dict; dotted keys nest.

    ``client_kwargs.endpoint_url=http://...`` becomes ``{"client_kwargs": {"endpoint_url": ...}}``
    because that is how s3fs and most fsspec backends take nested settings.
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise InvalidInput(f"--fs-option {pair!r}: expected key=value")
        key, value = pair.split("=", 1)
        key = key.strip()
        if not key:
            raise InvalidInput(f"--fs-option {pair!r}: empty key")
        val: Any = value
        if value.lower() in ("true", "false"):
            val = value.lower() == "true"
        node = out
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise InvalidInput(f"--fs-option {pair!r}: {p} is both a value and a group")
        if isinstance(node.get(parts[-1]), dict):
            raise InvalidInput(f"--fs-option {pair!r}: {parts[-1]} is both a value and a group")
        node[parts[-1]] = val
    return out


class FileIO:
    """A filesystem bound to one warehouse URI and its storage options."""

    def __init__(self, root: str, storage_options: dict[str, Any] | None = None) -> None:
        self.root = root
        self.storage_options = dict(storage_options or {})
        scheme, _ = _split_scheme(root)
        self.scheme = scheme or "file"
        # A local warehouse without options reads through os first and builds fsspec's
        # filesystem on the first call that needs it: fsspec's import (asyncio, ssl,
        # importlib.metadata, codecs; ~0.04 s) is most of a small read's I/O cost.
        self._fs: Any = None
        if not (self.is_local and not self.storage_options):
            self._fs = self._new_fs(self.storage_options)

    @property
    def fs(self) -> Any:
        """The fsspec filesystem (built on first use for a plain local warehouse)."""
        if self._fs is None:
            self._fs = self._new_fs(self.storage_options)
        return self._fs

    @fs.setter
    def fs(self, value: Any) -> None:
        self._fs = value

    @property
    def _plain_local(self) -> bool:
        """Local with fsspec's ``LocalFileSystem`` semantics, so ``os`` answers the same."""
        return self._fs is None or (self.is_local and type(self._fs).__name__ == "LocalFileSystem")

    def _os_path(self, path: str) -> str:
        """``path`` as fsspec's ``LocalFileSystem`` resolves it (``~`` expanded, no trailing
        ``/``), for the ``os`` calls that stand in for it."""
        p = self._p(path)
        if p.startswith("~"):
            p = os.path.expanduser(p)
        return p.rstrip("/") or p

    def _new_fs(self, storage_options: dict[str, Any]) -> Any:
        import fsspec

        fs_options = dict(storage_options)
        if self.is_object_store:
            # fsspec shares one instance per option set and caches listings in it; Paimon
            # metadata changes under other writers, so a cached listing (or exists()) would lie.
            fs_options.setdefault("use_listings_cache", False)
        try:
            return fsspec.filesystem(self.scheme, **fs_options)
        except (ImportError, ValueError) as e:
            raise InvalidInput(f"cannot open filesystem {self.scheme!r} for {self.root}: {e}") from e

    # -- properties ---------------------------------------------------------------------

    @property
    def is_local(self) -> bool:
        return self.scheme in _LOCAL_PROTOCOLS

    @property
    def is_object_store(self) -> bool:
        return self.scheme in {"s3", "s3a", "s3n", "gs", "gcs", "oss", "az", "abfs", "abfss", "adl", "memory"}

    def _p(self, path: str) -> str:
        """The path in the form the fsspec backend wants."""
        if self.is_local:
            scheme, rest = _split_scheme(path)
            if not scheme and rest.startswith("file:"):  # Java's URI form `file:/tmp/x` (external paths)
                rest = rest[len("file:"):]
            return rest
        return path

    def absolute(self, path: str) -> str:
        """``path`` with a relative local path resolved against the working directory (a
        warehouse given as ``./wh``), to compare locations; other paths unchanged."""
        return os.path.abspath(self._p(path)) if self.is_local else path

    # -- reads --------------------------------------------------------------------------

    def exists(self, path: str) -> bool:
        if self._plain_local:
            return os.path.exists(self._os_path(path))
        try:
            return bool(self.fs.exists(self._p(path)))
        except (FileNotFoundError, PermissionError):
            return False

    def is_dir(self, path: str) -> bool:
        if self._plain_local:
            return os.path.isdir(self._os_path(path))
        try:
            return bool(self.fs.isdir(self._p(path)))
        except FileNotFoundError:
            return False

    def read_bytes(self, path: str) -> bytes:
        try:
            if self.is_object_store:
                # one GET: open() would HEAD first and then GET with If-Match on that ETag,
                # failing whenever another writer replaces the object (e.g. the LATEST hint)
                return bytes(self.fs.cat_file(self._p(path)))
            if self._plain_local:
                with open(self._os_path(path), "rb") as f:
                    return f.read()
            with self.fs.open(self._p(path), "rb") as f:
                return f.read()
        except FileNotFoundError as e:
            raise NotFound(f"{path}: no such file") from e
        except IsADirectoryError as e:
            raise NotFound(f"{path}: is a directory, not a file") from e
        except PermissionError as e:
            raise PaimonError(f"{path}: permission denied") from e

    def read_text(self, path: str) -> str:
        data = self.read_bytes(path)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorruptMetadata(path, f"not UTF-8 text ({e.reason} at byte {e.start})") from e

    def open_input(self, path: str) -> IO[bytes]:
        """A seekable binary stream (pyarrow readers take it directly)."""
        try:
            return self.fs.open(self._p(path), "rb")
        except FileNotFoundError as e:
            raise NotFound(f"{path}: no such file") from e

    def open_arrow_input(self, path: str) -> pa.NativeFile:
        """A random-access file for pyarrow's readers, which read on pyarrow's own threads.

        Local files are opened by pyarrow itself, so those threads never touch a Python
        object: one that still held a Python file while the interpreter exits aborts the
        process ("terminate called without an active exception"). Other stores are wrapped
        Python streams; decode those with ``use_threads=False`` and never through
        ``pyarrow.dataset`` (whose scan outlives the call), so nothing is left running.
        """
        import pyarrow as pa

        if self.is_local:
            try:
                return pa.OSFile(self._p(path), "rb")
            except FileNotFoundError as e:
                raise NotFound(f"{path}: no such file") from e
        return pa.PythonFile(self.open_input(path), mode="r")

    def open_output(self, path: str) -> IO[bytes]:
        """A binary stream for exports (``read --to``); not for table metadata, which must
        be published with :meth:`try_write_atomic`."""
        try:
            if self.is_local:
                self.mkdirs(parent(path))
            return self.fs.open(self._p(path), "wb")
        except (IsADirectoryError, NotADirectoryError, PermissionError, FileExistsError) as e:
            raise InvalidInput(f"{path}: cannot create the file ({e.strerror or e})") from e
        except OSError as e:
            if e.errno != errno.ENAMETOOLONG:
                raise
            raise InvalidInput(f"{path}: cannot create the file: a name in it is longer than the file system "
                               "allows (255 bytes)") from e

    def open_arrow_output(self, path: str) -> Any:
        """A stream for pyarrow's Parquet / ORC writers (data files: unique new names).

        On a plain local disk a native file behind Arrow's own 1 MiB buffer: encoded pages
        reach the disk without taking the GIL once per page (compaction writes from several
        threads) and without building fsspec. Other stores, and any local path the native
        open refuses, go through :meth:`open_output` (its errors and messages).
        """
        if not self._plain_local:
            return self.open_output(path)
        import pyarrow as pa

        p = self._os_path(path)
        try:
            os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
            return pa.BufferedOutputStream(pa.OSFile(p, "wb"), buffer_size=1 << 20)
        except OSError:
            return self.open_output(path)

    def glob(self, pattern: str) -> list[str]:
        """Files (not directories) matching a glob, in sorted order, as paths of this FileIO."""
        matches = sorted(p for p in self.fs.glob(self._p(pattern)) if not self.fs.isdir(p))
        if self.is_local or "://" not in pattern:
            return matches
        scheme = pattern.split("://", 1)[0]
        return [m if "://" in m else f"{scheme}://{m}" for m in matches]

    def file_size(self, path: str) -> int:
        try:
            return int(self.fs.size(self._p(path)))
        except FileNotFoundError as e:
            raise NotFound(f"{path}: no such file") from e

    def list_status(self, directory: str) -> list[FileStatus]:
        """Entries of a directory; a missing directory lists as empty."""
        if self.is_local:
            return self._list_local(directory)
        try:
            entries = self.fs.ls(self._p(directory), detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return []
        out = []
        base = directory.rstrip("/")
        for e in entries:
            name = basename(e["name"])
            if not name or name == basename(base) and e["name"].rstrip("/") == self._p(base).rstrip("/"):
                continue
            mtime = _mtime_millis(e)
            out.append(
                FileStatus(
                    path=join(base, name),
                    name=name,
                    size=int(e.get("size") or 0),
                    is_dir=e.get("type") == "directory",
                    mtime_millis=mtime,
                )
            )
        return out

    def _list_local(self, directory: str) -> list[FileStatus]:
        """``os.scandir``: one syscall batch per directory; fsspec's local ``ls(detail=True)``
        stats every entry through Python and dominated orphan-file listing."""
        base = directory.rstrip("/")
        out = []
        try:
            with os.scandir(self._p(directory)) as it:
                for e in it:
                    try:
                        st = e.stat(follow_symlinks=True)
                        is_dir = e.is_dir(follow_symlinks=True)
                    except FileNotFoundError:
                        continue  # removed while listing
                    out.append(FileStatus(
                        path=join(base, e.name), name=e.name, size=int(st.st_size),
                        is_dir=is_dir, mtime_millis=int(st.st_mtime * 1000),
                    ))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return out

    def list_names(self, directory: str) -> list[str]:
        return [s.name for s in self.list_status(directory)]

    # -- writes -------------------------------------------------------------------------

    def mkdirs(self, path: str) -> None:
        if self.is_object_store:
            return  # object stores have no directories
        if self._plain_local:
            os.makedirs(self._os_path(path), exist_ok=True)  # what LocalFileSystem does, no fsspec import
            return
        self.fs.makedirs(self._p(path), exist_ok=True)

    def write_bytes(self, path: str, data: bytes, overwrite: bool = True) -> None:
        """Plain write (hints, tags, consumers); overwrite=False fails if the file exists
        (and raises :class:`OutcomeUnknown` as :meth:`try_write_atomic` does)."""
        if not overwrite:
            if not self.try_write_atomic(path, data):
                raise PaimonError(f"{path}: already exists")
            return
        if self.is_local:
            self.mkdirs(parent(path))
            # write to a temp name and rename so readers never see a half-written file
            tmp = join(parent(path), f".{basename(path)}.{uuid.uuid4()}.tmp")
            with open(self._p(tmp), "wb") as f:
                f.write(data)
            os.replace(self._p(tmp), self._p(path))
            return
        self.fs.pipe_file(self._p(path), data)

    def write_new_file(self, path: str, data: Any) -> None:
        """Create a NEW file (error if it exists) holding ``data`` (bytes or any buffer, e.g. a
        ``pyarrow.Buffer``, written without a copy).

        For data files only: their names are unique and nothing references them before a
        snapshot commits, so on local disks the content goes straight into the exclusively
        created file (no temp file and link). Metadata must use :meth:`try_write_atomic`.
        """
        if self.is_local:
            self.mkdirs(parent(path))
            try:
                with open(self._p(path), "xb") as f:
                    f.write(memoryview(data))
            except FileExistsError as e:
                raise PaimonError(f"{path}: already exists") from e
            return
        self.write_bytes(path, bytes(data), overwrite=False)

    def try_write_atomic(
        self, path: str, data: bytes, retry_waits_ms: Sequence[float] = PUBLISH_RETRY_WAITS_MS
    ) -> bool:
        """Write-if-absent with a known outcome: True if ``path`` now holds exactly ``data``
        from this call, False if it holds another writer's content.

        The store's own answer is not trusted as final: a request retried under the hood
        (s3fs, gcsfs, azure-core) sees its own landed first try as "exists", and an error, a timeout
        or an S3 409 ``ConditionalRequestConflict`` says nothing about whether the put landed
        or is still landing. So the file is read back and compared; while it is absent after
        a failure the same bytes are put again (harmless: only one put of a key can win), and
        after ``retry_waits_ms`` (the waits between rounds) an unresolved outcome raises
        :class:`OutcomeUnknown`. Any other exception means nothing was written.
        """
        failure: BaseException | None = None
        exists = False  # the store said the key exists: never put again, only read it back
        for attempt in range(len(retry_waits_ms) + 1):
            if attempt:
                time.sleep(retry_waits_ms[attempt - 1] / 1000.0)
            if not exists:
                try:
                    if self._write_if_absent(path, data):
                        return True
                    exists = True
                except UnsafeRefused:
                    if failure is None:
                        raise  # refused before anything was sent
                except Exception as e:  # noqa: BLE001 - any failure leaves the outcome open
                    failure = e
            try:
                return self.read_bytes(path) == data
            except NotFound:
                # local writes are synchronous: nothing is in flight that could still land
                if self.is_local and not exists:
                    assert failure is not None
                    raise failure from failure.__cause__  # the put's own error, not this read's
                if self.is_local and failure is None:
                    return False  # another writer's file, deleted again since
            except Exception as e:  # noqa: BLE001
                failure = e
        cause = f"{type(failure).__name__}: {failure}" if failure is not None else "it vanished after it existed"
        raise OutcomeUnknown(f"{path}: cannot tell whether the write-if-absent landed ({cause})") from failure

    def _write_if_absent(self, path: str, data: bytes) -> bool:
        """One write-if-absent: True if it created ``path``, False if the store says it exists.

        Local disks: write a hidden temp file, then ``link`` it to the target (fails with
        EEXIST instead of silently replacing, unlike rename). Object stores: a conditional
        put (``If-None-Match: *`` on S3 and Azure, ``ifGenerationMatch=0`` on GCS).
        """
        if self.is_local:
            self.mkdirs(parent(path))
            tmp = join(parent(path), f".{basename(path)}.{uuid.uuid4()}.tmp")
            with open(self._p(tmp), "wb") as f:
                f.write(data)
            try:
                os.link(self._p(tmp), self._p(path))
                return True
            except FileExistsError:
                return False
            except OSError as e:
                if e.errno == errno.EEXIST:
                    return False
                raise UnsafeRefused(
                    f"{path}: this filesystem refuses hard links ({e.strerror}), so a "
                    "no-replace publish is impossible; refusing to write"
                ) from e
            finally:
                try:
                    os.unlink(self._p(tmp))
                except FileNotFoundError:
                    pass
        if self.scheme in _S3_SCHEMES:
            return self._s3_put_if_absent(path, data)
        if self.scheme in _GCS_SCHEMES:
            return self._gcs_put_if_absent(path, data)
        if self.scheme in _AZURE_SCHEMES:
            return self._azure_put_if_absent(path, data)
        raise UnsafeRefused(
            f"{path}: no verified write-if-absent for filesystem {self.scheme!r} "
            f"(commits are supported on {COMMIT_FILESYSTEMS}); refusing to publish"
        )

    def _require_conditional_put(self, path: str, lib: str, param: str, spelling: str, since: str = "") -> None:
        """Refuse (nothing sent) when the installed fsspec backend predates its conditional put:
        an unknown keyword would fail, or worse, be swallowed into a plain overwrite."""
        import inspect

        if param not in inspect.signature(self.fs._pipe_file).parameters:
            raise UnsafeRefused(
                f"{path}: this {lib} has no conditional put (pipe_file {spelling}); "
                f"upgrade {lib}{f' (>= {since})' if since else ''} to publish safely"
            )

    def _s3_put_if_absent(self, path: str, data: bytes) -> bool:
        """One PutObject carrying ``If-None-Match: *``: the server decides the race.

        Not ``open(path, "xb")``: s3fs commits an empty "xb" file with an unconditional
        touch(), which would overwrite a winner's file.
        """
        self._require_conditional_put(path, "s3fs", "mode", "mode='create'")
        try:
            self.fs.pipe_file(self._p(path), data, mode="create")
            return True
        except FileExistsError:
            return False
        except OSError as e:
            code = getattr(e.__cause__, "response", {}).get("Error", {}).get("Code")
            if code == "ConditionalRequestConflict":
                # 409: another conditional put of this key is in flight -- maybe our own first
                # try, so neither "ours" nor "theirs": try_write_atomic reads back and decides
                raise ConditionalRequestConflict(f"{path}: S3 answered 409 ConditionalRequestConflict") from e
            raise

    def _gcs_put_if_absent(self, path: str, data: bytes) -> bool:
        """One multipart upload carrying ``ifGenerationMatch=0``: GCS decides the race (412).

        Not ``open(path, "xb")``: that goes through a resumable upload, which fake-gcs-server
        (the emulator the tests verify against) does not check preconditions on.
        """
        self._require_conditional_put(path, "gcsfs", "mode", "mode='create'", "2024.12.0")
        try:
            self.fs.pipe_file(self._p(path), data, mode="create")
            return True
        except FileExistsError:
            return False

    def _azure_put_if_absent(self, path: str, data: bytes) -> bool:
        """One Put Blob carrying ``If-None-Match: *`` (adlfs ``overwrite=False``).

        Not ``open(path, "xb")``: adlfs wraps every other failure of that path in a
        ``RuntimeError``, hiding whether the blob landed.
        """
        self._require_conditional_put(path, "adlfs", "overwrite", "overwrite=False", "2024.12.0")
        from azure.core.exceptions import ResourceExistsError

        try:
            self.fs.pipe_file(self._p(path), data, overwrite=False)
            return True
        except (FileExistsError, ResourceExistsError):  # adlfs maps 409 BlobAlreadyExists to the former
            return False

    def delete(self, path: str) -> None:
        try:
            self.fs.rm_file(self._p(path))
        except FileNotFoundError:
            pass

    def delete_empty_dir(self, path: str) -> bool:
        """Remove ``path`` only if it is an empty directory (object stores have none)."""
        if not self.is_local:
            return False
        try:
            os.rmdir(self._p(path))
            return True
        except OSError:
            return False

    def delete_dir(self, path: str) -> None:
        try:
            self.fs.rm(self._p(path), recursive=True)
        except FileNotFoundError:
            pass

    def replace_file(self, src: str, dst: str) -> None:
        """Move the file ``src`` onto ``dst`` (replacing it): one rename on a local filesystem,
        a copy and delete on an object store. For exports, not for table files."""
        if self.is_local:
            os.replace(self._p(src), self._p(dst))
        else:
            self.fs.mv(self._p(src), self._p(dst))

    def rename_dir(self, src: str, dst: str) -> None:
        """Rename a directory in one step (local filesystems only: an object store would copy it
        file by file, which readers could see half done); ``dst`` must not exist."""
        if not self.is_local:
            raise UnsafeRefused(f"{src}: no atomic directory rename on {self.scheme}://")
        if self.exists(dst):
            raise PaimonError(f"{dst}: already exists")
        self.mkdirs(parent(dst))
        os.rename(self._p(src), self._p(dst))

    def rename_file(self, src: str, dst: str) -> None:
        """Move one file in one step (local filesystems only, as :meth:`rename_dir`); ``dst``
        must not exist and its directory is made."""
        if not self.is_local:
            raise UnsafeRefused(f"{src}: no atomic file rename on {self.scheme}://")
        if self.exists(dst):
            raise PaimonError(f"{dst}: already exists")
        self.mkdirs(parent(dst))
        os.rename(self._p(src), self._p(dst))


class RefreshingFileIO(FileIO):
    """A FileIO whose credentials expire (a REST catalog's data token): ``credentials()`` is
    asked before every filesystem call and answers the options to lay over ``storage_options``
    -- the same object while they hold, a new one once renewed -- so the filesystem is rebuilt
    with fresh credentials and a long job (compaction, ``maintain``) outlives any one of them.
    Its options are a moment's; they do not travel (a Spark executor could not renew them)."""

    def __init__(self, root: str, storage_options: dict[str, Any] | None,
                 credentials: Callable[[], dict[str, Any]]) -> None:
        self._credentials = credentials
        self._guard = threading.Lock()
        self._base = dict(storage_options or {})
        self._current = credentials()
        super().__init__(root, self._over(self._current))

    def _over(self, creds: dict[str, Any]) -> dict[str, Any]:
        merged = copy.deepcopy(self._base)
        _deep_update(merged, creds)
        return merged

    @property
    def fs(self) -> Any:
        creds = self._credentials()
        if creds is not self._current:
            with self._guard:
                if creds is not self._current:
                    options = self._over(creds)
                    self._fs = self._new_fs(options)
                    self.storage_options = options
                    self._current = creds
        return self._fs

    @fs.setter
    def fs(self, value: Any) -> None:
        self._fs = value


def _mtime_millis(entry: dict[str, Any]) -> int | None:
    for key in ("mtime", "LastModified", "last_modified", "updated", "created"):
        v = entry.get(key)
        if v is None:
            continue
        if isinstance(v, (int, float)):
            return int(v * 1000) if v < 1e11 else int(v)
        if hasattr(v, "timestamp"):
            return int(v.timestamp() * 1000)
    return None


def load_file_io(warehouse: str, storage_options: dict[str, Any] | None = None) -> FileIO:
    """A FileIO for the warehouse; storage options also come from ``PAIMON_FS_OPTIONS``.

    ``PAIMON_FS_OPTIONS`` holds ``k=v`` pairs separated by commas or newlines; explicit
    options win over it.
    """
    env = os.environ.get("PAIMON_FS_OPTIONS", "")
    merged: dict[str, Any] = {}
    if env.strip():
        pairs = [p for p in env.replace("\n", ",").split(",") if p.strip()]
        merged = parse_storage_options(pairs)
    _deep_update(merged, storage_options or {})
    return FileIO(warehouse, merged)


def _deep_update(dst: dict[str, Any], src: dict[str, Any]) -> None:
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _deep_update(dst[k], v)
        else:
            dst[k] = v
