"""Where a bucket's index files (deletion vectors, HASH) live, as Java's ``indexFileFactory``.

* default: ``<table>/index/index-<uuid>-<n>``, ``_EXTERNAL_PATH`` null -- even when
  ``data-file.external-paths`` moves the data files;
* ``index-file-in-data-file-dir`` (1.3+): named by the bucket's data-file path factory, so in
  the bucket directory, or -- with external data paths -- under an external root chosen as
  for a data file, with ``_EXTERNAL_PATH`` set;
* else ``global-index.external-path`` (1.4+): ``<that root>/index-...`` with ``_EXTERNAL_PATH`` set.

A null ``_EXTERNAL_PATH`` resolves to the bucket directory with ``index-file-in-data-file-dir``
and to ``<table>/index`` otherwise (never to the global root, which ALTER may change).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import InvalidInput
from ..io import paths
from ..io.external_paths import check_same_storage, external_paths_for, java_path, scheme_of
from ..io.fileio import join

if TYPE_CHECKING:
    from ..manifest.index_manifest import IndexFileMeta
    from ..table.file_store_table import FileStoreTable

GLOBAL_INDEX_EXTERNAL_PATH = "global-index.external-path"


def index_file_dir(table: FileStoreTable, partition: bytes, bucket: int) -> str:
    """The directory of a bucket's index files whose ``_EXTERNAL_PATH`` is null."""
    if table.options.index_file_in_data_file_dir:
        return paths.bucket_path(table.data_root, paths.partition_dir_of(table.schema, partition), bucket)
    return paths.index_dir(table.path)


def index_file_path(table: FileStoreTable, partition: bytes, bucket: int, meta: IndexFileMeta) -> str:
    return meta.external_path or join(index_file_dir(table, partition, bucket), meta.file_name)


def new_index_file_path(table: FileStoreTable, partition: bytes, bucket: int, name: str) -> tuple[str, str | None]:
    """(path to write a new index file ``name`` to, its ``_EXTERNAL_PATH``)."""
    opts = table.options
    if opts.index_file_in_data_file_dir:
        external = external_paths_for(opts.options, table.file_io.scheme)
        part = paths.partition_dir_of(table.schema, partition)
        if external is None:
            return join(paths.bucket_path(table.data_root, part, bucket), name), None
        path = external.provider(table.relative_bucket_path(part, bucket)).next_path(name)
        return path, path
    root = opts.get(GLOBAL_INDEX_EXTERNAL_PATH)
    if root:
        if not scheme_of(root):
            raise InvalidInput(f"{GLOBAL_INDEX_EXTERNAL_PATH}={root!r} has no scheme (write file:///..., s3://...)")
        check_same_storage(GLOBAL_INDEX_EXTERNAL_PATH, root, table.file_io.scheme)
        path = join(java_path(root), name)
        return path, path
    return join(paths.index_dir(table.path), name), None


__all__ = ["index_file_dir", "index_file_path", "new_index_file_path"]
