"""polars-avro's Rust decoder (arrow-rs ``arrow-avro``) straight into pyarrow, without polars.

Why: ``polars_avro.read_avro`` is this decoder behind polars' IO-plugin machinery. Importing
polars costs ~0.2-0.3 s of CPU and the round trip through a polars frame ~0.1 s per 100,000
manifest entries; a command that only decodes manifests (``inspect files``) needs neither.
The extension module ``polars_avro._avro_rs`` hands out record batches through the Arrow C
data interface, which pyarrow imports without a copy. The package's ``__init__`` imports
polars, so the extension is loaded from its file under its own name (registered in
``sys.modules``: a later ``import polars_avro`` uses this module; PyO3 modules load once).

The extension's classes are polars-avro's private API: anything unexpected here is reported
as None / an exception, and callers fall back to ``polars_avro.read_avro``.
"""

from __future__ import annotations

import io
import os
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

_NAME = "polars_avro._avro_rs"
_BATCH_ROWS = 32_768  # read_avro's default batch size
_loaded: list[ModuleType | None] = []
_lock = threading.Lock()


def _extension() -> ModuleType | None:
    """``polars_avro._avro_rs``, loaded once without running the package (None if it cannot be)."""
    with _lock:  # two threads loading it would initialise a PyO3 module twice
        if not _loaded:
            try:
                mod = sys.modules.get(_NAME) or _load()
            except (ImportError, OSError):
                mod = None
            _loaded.append(mod if mod is not None and hasattr(mod, "AvroSource") else None)
        return _loaded[0]


def _load() -> ModuleType | None:
    import importlib.machinery
    import importlib.util

    spec = importlib.util.find_spec("polars_avro")  # finds the package without importing it
    for base in (spec.submodule_search_locations or []) if spec is not None else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(base, "_avro_rs" + suffix)
            if not os.path.isfile(path):
                continue
            loader = importlib.machinery.ExtensionFileLoader(_NAME, path)
            found = importlib.util.spec_from_file_location(_NAME, path, loader=loader)
            if found is None:
                continue
            mod = importlib.util.module_from_spec(found)
            loader.exec_module(mod)
            sys.modules[_NAME] = mod
            return mod
    return None


class _Buffer:
    """A source for ``AvroSource``: a context manager giving the bytes as a seekable file,
    rewound on every enter (the reader enters again to rewind)."""

    def __init__(self, raw: bytes) -> None:
        self.file = io.BytesIO(raw)

    def __enter__(self) -> io.BytesIO:
        self.file.seek(0)
        return self.file

    def __exit__(self, *exc: Any) -> None:
        pass


def read_avro_arrow(raws: Sequence[bytes]) -> pa.Table | None:
    """The Avro container files ``raws``, in order, as one Arrow table: what
    ``polars_avro.read_avro(...).to_arrow()`` decodes (the same decoder and options), without
    polars. None when the extension is not available; the decoder's errors are raised."""
    ext = _extension()
    if ext is None:
        return None
    import pyarrow as pa

    sources = [_Buffer(r) for r in raws]
    src = ext.AvroSource([(lambda s=s: s) for s in sources], False, False)  # strict=False, utf8_view=False
    batches = [pa.record_batch(b) for b in src.batch_iter(_BATCH_ROWS, None)]
    if not batches:
        return pa.record_batch(src.schema()).schema.empty_table()
    return pa.Table.from_batches(batches)


__all__ = ["read_avro_arrow"]
